// Exact counts of a tree ensemble's fair and unfair points in a box, without splitting it, where
// the trees still undecided in it fall into groups over few features each (trees that share a
// feature, one group). Each group's sums are listed cell by cell (the intervals between its
// trees' thresholds, weighted by their points); the groups are added up in two halves (every
// combination of their cells), the protected copies' differences on one side; one sorted sweep then
// counts, per first-half entry, the second-half sums that put every copy on one side of the
// threshold, or copies on both, and says which cells hold the unfair points.
//
//   witness::Model model = witness::load_model("tests/fixtures/onnx/tree_binary.onnx");
//   witness::Schema schema = witness::load_schema_for(model, "people.toml", "");
//   witness::RawTrees trees = witness::RawTrees::compile(model, schema, nullptr).value();
//   witness::TreeCellCount cells(trees, schema);
//   Eigen::VectorXd lo(schema.size()), hi(schema.size());  // the whole box, then one copy per sex
//   for (int f = 0; f < schema.size(); ++f) lo(f) = schema.feature(f).min, hi(f) = schema.feature(f).max;
//   const int sex = schema.feature_index("sex");
//   std::vector<Eigen::VectorXd> los{lo, lo}, his{hi, hi};
//   los[0](sex) = his[0](sex) = 0.0, los[1](sex) = his[1](sex) = 1.0;
//   std::optional<witness::CellCounts> c = cells.count(los, his);  // nullopt: too many cells, or ties
#pragma once

#include <Eigen/Dense>
#include <optional>
#include <vector>

#include "domain/schema.h"
#include "fairness/complete/trees/raw_trees.h"

namespace witness {

struct CellCounts {
  long double fair = 0.0L, unfair = 0.0L;  // points whose copies all agree, and those where some differ
  // For whom, per feature that an undecided tree tests (empty for the others, whose values are all
  // alike): the unfair points in each of its cells, and each cell's last value (the first starts
  // at the box's low end). The values of one cell are alike too: each holds an equal share.
  std::vector<std::vector<long double>> unfair_by_cell;
  std::vector<std::vector<double>> cell_ends;
  Eigen::VectorXd unfair_point;  // when unfair > 0: a raw point whose copies disagree (protected: copy 0's)
};

class TreeCellCount {
 public:
  TreeCellCount(const RawTrees& trees, const Schema& schema);
  // lo[k], hi[k]: the box with copy k's protected values (the same box otherwise; every
  // non-protected feature integral). nullopt when the trees are not one score, a group has too
  // many cells, the halves too many sums, or some sum lies within rounding of the threshold.
  [[nodiscard]] std::optional<CellCounts> count(const std::vector<Eigen::VectorXd>& lo,
                                                const std::vector<Eigen::VectorXd>& hi) const;

 private:
  const RawTrees& trees_;
  const Schema& schema_;
  double largest_ = 0.0;  // bound on |any sum of leaf weights|
  // Sums at most `low` get the low label, at least `high` the high one (exact sums); labels -1:
  // the rule is not a threshold on the sum.
  double low_ = 0.0, high_ = 0.0;
  int low_label_ = -1, high_label_ = -1;
};

}  // namespace witness
