#include "fairness/valid_combinations.h"

#include <algorithm>
#include <utility>

namespace witness {

ValidCombinations::ValidCombinations(const Schema& schema, std::vector<int> protected_features,
                                     std::vector<Eigen::VectorXd> combos)
    : schema_(schema), protected_(std::move(protected_features)), combos_(std::move(combos)) {
  const Constraints& cs = schema.constraints();
  std::vector<bool> used(static_cast<std::size_t>(schema.size()), false);
  for (int f : cs.features()) used[static_cast<std::size_t>(f)] = true;
  for (int f : protected_) used[static_cast<std::size_t>(f)] = false;
  // A derived feature is narrowed to what its source reaches: splitting the source decides it.
  for (const DerivedFeature& d : cs.derived())
    if (used[static_cast<std::size_t>(d.source)]) used[static_cast<std::size_t>(d.target)] = false;
  for (int f = 0; f < schema.size(); ++f)
    if (used[static_cast<std::size_t>(f)]) features_.push_back(f);
}

std::vector<Truth> ValidCombinations::over_box(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) const {
  std::vector<Truth> out(combos_.size(), Truth::Always);
  if (!constrained()) return out;
  Eigen::VectorXd a = lo, b = hi;
  for (std::size_t c = 0; c < combos_.size(); ++c) {
    for (std::size_t k = 0; k < protected_.size(); ++k)
      a(protected_[k]) = b(protected_[k]) = combos_[c](static_cast<Eigen::Index>(k));
    out[c] = schema_.constraints().over_box(a, b);
  }
  return out;
}

bool ValidCombinations::valid(const Eigen::VectorXd& raw, std::size_t combo) const {
  if (!constrained()) return true;
  Eigen::VectorXd x = raw;
  for (std::size_t k = 0; k < protected_.size(); ++k) x(protected_[k]) = combos_[combo](static_cast<Eigen::Index>(k));
  return schema_.constraints().satisfied(x);
}

int ValidCombinations::widest_constrained(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) const {
  int best = -1;
  double most = 0.0;
  for (int f : features_) {
    const Feature& feat = schema_.feature(f);
    const double n = feat.integral() ? hi(f) - lo(f) + 1.0 : (hi(f) - lo(f)) / (feat.max - feat.min) * 1e6;
    if (lo(f) < hi(f) && n > most) most = n, best = f;
  }
  return best;
}

}  // namespace witness
