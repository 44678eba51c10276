#include "fairness/outcome.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/error.h"
#include "fairness/bias.h"

namespace witness {

Rate make_rate(long long k, long long n) {
  Rate r;
  r.k = k;
  r.n = n;
  if (n > 0) {
    r.value = static_cast<double>(k) / static_cast<double>(n);
    std::tie(r.lo, r.hi) = wilson_interval(k, n);
    if (k == 0) r.lo = 0.0;  // the interval's end is exact there; the formula leaves rounding dust
    if (k == n) r.hi = 1.0;
  }
  return r;
}

const std::string& Outcome::name(int label) const {
  static const std::string unknown = "?";
  return label >= 0 && label < static_cast<int>(classes.size()) ? classes[static_cast<std::size_t>(label)] : unknown;
}

std::string Outcome::sentence() const {
  if (!assumed) return fmt::format("favourable outcome: {}", name());
  return fmt::format(
      "favourable outcome: {} (assumed: the model's second class; name the outcome people want with "
      "--favorable)",
      name());
}

Outcome resolve_outcome(const Model& model, const Schema& schema, const std::string& favorable) {
  Outcome o;
  const int count = std::max(2, model.output_width() == 1 ? 2 : model.output_width());
  if (!model.rule.class_labels.empty()) {
    o.classes = model.rule.class_labels;
  } else if (static_cast<int>(schema.label_classes().size()) == count) {
    o.classes = schema.label_classes();
  } else {
    for (int i = 0; i < count; ++i) o.classes.push_back(std::to_string(i));
  }
  o.favorable = std::min(1, static_cast<int>(o.classes.size()) - 1);
  if (favorable.empty()) return o;
  const auto it = std::find(o.classes.begin(), o.classes.end(), favorable);
  if (it == o.classes.end())
    throw InputError(fmt::format("--favorable: '{}' is not a class of the model (classes: {})", favorable,
                                 fmt::join(o.classes, ", ")));
  o.favorable = static_cast<int>(it - o.classes.begin());
  o.assumed = false;
  return o;
}

}  // namespace witness
