#include "fairness/group_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/error.h"
#include "fairness/bias.h"
#include "model/evaluator.h"

namespace witness {
namespace {

Rate rate(long long k, long long n) {
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

// The model's class names, or the schema's, or "0", "1", ...
std::vector<std::string> class_names(const Model& model, const Schema& schema, int count) {
  if (!model.rule.class_labels.empty()) return model.rule.class_labels;
  if (!schema.label_classes().empty()) return schema.label_classes();
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) out.push_back(std::to_string(i));
  return out;
}

template <typename Get>
std::optional<double> spread(const std::vector<GroupRow>& groups, Get get) {
  std::optional<double> lo, hi;
  for (const GroupRow& g : groups) {
    const std::optional<Rate>& r = get(g);
    if (!r || r->n == 0) continue;
    lo = lo ? std::min(*lo, r->value) : r->value;
    hi = hi ? std::max(*hi, r->value) : r->value;
  }
  if (!lo) return std::nullopt;
  return *hi - *lo;
}

}  // namespace

GroupMetrics group_metrics(const Model& model, const Schema& schema, const std::vector<int>& protected_features,
                           const Dataset& rows, const std::string& positive) {
  GroupMetrics out;
  if (rows.rows() == 0 || protected_features.empty()) return out;
  const Evaluation e = evaluate(model, rows.model_inputs(schema));
  const int count = std::max(2, model.output_width() == 1 ? 2 : model.output_width());
  const std::vector<std::string> names = class_names(model, schema, count);
  int pos = std::min(1, static_cast<int>(names.size()) - 1);
  if (!positive.empty()) {
    const auto it = std::find(names.begin(), names.end(), positive);
    if (it == names.end())
      throw InputError(
          fmt::format("--positive: '{}' is not a class of the model ({})", positive, fmt::join(names, ", ")));
    pos = static_cast<int>(it - names.begin());
  }
  out.measured = true;
  out.positive = names[static_cast<std::size_t>(pos)];
  // True labels as the model's class indices.
  std::vector<int> truth;
  if (!rows.has_labels()) {
    out.why_no_truth = "the data has no label column";
  } else if (schema.label_classes().empty() || model.rule.class_labels.empty() ||
             schema.label_classes() == model.rule.class_labels) {
    truth = rows.labels;
  } else {
    for (const int l : rows.labels) {
      const std::string& name = schema.label_classes()[static_cast<std::size_t>(l)];
      const auto it = std::find(names.begin(), names.end(), name);
      if (it == names.end()) {
        out.why_no_truth = fmt::format("the data's label '{}' is not a class of the model", name);
        truth.clear();
        break;
      }
      truth.push_back(static_cast<int>(it - names.begin()));
    }
  }
  struct Counts {
    long long rows = 0, selected = 0, positives = 0, true_pos = 0, negatives = 0, false_pos = 0, correct = 0;
  };
  std::map<std::vector<double>, Counts> by_group;
  for (Eigen::Index i = 0; i < rows.rows(); ++i) {
    std::vector<double> key;
    key.reserve(protected_features.size());
    for (const int f : protected_features) key.push_back(rows.raw(f, i));
    Counts& c = by_group[key];
    const bool selected = e.labels[static_cast<std::size_t>(i)] == pos;
    ++c.rows;
    c.selected += selected;
    if (!truth.empty()) {
      const int t = truth[static_cast<std::size_t>(i)];
      c.correct += t == e.labels[static_cast<std::size_t>(i)];
      if (t == pos) {
        ++c.positives;
        c.true_pos += selected;
      } else {
        ++c.negatives;
        c.false_pos += selected;
      }
    }
  }
  for (const auto& [key, c] : by_group) {
    GroupRow g;
    g.values = key;
    for (std::size_t k = 0; k < key.size(); ++k) {
      const int f = protected_features[k];
      g.group += fmt::format("{}{}={}", k == 0 ? "" : ", ", schema.feature(f).name, schema.display_quoted(f, key[k]));
    }
    g.rows = c.rows;
    g.selection = rate(c.selected, c.rows);
    if (!truth.empty()) {
      g.tpr = rate(c.true_pos, c.positives);
      g.fpr = rate(c.false_pos, c.negatives);
      g.accuracy = rate(c.correct, c.rows);
    }
    out.groups.push_back(std::move(g));
  }
  double lo = 1.0, hi = 0.0;
  for (const GroupRow& g : out.groups) {
    lo = std::min(lo, g.selection.value);
    hi = std::max(hi, g.selection.value);
  }
  out.parity_difference = hi - lo;
  out.parity_ratio = hi > 0 ? lo / hi : 1.0;
  if (!truth.empty()) {
    out.tpr_difference = spread(out.groups, [](const GroupRow& g) -> const std::optional<Rate>& { return g.tpr; });
    out.fpr_difference = spread(out.groups, [](const GroupRow& g) -> const std::optional<Rate>& { return g.fpr; });
    if (out.tpr_difference || out.fpr_difference)
      out.equalized_odds_difference = std::max(out.tpr_difference.value_or(0.0), out.fpr_difference.value_or(0.0));
  }
  return out;
}

}  // namespace witness
