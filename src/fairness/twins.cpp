#include "fairness/twins.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "domain/constraints.h"
#include "fairness/problem.h"
#include "fairness/verdict.h"

namespace witness {
namespace {

// The search: a box of raw values, protected features and their proxies set per combination.
class TwinSearch {
 public:
  TwinSearch(const Schema& schema, const std::vector<int>& protected_features)
      : schema_(schema),
        rules_(schema.constraints()),
        protected_(protected_features),
        follows_(proxy_mask(schema, protected_features)),
        combos_(protected_combinations(schema, protected_features)) {
    for (int f : rules_.features())
      if (!follows_[static_cast<std::size_t>(f)] && rules_.derivation_of(f) == nullptr) split_.push_back(f);
  }

  Twins run(std::int64_t max_boxes) {
    if (combos_.size() < 2) return Twins::NoTwins;
    Eigen::VectorXd lo(schema_.size()), hi(schema_.size());
    for (int f = 0; f < schema_.size(); ++f) {
      const Feature& feat = schema_.feature(f);
      lo(f) = feat.integral() ? std::ceil(feat.min) : feat.min;
      hi(f) = feat.integral() ? std::floor(feat.max) : feat.max;
      if (lo(f) > hi(f)) return Twins::NoPerson;
    }
    if (rules_.empty()) return Twins::Exist;
    // First whether any box holds twins; then, with none, whether it holds anyone at all (the
    // boxes where one combination was still undecided), for the answer's words only.
    std::vector<Box> twins = {{lo, hi}}, lone;
    bool someone = false, gave_up = false;
    std::int64_t boxes = 0;
    while (!twins.empty()) {
      if (boxes++ == max_boxes) return Twins::Unknown;
      Box box = std::move(twins.back());
      twins.pop_back();
      const auto [always, maybe] = truths(box);
      if (always >= 2) return Twins::Exist;
      if (always + maybe <= 1) {
        someone = someone || always == 1;
        if (maybe == 1) lone.push_back(std::move(box));
        continue;
      }
      if (valid_at(box) >= 2) return Twins::Exist;
      if (!split(std::move(box), twins)) gave_up = true;  // undecided on a box that cannot be cut
    }
    if (gave_up) return Twins::Unknown;
    while (!someone && !lone.empty() && boxes++ < max_boxes) {
      Box box = std::move(lone.back());
      lone.pop_back();
      const auto [always, maybe] = truths(box);
      someone = always > 0 || (maybe > 0 && valid_at(box) > 0);
      if (!someone && maybe > 0 && !split(std::move(box), lone)) someone = true;  // cannot tell: say less
    }
    return someone || !lone.empty() ? Twins::NoTwins : Twins::NoPerson;
  }

 private:
  struct Box {
    Eigen::VectorXd lo, hi;
  };

  // How many combinations are valid at every point of the box, and how many at some points maybe.
  [[nodiscard]] std::pair<int, int> truths(const Box& box) const {
    int always = 0, maybe = 0;
    for (std::size_t c = 0; c < combos_.size(); ++c) {
      const Truth t = over_box(box.lo, box.hi, c);
      always += t == Truth::Always ? 1 : 0;
      maybe += t == Truth::Maybe ? 1 : 0;
    }
    return {always, maybe};
  }

  // The box cut in two across its widest constrained feature, onto `to`; false when none is left.
  bool split(Box box, std::vector<Box>& to) const {
    const int f = widest(box.lo, box.hi);
    if (f < 0) return false;
    const Feature& feat = schema_.feature(f);
    const double a = box.lo(f), b = box.hi(f);
    const double mid = feat.integral() ? std::floor((a + b) / 2.0) : a + (b - a) / 2.0;
    Box right = box;
    box.hi(f) = mid;
    right.lo(f) = feat.integral() ? mid + 1.0 : mid;
    to.push_back(std::move(right));
    to.push_back(std::move(box));
    return true;
  }

  // The box with combination c: protected values set, every derived feature narrowed to what its
  // source's range reaches (proxies to what the combination makes them).
  Truth over_box(Eigen::VectorXd a, Eigen::VectorXd b, std::size_t c) const {
    set_protected(a, b, c);
    if (!rules_.narrow(a, b, std::vector<bool>(static_cast<std::size_t>(schema_.size()), false))) return Truth::Never;
    return rules_.over_box(a, b);
  }

  void set_protected(Eigen::VectorXd& a, Eigen::VectorXd& b, std::size_t c) const {
    for (int f = 0; f < schema_.size(); ++f) {
      if (!follows_[static_cast<std::size_t>(f)]) continue;
      a(f) = schema_.feature(f).min;
      b(f) = schema_.feature(f).max;
    }
    for (std::size_t k = 0; k < protected_.size(); ++k)
      a(protected_[k]) = b(protected_[k]) = combos_[c](static_cast<Eigen::Index>(k));
  }

  // How many combinations make the box's middle point a valid person (derived features derived).
  [[nodiscard]] int valid_at(const Box& box) const {
    Eigen::VectorXd x = box.lo + (box.hi - box.lo) / 2.0;
    for (int f = 0; f < schema_.size(); ++f)
      if (schema_.feature(f).integral()) x(f) = std::floor(x(f));
    int n = 0;
    for (std::size_t c = 0; c < combos_.size(); ++c) {
      Eigen::VectorXd p = x;
      for (std::size_t k = 0; k < protected_.size(); ++k) p(protected_[k]) = combos_[c](static_cast<Eigen::Index>(k));
      rules_.derive(p);
      n += rules_.satisfied(p) ? 1 : 0;
    }
    return n;
  }

  // The constrained feature (not protected, not derived) with the most values left.
  int widest(const Eigen::VectorXd& a, const Eigen::VectorXd& b) const {
    int best = -1;
    double most = 0.0;
    for (int f : split_) {
      const Feature& feat = schema_.feature(f);
      if (!(a(f) < b(f))) continue;
      if (!feat.integral() && !(a(f) + (b(f) - a(f)) / 2.0 > a(f))) continue;  // the last bit
      const double n = feat.integral() ? b(f) - a(f) + 1.0 : (b(f) - a(f)) / (feat.max - feat.min) * 1e6;
      if (n > most) most = n, best = f;
    }
    return best;
  }

  const Schema& schema_;
  const Constraints& rules_;
  std::vector<int> protected_;
  std::vector<bool> follows_;  // protected, or a proxy of one
  std::vector<Eigen::VectorXd> combos_;
  std::vector<int> split_;
};

}  // namespace

Twins find_twins(const Schema& schema, const std::vector<int>& protected_features, std::int64_t max_boxes) {
  return TwinSearch(schema, protected_features).run(max_boxes);
}

std::string vacuity_reason(Twins twins, const Schema& schema, const std::vector<int>& protected_features) {
  if (twins == Twins::NoPerson) return "no person in the domain satisfies the schema's rules";
  if (twins != Twins::NoTwins) return "";
  std::vector<std::string> names;
  names.reserve(protected_features.size());
  for (int f : protected_features) names.push_back(schema.feature(f).name);
  return fmt::format("no two people in the domain differ only in {}", fmt::join(names, " and "));
}

}  // namespace witness
