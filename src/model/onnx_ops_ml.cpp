// ONNX loader: the ai.onnx.ml ops: TreeEnsembleClassifier/Regressor, TreeEnsemble (ai.onnx.ml 5),
// LinearClassifier/Regressor
// and Scaler (ZipMap is an alias, in the dispatch). See onnx_internal.h.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "model/onnx_internal.h"

namespace witness::onnx_detail {

// ---------------------------------------------------------------------------------------------
// ai.onnx.ml

Value Loader::features(const Ctx& c, int slot) {
  Value x = dyn(get(c, slot), c.where);
  const bool ok = x.batched ? x.dims.size() <= 1 : (x.dims.size() == 1 || (x.dims.size() == 2 && x.dims[0] == 1));
  if (!ok) {
    fail(c.where, fmt::format("expected input X of shape [N, features], got per-row shape {}", dims_str(x.dims)));
  }
  return x;
}

namespace {

// The ai.onnx.ml 1-3 tree ensembles' node attributes, as read (sizes checked by build_trees).
struct NodeArrays {
  std::vector<std::int64_t> tree_ids, node_ids, feature_ids, true_ids, false_ids, missing;
  std::vector<std::string> modes;
  std::vector<double> thresholds;
};

// Modes first: they decide which nodes have children.
std::vector<TreeEnsemble::Mode> node_modes(const Loader& L, const Loader::Ctx& c, const NodeArrays& a) {
  const auto& modes = a.modes;
  const auto& tree_ids = a.tree_ids;
  const auto& node_ids = a.node_ids;
  const std::size_t n = modes.size();
  std::vector<TreeEnsemble::Mode> mode(n, TreeEnsemble::Mode::Leaf);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& m = modes[i];
    if (m == "BRANCH_LEQ") {
      mode[i] = TreeEnsemble::Mode::Leq;
    } else if (m == "BRANCH_LT") {
      mode[i] = TreeEnsemble::Mode::Lt;
    } else if (m == "BRANCH_GTE") {
      mode[i] = TreeEnsemble::Mode::Geq;
    } else if (m == "BRANCH_GT") {
      mode[i] = TreeEnsemble::Mode::Gt;
    } else if (m == "BRANCH_EQ") {
      mode[i] = TreeEnsemble::Mode::Eq;
    } else if (m == "BRANCH_NEQ") {
      mode[i] = TreeEnsemble::Mode::Neq;
    } else if (m != "LEAF") {
      L.fail(c.where, fmt::format("attribute nodes_modes[{}] is '{}' (tree {} node {}; expected BRANCH_LEQ, BRANCH_LT, "
                                  "BRANCH_GTE, BRANCH_GT, BRANCH_EQ, BRANCH_NEQ or LEAF)",
                                  i, m.substr(0, 60), tree_ids[i], node_ids[i]));
    }
  }
  return mode;
}

// One tree from its nodes' attribute positions, renumbered in pre-order (every child after its
// parent, as the IR requires); `renumber` maps ONNX node ids to the IR's.
TreeEnsemble::Tree one_tree(const Loader& L, const Loader::Ctx& c, const NodeArrays& a,
                            const std::vector<TreeEnsemble::Mode>& mode, const std::vector<std::size_t>& members,
                            int n_features, std::map<std::int64_t, int>& renumber) {
  const auto& tree_ids = a.tree_ids;
  const auto& node_ids = a.node_ids;
  const auto& feature_ids = a.feature_ids;
  const auto& true_ids = a.true_ids;
  const auto& false_ids = a.false_ids;
  const auto& missing = a.missing;
  const auto& thresholds = a.thresholds;
  const std::string tw = fmt::format("tree {}", tree_ids[members[0]]);
  std::map<std::int64_t, std::size_t> local;  // node id -> attribute position
  for (const std::size_t i : members) {
    if (!local.emplace(node_ids[i], i).second) L.fail(c.where, fmt::format("{} has node {} twice", tw, node_ids[i]));
  }
  std::map<std::size_t, std::size_t> parent;  // attribute position -> its parent's
  auto child = [&](std::size_t i, std::int64_t id) {
    const auto f = local.find(id);
    if (f == local.end())
      L.fail(c.where, fmt::format("{} node {} has child {}, which does not exist", tw, node_ids[i], id));
    const auto [q, inserted] = parent.emplace(f->second, i);
    if (!inserted && q->second != i)
      L.fail(c.where, fmt::format("{} node {} has two parents; expected a tree", tw, id));
    return f->second;
  };
  std::map<std::size_t, std::pair<std::size_t, std::size_t>> kids;
  for (const std::size_t i : members) {
    if (mode[i] != TreeEnsemble::Mode::Leaf) kids[i] = {child(i, true_ids[i]), child(i, false_ids[i])};
  }
  std::vector<std::size_t> roots;
  for (const std::size_t i : members) {
    if (parent.count(i) == 0) roots.push_back(i);
  }
  if (roots.size() != 1) L.fail(c.where, fmt::format("{} has {} roots; expected one", tw, roots.size()));
  // Pre-order numbering puts every child after its parent, as the IR requires.
  std::map<std::size_t, int> index;
  std::vector<std::size_t> order;
  std::vector<std::size_t> stack{roots[0]};
  while (!stack.empty()) {
    const std::size_t i = stack.back();
    stack.pop_back();
    if (index.count(i) != 0) continue;  // both branches to one child
    index[i] = static_cast<int>(order.size());
    order.push_back(i);
    if (const auto k = kids.find(i); k != kids.end()) {
      stack.push_back(k->second.second);
      stack.push_back(k->second.first);
    }
  }
  if (order.size() != members.size()) {
    L.fail(c.where, fmt::format("{} has nodes that its root does not reach (a cycle?)", tw));
  }
  TreeEnsemble::Tree tree;
  for (const std::size_t i : order) {
    TreeEnsemble::Node nd;
    nd.mode = mode[i];
    if (nd.mode != TreeEnsemble::Mode::Leaf) {
      if (feature_ids[i] < 0 || feature_ids[i] >= n_features) {
        L.fail(c.where, fmt::format("{} node {} tests feature {}, but the input has {}", tw, node_ids[i],
                                    feature_ids[i], n_features));
      }
      nd.feature = static_cast<int>(feature_ids[i]);
      nd.threshold = thresholds.empty() ? 0.0 : thresholds[i];
      nd.true_child = index[kids[i].first];
      nd.false_child = index[kids[i].second];
      nd.missing_tracks_true = !missing.empty() && missing[i] != 0;
    }
    tree.nodes.push_back(nd);
    renumber[node_ids[i]] = index[i];
  }
  return tree;
}

}  // namespace

std::shared_ptr<TreeEnsemble> Loader::build_trees(const Ctx& c, const char* prefix, int n_features) const {
  NodeArrays a;
  a.tree_ids = attr_ints(c, "nodes_treeids");
  a.node_ids = attr_ints(c, "nodes_nodeids");
  a.feature_ids = attr_ints(c, "nodes_featureids");
  a.modes = attr_strings(c, "nodes_modes");
  a.true_ids = attr_ints(c, "nodes_truenodeids");
  a.false_ids = attr_ints(c, "nodes_falsenodeids");
  a.missing = attr_flags(c, "nodes_missing_value_tracks_true");
  a.thresholds = attr_finite_or_tensor(c, "nodes_values", /*allow_inf=*/true);
  const std::size_t n = a.tree_ids.size();
  if (n == 0) fail(c.where, "tree ensemble has no nodes (nodes_treeids is empty)");
  if (a.node_ids.size() != n || a.feature_ids.size() != n || a.modes.size() != n || a.true_ids.size() != n ||
      a.false_ids.size() != n || (!a.thresholds.empty() && a.thresholds.size() != n) ||
      (!a.missing.empty() && a.missing.size() != n)) {
    fail(c.where, fmt::format("the nodes_* attributes must all have {} entries (one per node)", n));
  }
  auto te = std::make_shared<TreeEnsemble>();
  std::map<std::int64_t, std::size_t> tree_index;  // ONNX tree id -> our tree
  std::vector<std::vector<std::size_t>> members;   // attribute positions of each tree's nodes
  for (std::size_t i = 0; i < n; ++i) {
    const auto [it, fresh] = tree_index.emplace(a.tree_ids[i], members.size());
    if (fresh) members.emplace_back();
    members[it->second].push_back(i);
  }
  const std::vector<TreeEnsemble::Mode> mode = node_modes(*this, c, a);
  std::vector<std::map<std::int64_t, int>> renumber(members.size());  // ONNX node id -> our index
  for (std::size_t t = 0; t < members.size(); ++t)
    te->trees.push_back(one_tree(*this, c, a, mode, members[t], n_features, renumber[t]));
  const std::string p(prefix);
  const auto w_trees = attr_ints(c, (p + "treeids").c_str());
  const auto w_nodes = attr_ints(c, (p + "nodeids").c_str());
  const auto w_ids = attr_ints(c, (p + "ids").c_str());
  const auto w_weights = attr_finite_or_tensor(c, (p + "weights").c_str());
  const std::size_t nw = w_trees.size();
  if (w_nodes.size() != nw || w_ids.size() != nw || w_weights.size() != nw) {
    fail(c.where, fmt::format("the {}* attributes must all have {} entries (one per leaf weight)", p, nw));
  }
  for (std::size_t k = 0; k < nw; ++k) {
    const auto t = tree_index.find(w_trees[k]);
    if (t == tree_index.end()) fail(c.where, fmt::format("{}treeids names tree {}, which has no nodes", p, w_trees[k]));
    const auto nd = renumber[t->second].find(w_nodes[k]);
    if (nd == renumber[t->second].end()) {
      fail(c.where, fmt::format("{}nodeids names node {} of tree {}, which does not exist", p, w_nodes[k], w_trees[k]));
    }
    if (w_ids[k] < 0 || w_ids[k] > std::numeric_limits<int>::max()) {
      fail(c.where, fmt::format("{}ids has {}, expected an output index", p, w_ids[k]));
    }
    te->trees[t->second].leaves.push_back({nd->second, static_cast<int>(w_ids[k]), w_weights[k]});
  }
  return te;
}

int Loader::post_transform(int raw, const Ctx& c) {
  const std::string pt = post_transform_name(c);
  if (pt == "NONE") return raw;
  if (pt == "LOGISTIC") return b_->sigmoid(raw, c.where + "/logistic");
  if (pt == "SOFTMAX") return b_->unary(OpKind::Softmax, raw, c.where + "/softmax");
  unsupported(c.where,
              fmt::format("post_transform '{}' is not supported (witness reads NONE, LOGISTIC and SOFTMAX)", pt));
}

std::vector<std::string> Loader::class_labels(const Ctx& c, const char* ints_name,
                                              std::vector<std::int64_t>& ints) const {
  ints = attr_ints(c, ints_name);
  std::vector<std::string> names = attr_strings(c, "classlabels_strings");
  if (ints.empty() == names.empty())
    fail(c.where, fmt::format("expected exactly one of {} and classlabels_strings", ints_name));
  for (const std::int64_t v : ints) names.push_back(std::to_string(v));
  return names;
}

void Loader::classifier_outputs(const Ctx& c, const Value& x, int raw, int scores, std::vector<std::string> labels,
                                std::vector<std::int64_t> int_labels) {
  Value label;
  label.is_label = true;
  label.integer = true;
  label.batched = x.batched;
  label.dims = x.batched ? Dims{} : Dims{1};
  label.rule_node = raw;
  label.class_labels = labels;
  label.label_scores = scores;
  label.int_labels = std::move(int_labels);
  set(c, 0, std::move(label));
  const auto width = static_cast<std::int64_t>(b_->width(scores));
  Value s = dynamic(scores, x.batched, x.batched ? Dims{width} : Dims{1, width}, c.where);
  s.rule_node = raw;
  s.class_labels = std::move(labels);
  set(c, 1, std::move(s));
}

void Loader::op_tree_classifier(const Ctx& c) {
  const Value x = features(c, 0);
  const int n_features = b_->width(x.node);
  std::shared_ptr<TreeEnsemble> te = build_trees(c, "class_", n_features);
  std::vector<std::int64_t> ints;
  std::vector<std::string> labels = class_labels(c, "classlabels_int64s", ints);
  const auto n_classes = static_cast<int>(labels.size());
  std::vector<double> base = attr_finite_or_tensor(c, "base_values");
  std::set<int> ids;
  bool positive = true;
  for (const auto& tree : te->trees) {
    for (const auto& leaf : tree.leaves) {
      ids.insert(leaf.target);
      positive = positive && leaf.weight >= 0.0;
    }
  }
  for (const int id : ids) {
    if (id >= n_classes) fail(c.where, fmt::format("class_ids has {}, but there are {} classes", id, n_classes));
  }
  te->classifier = true;
  int raw = -1;
  int scores = -1;
  if (n_classes == 2 && ids.size() == 1) {
    // One score s for a binary classifier: scores [1 - s, s] for probability-like (non-negative)
    // weights, [-s, s] for margins, as onnxruntime computes them.
    const int cls = *ids.begin();
    if (base.size() > 2) fail(c.where, fmt::format("{} base values for a binary classifier", base.size()));
    if (!base.empty()) base = {base.size() == 1 ? base[0] : base[static_cast<std::size_t>(cls)]};
    for (auto& tree : te->trees) {
      for (auto& leaf : tree.leaves) leaf.target = 0;
    }
    te->n_targets = 1;
    te->base_values = std::move(base);
    te->binary_single_score = true;
    te->binary_total = positive ? 1.0 : 0.0;
    raw = b_->tree_ensemble(x.node, te, c.where);
    const std::string pt = post_transform_name(c);
    if (pt == "PROBIT" || pt == "SOFTMAX_ZERO") unsupported(c.where, fmt::format("post_transform '{}'", pt));
    // onnxruntime applies only LOGISTIC here, and only to margins.
    scores = !positive && pt == "LOGISTIC" ? b_->sigmoid(raw, c.where + "/logistic") : raw;
  } else {
    if (!base.empty() && base.size() != labels.size()) {
      fail(c.where, fmt::format("{} base values for {} classes", base.size(), labels.size()));
    }
    te->n_targets = n_classes;
    te->base_values = std::move(base);
    raw = b_->tree_ensemble(x.node, te, c.where);
    scores = post_transform(raw, c);
  }
  classifier_outputs(c, x, raw, scores, std::move(labels), std::move(ints));
}

void Loader::op_tree_regressor(const Ctx& c) {
  const Value x = features(c, 0);
  std::shared_ptr<TreeEnsemble> te = build_trees(c, "target_", b_->width(x.node));
  int max_id = 0;
  for (const auto& tree : te->trees) {
    for (const auto& leaf : tree.leaves) max_id = std::max(max_id, leaf.target);
  }
  const std::int64_t n_targets = attr_int_in(c, "n_targets", static_cast<std::int64_t>(max_id) + 1, 1, kMaxWidth);
  te->n_targets = static_cast<int>(n_targets);
  const std::string agg = attr_enum(c, "aggregate_function", "SUM", {"SUM", "AVERAGE", "MIN", "MAX"});
  if (agg == "SUM") {
    te->aggregate = TreeEnsemble::Aggregate::Sum;
  } else if (agg == "AVERAGE") {
    te->aggregate = TreeEnsemble::Aggregate::Average;
  } else if (agg == "MIN") {
    te->aggregate = TreeEnsemble::Aggregate::Min;
  } else {
    te->aggregate = TreeEnsemble::Aggregate::Max;
  }
  te->base_values = attr_finite_or_tensor(c, "base_values");
  const int raw = b_->tree_ensemble(x.node, te, c.where);
  const int out = post_transform(raw, c);
  set(c, 0, dynamic(out, x.batched, x.batched ? Dims{n_targets} : Dims{1, n_targets}, c.where));
}

namespace {

// ai.onnx.ml 5 TreeEnsemble's nodes_modes values.
constexpr std::array<TreeEnsemble::Mode, 7> kV5Modes = {
    TreeEnsemble::Mode::Leq, TreeEnsemble::Mode::Lt,  TreeEnsemble::Mode::Geq,   TreeEnsemble::Mode::Gt,
    TreeEnsemble::Mode::Eq,  TreeEnsemble::Mode::Neq, TreeEnsemble::Mode::Member};

// ai.onnx.ml 5 TreeEnsemble's attributes, as read (sizes checked by v5_arrays).
struct V5Arrays {
  std::vector<std::int64_t> roots, feature_ids, true_ids, false_ids, true_leafs, false_leafs, missing, target_ids;
  std::vector<double> splits, modes, weights, member_values;
  std::int64_t n_targets = 1;
};

V5Arrays v5_arrays(const Loader& L, const Loader::Ctx& c) {
  auto tensor_attr = [&](const char* name, bool required) -> std::vector<double> {
    const auto* a = L.attr(c, name);
    if (a == nullptr) {
      if (required) L.fail(c.where, fmt::format("attribute '{}' is missing", name));
      return {};
    }
    if (a->type() != onnx::AttributeProto::TENSOR && !(a->type() == onnx::AttributeProto::UNDEFINED && a->has_t())) {
      L.fail(c.where, fmt::format("attribute '{}' must be a tensor", name));
    }
    return L.parse_tensor(a->t(), fmt::format("{} attribute '{}'", c.where, name)).data;
  };
  V5Arrays v;
  v.roots = L.attr_ints(c, "tree_roots");
  v.feature_ids = L.attr_ints(c, "nodes_featureids");
  v.true_ids = L.attr_ints(c, "nodes_truenodeids");
  v.false_ids = L.attr_ints(c, "nodes_falsenodeids");
  v.true_leafs = L.attr_ints(c, "nodes_trueleafs");
  v.false_leafs = L.attr_ints(c, "nodes_falseleafs");
  v.missing = L.attr_ints(c, "nodes_missing_value_tracks_true");
  v.target_ids = L.attr_ints(c, "leaf_targetids");
  v.splits = tensor_attr("nodes_splits", true);
  v.modes = tensor_attr("nodes_modes", true);
  v.weights = tensor_attr("leaf_weights", true);
  v.member_values = tensor_attr("membership_values", false);
  const std::size_t n = v.feature_ids.size();
  const std::size_t n_leaves = v.weights.size();
  if (n == 0) L.fail(c.where, "tree ensemble has no interior nodes (nodes_featureids is empty)");
  if (v.roots.empty()) L.fail(c.where, "tree ensemble has no trees (tree_roots is empty)");
  if (v.splits.size() != n || v.modes.size() != n || v.true_ids.size() != n || v.false_ids.size() != n ||
      v.true_leafs.size() != n || v.false_leafs.size() != n || (!v.missing.empty() && v.missing.size() != n)) {
    L.fail(c.where, fmt::format("the nodes_* attributes must all have {} entries (one per interior node)", n));
  }
  if (n_leaves == 0 || v.target_ids.size() != n_leaves) {
    L.fail(c.where, fmt::format("leaf_targetids has {} entries and leaf_weights {}; expected the same number, not 0",
                                v.target_ids.size(), n_leaves));
  }
  std::int64_t max_target = 0;
  for (std::size_t k = 0; k < n_leaves; ++k) {
    if (!std::isfinite(v.weights[k]))
      L.fail(c.where, fmt::format("leaf {} has weight {} (attribute leaf_weights[{}])", k, v.weights[k], k));
    max_target = std::max(max_target, v.target_ids[k]);
  }
  // Absent n_targets: as many as the leaves name.
  v.n_targets = L.attr_int_in(c, "n_targets", std::min(max_target, kMaxWidth) + 1, 1, kMaxWidth);
  for (std::size_t k = 0; k < n_leaves; ++k) {
    if (v.target_ids[k] < 0 || v.target_ids[k] >= v.n_targets)
      L.fail(c.where, fmt::format("leaf {} has target id {}, but n_targets is {}", k, v.target_ids[k], v.n_targets));
  }
  return v;
}

// Per interior node: mode, threshold or set, and checked children.
std::vector<TreeEnsemble::Node> v5_nodes(const Loader& L, const Loader::Ctx& c, const V5Arrays& v, int n_features) {
  const std::size_t n = v.feature_ids.size(), n_leaves = v.weights.size();
  std::vector<TreeEnsemble::Node> node(n);
  std::size_t set_at = 0;  // next unread position of membership_values
  for (std::size_t i = 0; i < n; ++i) {
    TreeEnsemble::Node& nd = node[i];
    const double m = v.modes[i];
    if (!(m >= 0.0 && m < static_cast<double>(kV5Modes.size())) || m != std::floor(m)) {
      L.fail(c.where, fmt::format("node {} has mode {} (expected 0 BRANCH_LEQ .. 6 BRANCH_MEMBER)", i, m));
    }
    nd.mode = kV5Modes[static_cast<std::size_t>(m)];
    if (v.feature_ids[i] < 0 || v.feature_ids[i] >= n_features) {
      L.fail(c.where, fmt::format("node {} tests feature {}, but the input has {}", i, v.feature_ids[i], n_features));
    }
    nd.feature = static_cast<int>(v.feature_ids[i]);
    nd.missing_tracks_true = !v.missing.empty() && v.missing[i] != 0;
    if (!v.missing.empty() && v.missing[i] != 0 && v.missing[i] != 1)
      L.fail(c.where, fmt::format("node {} has nodes_missing_value_tracks_true {} (expected 0 or 1)", i, v.missing[i]));
    if (nd.mode == TreeEnsemble::Mode::Member) {
      // This node's set: the next run of membership_values up to a NaN (or the end); the sets are
      // in the order of the BRANCH_MEMBER nodes.
      if (set_at >= v.member_values.size())
        L.fail(c.where, fmt::format("node {} is a BRANCH_MEMBER node without a set in membership_values", i));
      for (; set_at < v.member_values.size() && !std::isnan(v.member_values[set_at]); ++set_at) {
        const double value = v.member_values[set_at];
        if (!std::isfinite(value))
          L.fail(c.where, fmt::format("node {}'s set holds {}; expected finite values", i, value));
        nd.members.push_back(value);
      }
      ++set_at;  // past the NaN
      std::sort(nd.members.begin(), nd.members.end());
      nd.members.erase(std::unique(nd.members.begin(), nd.members.end()), nd.members.end());
      if (nd.members.empty()) {
        // An empty set: no value is a member; only NaN may go true. x > +inf says the same.
        nd.mode = TreeEnsemble::Mode::Gt;
        nd.threshold = std::numeric_limits<double>::infinity();
      }
    } else {
      if (std::isnan(v.splits[i]))
        L.fail(c.where, fmt::format("node {} has a NaN split value (attribute nodes_splits[{}])", i, i));
      nd.threshold = v.splits[i];
    }
    for (const auto& [is_leaf, id, side] :
         {std::tuple{v.true_leafs[i], v.true_ids[i], "true"}, std::tuple{v.false_leafs[i], v.false_ids[i], "false"}}) {
      if (is_leaf != 0 && is_leaf != 1)
        L.fail(c.where, fmt::format("node {} has nodes_{}leafs {} (expected 0 or 1)", i, side, is_leaf));
      const auto bound = static_cast<std::int64_t>(is_leaf != 0 ? n_leaves : n);
      if (id < 0 || id >= bound) {
        L.fail(c.where, fmt::format("node {} has {} child {} {}, but there are {}", i, side,
                                    is_leaf != 0 ? "leaf" : "node", id, bound));
      }
    }
  }
  if (set_at < v.member_values.size()) {
    L.fail(c.where, "membership_values holds more sets than there are BRANCH_MEMBER nodes");
  }
  return node;
}

// The trees copied out from their roots. Each interior node in one tree, reached once; each leaf
// from one parent. This also rules out cycles, so the copy ends.
std::shared_ptr<TreeEnsemble> v5_trees(const Loader& L, const Loader::Ctx& c, const V5Arrays& v,
                                       const std::vector<TreeEnsemble::Node>& node) {
  const std::size_t n = node.size();
  std::vector<std::int64_t> node_parent(n, -1);  // -2: a root
  std::vector<std::int64_t> leaf_parent(v.weights.size(), -1);
  auto te = std::make_shared<TreeEnsemble>();
  for (std::size_t t = 0; t < v.roots.size(); ++t) {
    const std::int64_t r = v.roots[t];
    if (r < 0 || r >= static_cast<std::int64_t>(n))
      L.fail(c.where, fmt::format("tree_roots[{}] is {}, but there are {} nodes", t, r, n));
    if (node_parent[static_cast<std::size_t>(r)] != -1) {
      L.fail(c.where, fmt::format("tree {}'s root, node {}, is also in another tree", t, r));
    }
    node_parent[static_cast<std::size_t>(r)] = -2;
    TreeEnsemble::Tree tree;
    // (IR index, ONNX index, is a leaf): IR slots are made before they are filled, children after
    // their parent.
    std::vector<std::tuple<int, std::int64_t, bool>> todo{{0, r, false}};
    tree.nodes.emplace_back();
    while (!todo.empty()) {
      const auto [at, id, is_leaf] = todo.back();
      todo.pop_back();
      if (is_leaf) {
        tree.leaves.push_back({at, static_cast<int>(v.target_ids[static_cast<std::size_t>(id)]),
                               v.weights[static_cast<std::size_t>(id)]});
        continue;
      }
      const auto i = static_cast<std::size_t>(id);
      TreeEnsemble::Node nd = node[i];
      for (const bool side : {true, false}) {
        const std::int64_t child = side ? v.true_ids[i] : v.false_ids[i];
        const bool leaf = (side ? v.true_leafs[i] : v.false_leafs[i]) != 0;
        std::int64_t& parent =
            leaf ? leaf_parent[static_cast<std::size_t>(child)] : node_parent[static_cast<std::size_t>(child)];
        if (parent != -1 && !(leaf && parent == id)) {
          L.fail(c.where, fmt::format("{} {} has two parents (or is in a cycle); expected trees",
                                      leaf ? "leaf" : "node", child));
        }
        parent = id;
        if (tree.nodes.size() >= static_cast<std::size_t>(std::numeric_limits<int>::max() / 2))
          L.fail(c.where, "tree is too large");
        const int slot = static_cast<int>(tree.nodes.size());
        tree.nodes.emplace_back();  // a Leaf until filled
        (side ? nd.true_child : nd.false_child) = slot;
        todo.emplace_back(slot, child, leaf);
      }
      tree.nodes[static_cast<std::size_t>(at)] = std::move(nd);
    }
    te->trees.push_back(std::move(tree));
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (node_parent[i] == -1) L.fail(c.where, fmt::format("node {} is in no tree (no parent, not a root)", i));
  }
  return te;
}

}  // namespace

// ai.onnx.ml 5 TreeEnsemble: interior nodes (nodes_*) and leaves (leaf_*) in separate arrays; a
// child is a node index or, where nodes_trueleafs/falseleafs says so, a leaf index. Each tree is
// copied out from its root, children numbered after their parent as the IR requires.
void Loader::op_tree_ensemble(const Ctx& c) {
  const Value x = features(c, 0);
  const V5Arrays v = v5_arrays(*this, c);
  std::shared_ptr<TreeEnsemble> te = v5_trees(*this, c, v, v5_nodes(*this, c, v, b_->width(x.node)));
  const std::int64_t n_targets = v.n_targets;
  te->n_targets = static_cast<int>(n_targets);
  const std::int64_t agg = attr_int(c, "aggregate_function", 1);
  static constexpr std::array<TreeEnsemble::Aggregate, 4> kAggregates = {
      TreeEnsemble::Aggregate::Average, TreeEnsemble::Aggregate::Sum, TreeEnsemble::Aggregate::Min,
      TreeEnsemble::Aggregate::Max};
  if (agg < 0 || agg >= static_cast<std::int64_t>(kAggregates.size()))
    fail(c.where, fmt::format("attribute aggregate_function is {} (expected 0 AVERAGE, 1 SUM, 2 MIN or 3 MAX)", agg));
  te->aggregate = kAggregates[static_cast<std::size_t>(agg)];
  const int raw = b_->tree_ensemble(x.node, te, c.where);
  int out = raw;
  switch (attr_int(c, "post_transform", 0)) {
    case 0: break;
    case 1: out = b_->unary(OpKind::Softmax, raw, c.where + "/softmax"); break;
    case 2: out = b_->sigmoid(raw, c.where + "/logistic"); break;
    case 3: unsupported(c.where, "post_transform 3 (SOFTMAX_ZERO) is not supported");
    case 4: unsupported(c.where, "post_transform 4 (PROBIT) is not supported");
    default:
      fail(c.where, fmt::format("attribute post_transform is {} (expected 0 NONE .. 4 PROBIT)",
                                attr_int(c, "post_transform", 0)));
  }
  set(c, 0, dynamic(out, x.batched, x.batched ? Dims{n_targets} : Dims{1, n_targets}, c.where));
}

void Loader::op_linear_classifier(const Ctx& c) {
  const Value x = features(c, 0);
  const std::int64_t f = b_->width(x.node);
  const std::vector<double> coef = attr_finite(c, "coefficients");
  std::vector<double> intercepts = attr_finite(c, "intercepts");
  // 0 one-vs-rest, 1 multinomial: the scores are the same linear functions either way.
  (void)attr_flag(c, "multi_class", 0);
  std::vector<std::int64_t> ints;
  std::vector<std::string> labels = class_labels(c, "classlabels_ints", ints);
  const auto rows =
      static_cast<std::int64_t>(intercepts.empty() ? coef.size() / static_cast<std::size_t>(f) : intercepts.size());
  if (rows == 0 || static_cast<std::int64_t>(coef.size()) != rows * f) {
    fail(c.where, fmt::format("{} coefficients for {} classes of {} features", coef.size(), rows, f));
  }
  if (intercepts.empty()) intercepts.assign(static_cast<std::size_t>(rows), 0.0);
  const std::string pt = post_transform_name(c);
  int raw = -1;
  int scores = -1;
  if (rows == 1 && labels.size() == 2) {
    // One score s: the label is 1 iff s > 0. Raw scores [-s, s] decide exactly that by argmax;
    // onnxruntime reports [1 - s, s] without a post_transform.
    Eigen::MatrixXd w(2, f);
    Eigen::VectorXd b(2);
    for (std::int64_t k = 0; k < f; ++k) {
      w(1, k) = coef[static_cast<std::size_t>(k)];
      w(0, k) = -w(1, k);
    }
    b << -intercepts[0], intercepts[0];
    raw = b_->dense(x.node, std::move(w), std::move(b), c.where);
    if (pt == "NONE") {
      Eigen::VectorXd shift(2);
      shift << 1.0, 0.0;
      scores = b_->binary(OpKind::Add, raw, b_->constant(shift, c.where + "/shift"), c.where + "/scores");
    } else {
      scores = post_transform(raw, c);
    }
  } else {
    if (rows != static_cast<std::int64_t>(labels.size())) {
      fail(c.where, fmt::format("coefficients give {} classes but there are {} class labels", rows, labels.size()));
    }
    Eigen::MatrixXd w(rows, f);
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t k = 0; k < f; ++k) w(r, k) = coef[static_cast<std::size_t>(r * f + k)];
    }
    Eigen::VectorXd b = Eigen::Map<const Eigen::VectorXd>(intercepts.data(), rows);
    raw = b_->dense(x.node, std::move(w), std::move(b), c.where);
    scores = post_transform(raw, c);
  }
  classifier_outputs(c, x, raw, scores, std::move(labels), std::move(ints));
}

void Loader::op_linear_regressor(const Ctx& c) {
  const Value x = features(c, 0);
  const std::int64_t f = b_->width(x.node);
  const std::vector<double> coef = attr_finite(c, "coefficients");
  std::vector<double> intercepts = attr_finite(c, "intercepts");
  const std::int64_t targets = attr_int_in(c, "targets", 1, 1, kMaxWidth);
  if (targets <= 0 || targets > kMaxWidth || static_cast<std::int64_t>(coef.size()) != targets * f ||
      (!intercepts.empty() && static_cast<std::int64_t>(intercepts.size()) != targets)) {
    fail(c.where, fmt::format("expected {} x {} coefficients and {} intercepts", targets, f, targets));
  }
  if (intercepts.empty()) intercepts.assign(static_cast<std::size_t>(targets), 0.0);
  Eigen::MatrixXd w(targets, f);
  for (std::int64_t r = 0; r < targets; ++r) {
    for (std::int64_t k = 0; k < f; ++k) w(r, k) = coef[static_cast<std::size_t>(r * f + k)];
  }
  const int raw =
      b_->dense(x.node, std::move(w), Eigen::Map<const Eigen::VectorXd>(intercepts.data(), targets), c.where);
  set(c, 0, dynamic(post_transform(raw, c), x.batched, x.batched ? Dims{targets} : Dims{1, targets}, c.where));
}

void Loader::op_scaler(const Ctx& c) {
  const Value x = features(c, 0);
  const std::int64_t f = b_->width(x.node);
  const std::vector<double> offset = attr_finite(c, "offset");
  const std::vector<double> scale = attr_finite(c, "scale");
  for (const auto* v : {&offset, &scale}) {
    if (!v->empty() && v->size() != 1 && static_cast<std::int64_t>(v->size()) != f) {
      fail(c.where, fmt::format("offset and scale need 1 or {} values", f));
    }
  }
  // (x - offset) * scale, in that order, as onnxruntime rounds it.
  int y = x.node;
  if (!offset.empty()) {
    const auto n = static_cast<Eigen::Index>(offset.size());
    y = b_->binary(OpKind::Sub, y, b_->constant(Eigen::Map<const Eigen::VectorXd>(offset.data(), n), c.where), c.where);
  }
  if (!scale.empty()) {
    const auto n = static_cast<Eigen::Index>(scale.size());
    y = b_->binary(OpKind::Mul, y, b_->constant(Eigen::Map<const Eigen::VectorXd>(scale.data(), n), c.where), c.where);
  }
  set(c, 0, dynamic(y, x.batched, x.dims, c.where));
}

void Loader::op_normalizer(const Ctx& c) {
  const Value x = features(c, 0);
  const std::string norm = attr_enum(c, "norm", "MAX", {"MAX", "L1", "L2"});
  if (norm != "L1") unsupported(c.where, fmt::format("Normalizer with norm {}: only L1 has an exact encoding", norm));
  // x / sum |x| (x where the sum is 0, as onnxruntime leaves such rows), with |x| = relu(x) + relu(-x).
  const int w = b_->width(x.node);
  const int neg = b_->dense(x.node, -Eigen::MatrixXd::Identity(w, w), Eigen::VectorXd::Zero(w), c.where);
  const int abs = b_->binary(OpKind::Add, b_->relu(x.node, c.where), b_->relu(neg, c.where), c.where);
  const int sum = b_->dense(abs, Eigen::MatrixXd::Ones(1, w), Eigen::VectorXd::Zero(1), c.where);
  const int zero = b_->binary(OpKind::Equal, sum, b_->constant(Eigen::VectorXd::Zero(1), c.where), c.where);
  const int y = b_->where(zero, x.node, b_->binary(OpKind::Div, x.node, sum, c.where), c.where);
  Value out = x;  // the classifier's decision (rule_node, class labels) stays with its outputs
  out.node = y;
  set(c, 0, std::move(out));
}

void Loader::op_zipmap(const Ctx& c) {
  Value v = get(c, 0);
  // The class names the map is keyed by, for a network whose decision is an argmax of its outputs.
  if (v.class_labels.empty()) {
    v.class_labels = attr_strings(c, "classlabels_strings");
    for (const std::int64_t k : attr_ints(c, "classlabels_int64s")) v.class_labels.push_back(std::to_string(k));
  }
  set(c, 0, std::move(v));
}

}  // namespace witness::onnx_detail
