#include "model/tree_build.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/error.h"

namespace witness::tree_detail {

using Mode = TreeEnsemble::Mode;

Cut below_float32(float t) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // float32(x) is +inf from the midpoint between FLT_MAX and 2^128 up (FLT_MAX is odd, so the
  // midpoint itself rounds away to the even 2^128, that is to infinity).
  if (std::isinf(t)) return t > 0 ? Cut{Mode::Lt, 0x1.ffffffp127} : Cut{Mode::Lt, -kInf};
  // float32(x) < t iff float32(x) <= p, the float below t, iff x is below the midpoint m of p and
  // t; m itself rounds to whichever of p and t is even. Adjacent floats' bit patterns differ by
  // one, so t's lowest bit says which (also across binades and at zero). m is exact in a double.
  const float p = std::nextafter(t, -std::numeric_limits<float>::infinity());
  const double lo = std::isinf(p) ? -0x1p128 : static_cast<double>(p);  // below -FLT_MAX: -2^128
  const double m = (lo + static_cast<double>(t)) / 2.0;
  const bool t_odd = (std::bit_cast<std::uint32_t>(t) & 1U) != 0U;
  return {t_odd ? Mode::Leq : Mode::Lt, m};
}

std::vector<Test> interval_chain(const std::vector<Interval>& intervals, int in_side, int nan_side) {
  const int out_side = in_side == kLeft ? kRight : kLeft;
  std::vector<Test> tests;
  if (intervals.empty()) {  // nothing is in: every number goes out (x < -inf never holds)
    tests.push_back({Mode::Lt, -std::numeric_limits<double>::infinity(), true, nan_side, out_side});
    return tests;
  }
  // Ascending intervals: below interval r's lower end means outside every later one too, so
  // the chain is "below lower? out : (below upper? in : next interval)".
  std::vector<int> first(intervals.size());
  int k = 0;
  for (std::size_t r = 0; r < intervals.size(); ++r) {
    first[r] = k;
    k += intervals[r].below_lower ? 2 : 1;
  }
  for (std::size_t r = 0; r < intervals.size(); ++r) {
    const Interval& iv = intervals[r];
    const int next = r + 1 < intervals.size() ? first[r + 1] : out_side;
    if (iv.below_lower) {
      // NaN: straight out, or on to the upper test, which sends it in.
      tests.push_back({iv.below_lower->mode, iv.below_lower->threshold, nan_side == out_side, out_side,
                       static_cast<int>(tests.size()) + 1});
    }
    tests.push_back({iv.below_upper.mode, iv.below_upper.threshold, nan_side == in_side, in_side, next});
  }
  return tests;
}

void add_tree(TreeEnsemble& te, const std::vector<RawNode>& raw, int root, int target, Where& where) {
  auto fail = [&](const std::string& what) { throw InputError(where.file, where.tree, what); };
  const auto n = static_cast<int>(raw.size());
  if (root < 0 || root >= n) fail(fmt::format("root {} is not one of the tree's {} nodes", root, n));
  // Pre-order (a node's tests, its left subtree, its right subtree) puts children after parents.
  std::vector<int> start(raw.size(), -1);
  std::vector<char> seen(raw.size(), 0);
  std::vector<int> order;
  std::vector<int> stack{root};
  seen[static_cast<std::size_t>(root)] = 1;
  std::size_t count = 0;
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    const RawNode& nd = raw[static_cast<std::size_t>(i)];
    start[static_cast<std::size_t>(i)] = static_cast<int>(count);
    order.push_back(i);
    count += nd.leaf ? 1 : nd.tests.size();
    if (count > where.node_budget) {
      fail(fmt::format("the trees need more than {} nodes in all; witness refuses models this large", kMaxTreeNodes));
    }
    if (nd.leaf) continue;
    for (const int c : {nd.right, nd.left}) {
      if (c < 0 || c >= n) fail(fmt::format("node {} has child {}; the tree has nodes 0 to {}", i, c, n - 1));
      if (seen[static_cast<std::size_t>(c)] != 0) {
        fail(fmt::format("node {} is reached twice (a cycle, or a child shared by two parents)", c));
      }
      seen[static_cast<std::size_t>(c)] = 1;
      stack.push_back(c);
    }
  }
  TreeEnsemble::Tree tree;
  tree.nodes.resize(count);
  for (const int i : order) {
    const RawNode& nd = raw[static_cast<std::size_t>(i)];
    const int s = start[static_cast<std::size_t>(i)];
    if (nd.leaf) {
      if (!std::isfinite(nd.value)) fail(fmt::format("leaf {} has the value {}", i, nd.value));
      tree.leaves.push_back({s, target, nd.value});
      continue;
    }
    if (nd.feature < 0 || nd.feature >= where.n_features) {
      fail(fmt::format("node {} tests feature {}, but the model has {} features", i, nd.feature, where.n_features));
    }
    if (nd.tests.empty()) throw InternalError("tree_detail::add_tree: a split without tests");
    const int count_tests = static_cast<int>(nd.tests.size());
    for (int j = 0; j < count_tests; ++j) {
      const Test& t = nd.tests[static_cast<std::size_t>(j)];
      auto resolve = [&](int to) {
        if (to == kLeft) return start[static_cast<std::size_t>(nd.left)];
        if (to == kRight) return start[static_cast<std::size_t>(nd.right)];
        if (to <= j || to >= count_tests) throw InternalError("tree_detail::add_tree: a test jumps backwards");
        return s + to;
      };
      if (std::isnan(t.threshold)) fail(fmt::format("node {} has a NaN threshold", i));
      TreeEnsemble::Node& out = tree.nodes[static_cast<std::size_t>(s) + static_cast<std::size_t>(j)];
      out.mode = t.mode;
      out.feature = nd.feature;
      out.threshold = t.threshold;
      out.missing_tracks_true = t.missing_true;
      out.true_child = resolve(t.on_true);
      out.false_child = resolve(t.on_false);
    }
  }
  where.node_budget -= count;
  te.trees.push_back(std::move(tree));
}

}  // namespace witness::tree_detail
