// RawTrees seen cell by cell: which features a tree still tests inside a box, where those tests
// change, and the labels of sums of leaf weights (for TreeCellCount).
#include <algorithm>
#include <cmath>

#include "fairness/raw_trees.h"

namespace witness {

RawTrees::TreeInBox RawTrees::in_box(std::size_t t, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi,
                                     std::vector<std::vector<double>>& breaks) const {
  TreeInBox out;
  const Tree& tree = trees_[t];
  std::vector<int> stack{0};
  while (!stack.empty()) {
    const TreeNode& n = tree.nodes[static_cast<std::size_t>(stack.back())];
    stack.pop_back();
    if (n.split < 0) {
      out.leaf = leaf_weights_[static_cast<std::size_t>(n.leaf)];
      continue;
    }
    const Split& s = splits_[static_cast<std::size_t>(n.split)];
    const Truth truth = test(s, lo, hi);
    if (truth != Truth::Never) stack.push_back(n.true_child);
    if (truth != Truth::Always) stack.push_back(n.false_child);
    if (truth != Truth::Maybe) continue;
    const int f = s.feature;
    if (std::find(out.features.begin(), out.features.end(), f) == out.features.end()) out.features.push_back(f);
    std::vector<double>& b = breaks[static_cast<std::size_t>(f)];
    if (s.set < 0) {
      b.push_back(std::floor(s.cut));  // an integer v passes v <= cut iff v <= floor(cut)
      continue;
    }
    const auto& p = set_prefix_[static_cast<std::size_t>(s.set)];
    const double base = set_base_[static_cast<std::size_t>(s.set)];
    for (auto i = static_cast<std::size_t>(lo(f) - base); i < static_cast<std::size_t>(hi(f) - base); ++i)
      if (p[i + 1] - p[i] != p[i + 2] - p[i + 1]) b.push_back(base + static_cast<double>(i));
  }
  return out;
}

double RawTrees::tree_value(std::size_t t, const Eigen::VectorXd& point) const {
  const Tree& tree = trees_[t];
  int id = 0;
  for (;;) {
    const TreeNode& n = tree.nodes[static_cast<std::size_t>(id)];
    if (n.split < 0) return leaf_weights_[static_cast<std::size_t>(n.leaf)];
    // A box of one point: every split is Always or Never.
    const bool pass = test(splits_[static_cast<std::size_t>(n.split)], point, point) == Truth::Always;
    id = pass ? n.true_child : n.false_child;
  }
}

int RawTrees::label_of_sums(double lo, double hi) const {
  BoxScores s;
  s.lo = {lo * scale_ + base_[0]};
  s.hi = {hi * scale_ + base_[0]};
  if (binary_pair_) {
    const double l = s.lo[0], h = s.hi[0];
    s.lo = {binary_total_ - h, l};
    s.hi = {binary_total_ - l, h};
  }
  return label(s);
}

double RawTrees::largest_sum() const {
  double total = 0.0;
  for (const Tree& tree : trees_) {
    double most = 0.0;
    for (const TreeNode& n : tree.nodes)
      if (n.split < 0) most = std::max(most, std::abs(leaf_weights_[static_cast<std::size_t>(n.leaf)]));
    total += most;
  }
  return total * (1.0 + 0x1p-40);
}

}  // namespace witness
