// Which protected combinations make a person who can exist, over a box of the other features: the
// schema's constraints as the complete engine sees them (a combination sets the protected features
// and their proxies; a box point is valid when some combination makes it so).
//
//   #include "fairness/problem.h"  // protected_combinations
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/adult_constrained.toml");
//   const std::vector<int> prot = {schema.feature_index("sex")};
//   witness::ValidCombinations valid(schema, prot, witness::protected_combinations(schema, prot));
//   Eigen::VectorXd lo(schema.size()), hi(schema.size());  // a box of raw values
//   for (int f = 0; f < schema.size(); ++f) lo(f) = schema.feature(f).min, hi(f) = schema.feature(f).max;
//   std::vector<witness::Truth> t = valid.over_box(lo, hi);  // per combination: Always / Maybe / Never
//   bool ok = valid.valid(lo, 0);                             // the point lo with combination 0
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "domain/constraints.h"
#include "domain/schema.h"

namespace witness {

class ValidCombinations {
 public:
  ValidCombinations(const Schema& schema, std::vector<int> protected_features, std::vector<Eigen::VectorXd> combos);

  // False when the schema has no constraints (then every combination is Always valid everywhere).
  [[nodiscard]] bool constrained() const { return !schema_.constraints().empty(); }
  // Per combination, the constraints over every point of the box [lo, hi] (protected entries unused).
  [[nodiscard]] std::vector<Truth> over_box(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) const;
  // Whether the point `raw` (protected entries unused) with combination `combo` satisfies them.
  [[nodiscard]] bool valid(const Eigen::VectorXd& raw, std::size_t combo) const;
  // Non-protected features that some constraint mentions, but for derived ones (which follow their
  // sources): where a box is split to decide the constraints.
  [[nodiscard]] const std::vector<int>& constrained_features() const { return features_; }
  // The constrained feature with the most values left in the box (reals by their share of the
  // range), -1 when none can be split: where both engines cut to decide the constraints.
  [[nodiscard]] int widest_constrained(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) const;

 private:
  const Schema& schema_;
  std::vector<int> protected_;
  std::vector<Eigen::VectorXd> combos_;
  std::vector<int> features_;
};

}  // namespace witness
