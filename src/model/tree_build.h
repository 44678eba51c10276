// Private to the tree-file readers (xgboost_json.cpp, lightgbm_text.cpp), not a public API:
// load_model (model/loaders.h) is. Source trees as flat node arrays, turned into IR trees:
//
//   namespace td = witness::tree_detail;
//   const td::Cut c = td::below_float32(0.5F);  // x0 < 0.5 as float32 goes left, NaN too
//   td::RawNode split{.feature = 0, .left = 1, .right = 2, .tests = {{c.mode, c.threshold, true}}};
//   std::vector<td::RawNode> raw{split, td::leaf(1.0), td::leaf(-1.0)};
//   witness::TreeEnsemble te;
//   td::Where where{"m.json", "tree 0", 1, td::kMaxTreeNodes};
//   td::add_tree(te, raw, 0, 0, where);  // te.trees[0]: an Lt node and two leaves
//
// One source node can become several IR test nodes (a set of categories is a chain of interval
// tests, LightGBM's "zero" missing type a band test), whose branches may meet again: IR trees
// are then DAGs, which every consumer of TreeEnsemble handles (children only come later).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"

namespace witness::tree_detail {

// "x is below": for a double x (not NaN), x `mode` threshold; mode is Lt or Leq.
struct Cut {
  TreeEnsemble::Mode mode = TreeEnsemble::Mode::Lt;
  double threshold = 0.0;
};
// The cut equivalent to float32(x) < t, with x rounded to float32 to nearest, ties to even.
Cut below_float32(float t);

inline constexpr int kLeft = -1;   // test targets: the source node's left child,
inline constexpr int kRight = -2;  // its right child, or (>= 0) a later test of the same node

struct Test {
  TreeEnsemble::Mode mode = TreeEnsemble::Mode::Lt;
  double threshold = 0.0;
  bool missing_true = false;  // where NaN goes
  int on_true = kLeft;
  int on_false = kRight;
};

// x is in [lower, upper) in the sense of two cuts: not below `below_lower` (none: unbounded) and
// below `below_upper`.
struct Interval {
  std::optional<Cut> below_lower;
  Cut below_upper;
};
// Tests sending x to `in_side` (kLeft or kRight) when it lies in one of `intervals` (ascending,
// disjoint), to the other side otherwise, and NaN to `nan_side`.
std::vector<Test> interval_chain(const std::vector<Interval>& intervals, int in_side, int nan_side);
// The intervals of the sorted, distinct integers `cats`, one per run of consecutive values, with
// `cut(v)` the cut for "below the integer v".
template <typename CutOf>
std::vector<Interval> category_runs(const std::vector<long long>& cats, CutOf cut) {
  std::vector<Interval> out;
  for (std::size_t i = 0; i < cats.size();) {
    std::size_t j = i;
    while (j + 1 < cats.size() && cats[j + 1] == cats[j] + 1) ++j;
    out.push_back({cut(cats[i]), *cut(cats[j] + 1)});
    i = j + 1;
  }
  return out;
}

struct RawNode {
  bool leaf = false;
  double value = 0.0;  // leaf output
  int feature = 0;
  int left = -1;  // indices into the tree's node array
  int right = -1;
  std::vector<Test> tests;  // tests[0] first
};
inline RawNode leaf(double value) {
  RawNode n;
  n.leaf = true;
  n.value = value;
  return n;
}

// Node budget of one model (IR nodes, all trees together): a few hundred MB of memory.
inline constexpr std::size_t kMaxTreeNodes = 5'000'000;

struct Where {
  std::string file;  // for messages
  std::string tree;  // "tree 3"
  int n_features = 0;
  std::size_t node_budget = 0;  // IR nodes still allowed (all trees together); decremented
};

// Appends the tree rooted at raw[root] to `te`, its leaves contributing to output `target`.
// Throws InputError naming the file and tree for children out of range, nodes reached twice
// (cycles, shared children), features out of range and trees over the node budget.
void add_tree(TreeEnsemble& te, const std::vector<RawNode>& raw, int root, int target, Where& where);

}  // namespace witness::tree_detail
