// A tree-ensemble model seen from the schema's raw features: every split becomes a test of one raw
// feature (a cut, or a set of values for small integer domains), found exactly through the model's
// own preprocessing (scalers, one-hot, a pipeline's encoders), so that a box of raw values decides
// each split as true, false or either. Over a box it bounds the ensemble's outputs per target and
// says which cut would settle the widest undecided tree.
//
//   witness::Model model = witness::load_model("tests/fixtures/onnx/tree_binary.onnx");
//   witness::Schema schema = witness::load_schema_for(model, "people.toml", "");
//   std::string why;
//   std::optional<witness::RawTrees> trees = witness::RawTrees::compile(model, schema, &why);
//   Eigen::VectorXd lo(schema.size()), hi(schema.size());
//   for (int f = 0; f < schema.size(); ++f) lo(f) = schema.feature(f).min, hi(f) = schema.feature(f).max;
//   witness::BoxScores s = trees->scores(lo, hi);   // s.lo / s.hi per output; s.cut_feature to split
//   int label = trees->label(s);                     // -1 while the box is not decided
#pragma once

#include <Eigen/Dense>
#include <optional>
#include <string>
#include <vector>

#include "domain/constraints.h"
#include "domain/schema.h"
#include "model/model.h"

namespace witness {

// What a box gives the ensemble: bounds per output of the tree-ensemble node, whether every tree
// reaches one leaf (then the label is exact), and a cut that splits an undecided tree.
struct BoxScores {
  std::vector<double> lo, hi;
  bool leaves_only = true;
  int open_trees = 0;       // trees that reach more than one leaf in the box
  int cut_feature = -1;     // raw feature of the chosen undecided split (-1: none)
  double cut = 0.0;         // split the box into (feature <= cut) and (feature > cut)
  double cut_weight = 0.0;  // the spread of the tree it settles (largest wins)
};

class RawTrees {
 public:
  // nullopt, with the reason in *why, when the model has no tree-ensemble node, reads it through
  // something other than per-feature preprocessing, or decides on it in a way bounds cannot follow.
  static std::optional<RawTrees> compile(const Model& model, const Schema& schema, std::string* why);

  // Bounds over the raw box [lo, hi] (inclusive; real features by value, others by code).
  [[nodiscard]] BoxScores scores(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) const;
  // The label every point of the box gets, or -1 when the bounds leave it open.
  [[nodiscard]] int label(const BoxScores& s) const;
  // Whether some tree may test one of `features` (set by watch()) inside the box (false: they
  // cannot change any output there), and a cut of another feature on the way to such a test (its
  // first undecided ancestor, shallowest over the trees; -1 when every such test is reached for sure).
  struct Reach {
    bool reads = false;
    int cut_feature = -1;
    double cut = 0.0;
  };
  void watch(const std::vector<bool>& features);
  [[nodiscard]] Reach reaches_watched(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) const;
  // How every split that reads one of `features` tests the point: two points with the same
  // fingerprint differ in no output, whatever the other features are.
  [[nodiscard]] std::vector<char> fingerprint(const Eigen::VectorXd& point, const std::vector<bool>& features) const;
  // Features some split reads.
  [[nodiscard]] const std::vector<bool>& read_features() const { return read_; }
  [[nodiscard]] std::size_t split_count() const { return splits_.size(); }

  // One score (a binary classifier's): what counting a box by cells needs (TreeCellCount).
  [[nodiscard]] bool single_score() const { return n_targets_ == 1; }
  [[nodiscard]] std::size_t tree_count() const { return trees_.size(); }
  // Tree t inside the box (raw_trees_cells.cpp): the features its reachable undecided splits
  // test (none: one leaf, whose weight is `leaf`), and per feature the values v after which the
  // truth of such a split may change (cells (.., v] and (v, ..); integer features only).
  struct TreeInBox {
    double leaf = 0.0;
    std::vector<int> features;
  };
  [[nodiscard]] TreeInBox in_box(std::size_t t, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi,
                                 std::vector<std::vector<double>>& breaks) const;
  // The weight of the leaf tree t sends the raw point to (one score).
  [[nodiscard]] double tree_value(std::size_t t, const Eigen::VectorXd& point) const;
  // tree_value at every cell of a grid, added to values[cell * stride + offset]: axis i is feature
  // features[i], its cells starting at starts[i] (a cell is tested at its start), cell = sum of
  // digit i x the product of the earlier axes' cell counts (the first fastest); other features as
  // in `point`. One walk of the tree, the cells parted at each split, instead of one per cell.
  void add_over_cells(std::size_t t, const Eigen::VectorXd& point, const std::vector<int>& features,
                      const std::vector<std::vector<double>>& starts, std::vector<double>& values, std::size_t stride,
                      std::size_t offset) const;
  // The label of every sum of the trees' weights in [lo, hi] (before averaging and base values),
  // -1 when it is not one; and a bound on the largest such sum's magnitude.
  [[nodiscard]] int label_of_sums(double lo, double hi) const;
  [[nodiscard]] double largest_sum() const;

  // A test of one raw feature: true iff (v <= cut) == below, or v's code is in the set.
  struct Split {
    int feature = -1;  // -1: the same for every input (`constant`)
    bool constant = false;
    bool below = true;
    double cut = 0.0;
    int set = -1;  // index into set_prefix_ (small integer domains whose test is not one cut)
  };

 private:
  struct TreeNode {
    int split = -1;  // -1: leaf
    int true_child = -1, false_child = -1;
    int leaf = -1;  // leaf: offset of its n_targets weights in leaf_weights_
  };
  struct Tree {
    std::vector<TreeNode> nodes;
    std::vector<char> watched_below;  // per node: a watched feature is tested in its subtree
    double spread = 0.0;              // largest minus smallest leaf weight, over targets
  };
  [[nodiscard]] Truth test(const Split& s, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) const;

  std::vector<Split> splits_;
  std::vector<std::vector<int>> set_prefix_;  // per set split: count of true codes below each code
  std::vector<double> set_base_;              // per set split: the feature's smallest code
  std::vector<Tree> trees_;
  std::vector<double> leaf_weights_;
  std::vector<bool> read_;
  std::vector<bool> watched_;
  const Model* model_ = nullptr;
  int ensemble_node_ = -1;
  std::vector<int> post_nodes_;  // nodes between the ensemble and the decision rule, in order
  int n_targets_ = 1;            // targets the trees add to
  double scale_ = 1.0;           // 1 / trees for an average
  std::vector<double> base_;
  bool binary_pair_ = false;  // outputs [total - s, s]: one score for a binary classifier
  double binary_total_ = 0.0;
};

}  // namespace witness
