// RawTrees seen cell by cell: which features a tree still tests inside a box, where those tests
// change, and the labels of sums of leaf weights (for TreeCellCount).
#include <algorithm>
#include <cmath>

#include "fairness/complete/trees/raw_trees.h"

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

void RawTrees::add_over_cells(std::size_t t, const Eigen::VectorXd& point, const std::vector<int>& features,
                              const std::vector<std::vector<double>>& starts, std::vector<double>& values,
                              std::size_t stride, std::size_t offset) const {
  const Tree& tree = trees_[t];
  const std::size_t axes = features.size();
  std::vector<std::size_t> step(axes, 1);
  for (std::size_t i = 1; i < axes; ++i) step[i] = step[i - 1] * starts[i - 1].size();
  std::vector<int> axis_of(static_cast<std::size_t>(point.size()), -1);
  for (std::size_t i = 0; i < axes; ++i) axis_of[static_cast<std::size_t>(features[i])] = static_cast<int>(i);
  Eigen::VectorXd p = point;
  // Per axis, the cells still reaching the node walked (digits).
  std::vector<std::vector<std::size_t>> cells(axes);
  for (std::size_t i = 0; i < axes; ++i) {
    cells[i].resize(starts[i].size());
    for (std::size_t d = 0; d < cells[i].size(); ++d) cells[i][d] = d;
  }
  std::vector<std::size_t> digit(axes);
  auto walk = [&](auto&& self, int id) -> void {
    const TreeNode& n = tree.nodes[static_cast<std::size_t>(id)];
    if (n.split < 0) {  // every combination of the cells left gets this leaf
      const double w = leaf_weights_[static_cast<std::size_t>(n.leaf)];
      std::fill(digit.begin(), digit.end(), 0);
      while (true) {
        std::size_t cell = 0;
        for (std::size_t i = 0; i < axes; ++i) cell += cells[i][digit[i]] * step[i];
        values[cell * stride + offset] += w;
        std::size_t i = 0;
        for (; i < axes; ++i) {
          if (++digit[i] < cells[i].size()) break;
          digit[i] = 0;
        }
        if (i == axes) return;
      }
    }
    const Split& s = splits_[static_cast<std::size_t>(n.split)];
    const int ax = s.constant ? -1 : axis_of[static_cast<std::size_t>(s.feature)];
    if (ax < 0) {  // decided for the whole grid
      self(self, test(s, p, p) == Truth::Always ? n.true_child : n.false_child);
      return;
    }
    const auto a = static_cast<std::size_t>(ax);
    std::vector<std::size_t> all = std::move(cells[a]), pass, fail;
    for (const std::size_t d : all) {
      p(s.feature) = starts[a][d];
      (test(s, p, p) == Truth::Always ? pass : fail).push_back(d);
    }
    for (auto [part, child] : {std::pair{&pass, n.true_child}, std::pair{&fail, n.false_child}}) {
      if (part->empty()) continue;
      cells[a] = std::move(*part);
      self(self, child);
    }
    cells[a] = std::move(all);
  };
  walk(walk, 0);
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
