// ONNX writer: model IR -> onnx::ModelProto (opset 13, ai.onnx.ml 3; ai.onnx.ml 5 when a tree
// ensemble has set-membership splits, which only its TreeEnsemble op expresses).
//
// The whole graph is float64, so that weights stay the exact doubles the IR holds (Gemm wants one
// element type for all its operands). Each IR node i becomes the value "n<i>" (the input is "input");
// values a node computes from constants only have shape [1, w], all others [N, w]. The decision
// rule, class labels and input/output names go into metadata_props, which load_onnx reads back.
#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/columns.h"
#include "model/loaders.h"

namespace witness {
namespace {

using Proto = onnx::TensorProto;

class Writer {
 public:
  Writer(const Model& m, std::string path) : m_(m), path_(std::move(path)) {}
  onnx::ModelProto write();

 private:
  onnx::NodeProto* add(const std::string& op, std::vector<std::string> inputs, const std::string& output,
                       const std::string& domain = "");
  std::string init(const std::string& name, const std::vector<std::int64_t>& dims, const std::vector<double>& data);
  std::string init_ints(const std::string& name, const std::vector<std::int64_t>& dims,
                        const std::vector<std::int64_t>& data);
  static void attr(onnx::NodeProto* n, const std::string& name, std::int64_t v);
  static void attr(onnx::NodeProto* n, const std::string& name, float v);
  static void attr(onnx::NodeProto* n, const std::string& name, const std::string& v);
  static void attr(onnx::NodeProto* n, const std::string& name, const std::vector<std::int64_t>& v);
  static void attr(onnx::NodeProto* n, const std::string& name, const std::vector<std::string>& v);
  static void attr_tensor(onnx::NodeProto* n, const std::string& name, const std::vector<double>& v);
  static void attr_bytes(onnx::NodeProto* n, const std::string& name, const std::vector<std::uint8_t>& v);
  std::string name(int id) const { return id == m_.input ? std::string("input") : fmt::format("n{}", id); }
  // The value of node `id` with the batch dim: a [1, w] constant is repeated for every row.
  std::string batched_value(int id);
  void node(int id);
  void tree_ensemble(int id, const Node& nd);
  // ai.onnx.ml 5 TreeEnsemble (the sums into `y`, double like its input).
  void tree_ensemble_v5(const TreeEnsemble& te, const std::string& input, const std::string& y);

  const Model& m_;
  std::string path_;
  onnx::GraphProto* g_ = nullptr;
  std::vector<bool> batched_;
  int temp_ = 0;
  bool ml5_ = false;  // tree ensembles as ai.onnx.ml 5 TreeEnsemble
};

onnx::NodeProto* Writer::add(const std::string& op, std::vector<std::string> inputs, const std::string& output,
                             const std::string& domain) {
  onnx::NodeProto* n = g_->add_node();
  n->set_op_type(op);
  n->set_name(fmt::format("{}_{}", output, op));
  if (!domain.empty()) n->set_domain(domain);
  for (auto& in : inputs) n->add_input(std::move(in));
  n->add_output(output);
  return n;
}

std::string Writer::init(const std::string& name, const std::vector<std::int64_t>& dims,
                         const std::vector<double>& data) {
  Proto* t = g_->add_initializer();
  t->set_name(name);
  t->set_data_type(Proto::DOUBLE);
  for (const std::int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(double)));
  return name;
}

std::string Writer::init_ints(const std::string& name, const std::vector<std::int64_t>& dims,
                              const std::vector<std::int64_t>& data) {
  Proto* t = g_->add_initializer();
  t->set_name(name);
  t->set_data_type(Proto::INT64);
  for (const std::int64_t d : dims) t->add_dims(d);
  for (const std::int64_t v : data) t->add_int64_data(v);
  return name;
}

void Writer::attr(onnx::NodeProto* n, const std::string& name, std::int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void Writer::attr(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void Writer::attr(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

void Writer::attr(onnx::NodeProto* n, const std::string& name, const std::vector<std::int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (const std::int64_t x : v) a->add_ints(x);
}

void Writer::attr(onnx::NodeProto* n, const std::string& name, const std::vector<std::string>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRINGS);
  for (const std::string& x : v) a->add_strings(x);
}

// A one-dimensional tensor attribute of `size` elements of `type`, its data left to the caller.
Proto* tensor_attribute(onnx::NodeProto* n, const std::string& name, Proto::DataType type, std::size_t size) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  Proto* t = a->mutable_t();
  t->set_data_type(type);
  t->add_dims(static_cast<std::int64_t>(size));
  return t;
}

void Writer::attr_tensor(onnx::NodeProto* n, const std::string& name, const std::vector<double>& v) {
  Proto* t = tensor_attribute(n, name, Proto::DOUBLE, v.size());
  for (const double x : v) t->add_double_data(x);
}

void Writer::attr_bytes(onnx::NodeProto* n, const std::string& name, const std::vector<std::uint8_t>& v) {
  tensor_attribute(n, name, Proto::UINT8, v.size())->set_raw_data(std::string(v.begin(), v.end()));
}

std::string Writer::batched_value(int id) {
  if (batched_[static_cast<std::size_t>(id)]) return name(id);
  // Where(c, v, v) with a [N, 1] condition broadcasts v to [N, w] whatever c is, with no arithmetic
  // on v. The condition compares the first input column with itself.
  std::string base = fmt::format("n{}_rows{}", id, temp_++);
  add("Slice",
      {"input", init_ints(base + "_s", {1}, {0}), init_ints(base + "_e", {1}, {1}), init_ints(base + "_a", {1}, {1})},
      base + "_col");
  add("Less", {base + "_col", base + "_col"}, base + "_cond");
  add("Where", {base + "_cond", name(id), name(id)}, base);
  return base;
}

void Writer::tree_ensemble(int id, const Node& nd) {
  const TreeEnsemble& te = *nd.trees;
  const std::string out = name(id);
  // Always a regressor: its sums are exactly the IR's scores (classifier ops add label logic whose
  // binary cases differ between runtimes). The decision rule travels in the metadata.
  const std::string y = out + "_y";
  if (ml5_) {
    tree_ensemble_v5(te, name(nd.inputs[0]), y);
    if (!te.base_values.empty()) {  // not an attribute of TreeEnsemble: added to its sums, as ai.onnx.ml 3 does
      add("Add", {y, init(out + "_base", {1, static_cast<std::int64_t>(te.base_values.size())}, te.base_values)},
          y + "_b");
    }
    const std::string sums = te.base_values.empty() ? y : y + "_b";
    const std::string s = te.binary_single_score ? out + "_s" : out;
    add("Identity", {sums}, s);
    if (te.binary_single_score) {
      const std::string total = init(out + "_total", {1, 1}, {te.binary_total});
      add("Sub", {total, s}, out + "_neg");
      attr(add("Concat", {out + "_neg", s}, out), "axis", std::int64_t{1});
    }
    return;
  }
  onnx::NodeProto* n = add("TreeEnsembleRegressor", {name(nd.inputs[0])}, y, "ai.onnx.ml");
  std::vector<std::int64_t> tree_ids, node_ids, features, true_ids, false_ids, missing;
  std::vector<std::string> modes;
  std::vector<double> thresholds;
  std::vector<std::int64_t> w_trees, w_nodes, w_ids;
  std::vector<double> weights;
  for (std::size_t t = 0; t < te.trees.size(); ++t) {
    const auto& tree = te.trees[t];
    for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
      const auto& x = tree.nodes[i];
      tree_ids.push_back(static_cast<std::int64_t>(t));
      node_ids.push_back(static_cast<std::int64_t>(i));
      const bool leaf = x.mode == TreeEnsemble::Mode::Leaf;
      features.push_back(leaf ? 0 : x.feature);
      thresholds.push_back(leaf ? 0.0 : x.threshold);
      true_ids.push_back(leaf ? 0 : x.true_child);
      false_ids.push_back(leaf ? 0 : x.false_child);
      missing.push_back(x.missing_tracks_true ? 1 : 0);
      switch (x.mode) {
        case TreeEnsemble::Mode::Leaf: modes.emplace_back("LEAF"); break;
        case TreeEnsemble::Mode::Leq: modes.emplace_back("BRANCH_LEQ"); break;
        case TreeEnsemble::Mode::Lt: modes.emplace_back("BRANCH_LT"); break;
        case TreeEnsemble::Mode::Geq: modes.emplace_back("BRANCH_GTE"); break;
        case TreeEnsemble::Mode::Gt: modes.emplace_back("BRANCH_GT"); break;
        case TreeEnsemble::Mode::Eq: modes.emplace_back("BRANCH_EQ"); break;
        case TreeEnsemble::Mode::Neq: modes.emplace_back("BRANCH_NEQ"); break;
        case TreeEnsemble::Mode::Member: throw InternalError("save_onnx: a set-membership split in ai.onnx.ml 3");
      }
    }
    for (const auto& leaf : tree.leaves) {
      w_trees.push_back(static_cast<std::int64_t>(t));
      w_nodes.push_back(leaf.node);
      w_ids.push_back(leaf.target);
      weights.push_back(leaf.weight);
    }
  }
  attr(n, "nodes_treeids", tree_ids);
  attr(n, "nodes_nodeids", node_ids);
  attr(n, "nodes_featureids", features);
  attr(n, "nodes_modes", modes);
  attr_tensor(n, "nodes_values_as_tensor", thresholds);
  attr(n, "nodes_truenodeids", true_ids);
  attr(n, "nodes_falsenodeids", false_ids);
  attr(n, "nodes_missing_value_tracks_true", missing);
  attr(n, "target_treeids", w_trees);
  attr(n, "target_nodeids", w_nodes);
  attr(n, "target_ids", w_ids);
  attr_tensor(n, "target_weights_as_tensor", weights);
  attr(n, "n_targets", static_cast<std::int64_t>(te.n_targets));
  const char* agg = "SUM";
  switch (te.aggregate) {
    case TreeEnsemble::Aggregate::Sum: agg = "SUM"; break;
    case TreeEnsemble::Aggregate::Average: agg = "AVERAGE"; break;
    case TreeEnsemble::Aggregate::Min: agg = "MIN"; break;
    case TreeEnsemble::Aggregate::Max: agg = "MAX"; break;
  }
  attr(n, "aggregate_function", std::string(agg));
  if (!te.base_values.empty()) attr_tensor(n, "base_values_as_tensor", te.base_values);
  // The regressor's output is float in ai.onnx.ml 3; witness reads the double weights back exactly.
  const std::string s = te.binary_single_score ? out + "_s" : out;
  attr(add("Cast", {y}, s), "to", static_cast<std::int64_t>(Proto::DOUBLE));
  if (te.binary_single_score) {
    const std::string total = init(out + "_total", {1, 1}, {te.binary_total});
    add("Sub", {total, s}, out + "_neg");
    attr(add("Concat", {out + "_neg", s}, out), "axis", std::int64_t{1});
  }
}

void Writer::tree_ensemble_v5(const TreeEnsemble& te, const std::string& input, const std::string& y) {
  onnx::NodeProto* n = add("TreeEnsemble", {input}, y, "ai.onnx.ml");
  // Interior nodes and leaves are numbered apart; a child is either, as nodes_*leafs says.
  std::vector<std::int64_t> roots, features, true_ids, false_ids, true_leafs, false_leafs, missing, targets;
  std::vector<double> splits, weights, members;
  std::vector<std::uint8_t> modes;
  auto add_leaf = [&](int target, double weight) {
    targets.push_back(target);
    weights.push_back(weight);
    return static_cast<std::int64_t>(weights.size() - 1);
  };
  for (std::size_t t = 0; t < te.trees.size(); ++t) {
    const auto& tree = te.trees[t];
    // A leaf of the IR adds to at most one target here (one weight per ai.onnx.ml 5 leaf).
    auto leaf_weight = [&](int node) -> std::pair<int, double> {
      const auto ws = tree.leaves_of(node);
      if (ws.size() > 1)
        throw UnsupportedError(
            fmt::format("save_onnx: tree {} has a leaf adding to {} outputs, which ai.onnx.ml 5 (needed here for its "
                        "set-membership splits) cannot write",
                        t, ws.size()));
      return ws.empty() ? std::pair{0, 0.0} : std::pair{ws[0].target, ws[0].weight};
    };
    std::vector<std::int64_t> index(tree.nodes.size(), -1);  // interior nodes' indices; leaves get theirs below
    const auto first = static_cast<std::int64_t>(features.size());
    std::int64_t next = first;
    for (std::size_t i = 0; i < tree.nodes.size(); ++i)
      if (tree.nodes[i].mode != TreeEnsemble::Mode::Leaf) index[i] = next++;
    roots.push_back(first);
    if (next == first) {
      // One leaf: the root must be an interior node; x <= +inf (NaN: true too) reaches it either way.
      const auto [target, weight] = leaf_weight(0);
      features.push_back(0);
      splits.push_back(std::numeric_limits<double>::infinity());
      modes.push_back(0);
      missing.push_back(1);
      true_leafs.push_back(1), true_ids.push_back(add_leaf(target, weight));
      false_leafs.push_back(1), false_ids.push_back(add_leaf(target, weight));
      continue;
    }
    for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
      const auto& x = tree.nodes[i];
      if (x.mode == TreeEnsemble::Mode::Leaf) continue;
      features.push_back(x.feature);
      missing.push_back(x.missing_tracks_true ? 1 : 0);
      splits.push_back(x.mode == TreeEnsemble::Mode::Member ? 0.0 : x.threshold);
      switch (x.mode) {
        case TreeEnsemble::Mode::Leq: modes.push_back(0); break;
        case TreeEnsemble::Mode::Lt: modes.push_back(1); break;
        case TreeEnsemble::Mode::Geq: modes.push_back(2); break;
        case TreeEnsemble::Mode::Gt: modes.push_back(3); break;
        case TreeEnsemble::Mode::Eq: modes.push_back(4); break;
        case TreeEnsemble::Mode::Neq: modes.push_back(5); break;
        case TreeEnsemble::Mode::Member:
          modes.push_back(6);
          members.insert(members.end(), x.members.begin(), x.members.end());
          members.push_back(std::numeric_limits<double>::quiet_NaN());  // ends this node's set
          break;
        case TreeEnsemble::Mode::Leaf: break;
      }
      for (const int child : {x.true_child, x.false_child}) {
        const bool leaf = tree.nodes[static_cast<std::size_t>(child)].mode == TreeEnsemble::Mode::Leaf;
        std::int64_t id = index[static_cast<std::size_t>(child)];
        if (leaf) {
          const auto [target, weight] = leaf_weight(child);
          id = add_leaf(target, weight);
        }
        (child == x.true_child ? true_leafs : false_leafs).push_back(leaf ? 1 : 0);
        (child == x.true_child ? true_ids : false_ids).push_back(id);
      }
    }
  }
  attr(n, "tree_roots", roots);
  attr(n, "nodes_featureids", features);
  attr_tensor(n, "nodes_splits", splits);
  attr_bytes(n, "nodes_modes", modes);
  attr(n, "nodes_truenodeids", true_ids);
  attr(n, "nodes_falsenodeids", false_ids);
  attr(n, "nodes_trueleafs", true_leafs);
  attr(n, "nodes_falseleafs", false_leafs);
  attr(n, "nodes_missing_value_tracks_true", missing);
  if (!members.empty()) attr_tensor(n, "membership_values", members);
  attr(n, "leaf_targetids", targets);
  attr_tensor(n, "leaf_weights", weights);
  attr(n, "n_targets", static_cast<std::int64_t>(te.n_targets));
  std::int64_t agg = 1;
  switch (te.aggregate) {
    case TreeEnsemble::Aggregate::Average: agg = 0; break;
    case TreeEnsemble::Aggregate::Sum: agg = 1; break;
    case TreeEnsemble::Aggregate::Min: agg = 2; break;
    case TreeEnsemble::Aggregate::Max: agg = 3; break;
  }
  attr(n, "aggregate_function", agg);
  attr(n, "post_transform", std::int64_t{0});
}

void Writer::node(int id) {
  const Node& nd = m_.nodes[static_cast<std::size_t>(id)];
  const std::string out = name(id);
  auto in = [&](std::size_t k) { return name(nd.inputs[k]); };
  auto binary = [&](const char* op) { add(op, {in(0), in(1)}, out); };
  auto compare = [&](const char* op) {
    add(op, {in(0), in(1)}, out + "_b");
    attr(add("Cast", {out + "_b"}, out), "to", static_cast<std::int64_t>(Proto::DOUBLE));
  };
  switch (nd.op) {
    case OpKind::Input: break;
    case OpKind::Constant:
      init(out, {1, nd.values.size()}, std::vector<double>(nd.values.data(), nd.values.data() + nd.values.size()));
      break;
    case OpKind::Dense: {
      const auto rows = nd.weights.rows();
      const auto cols = nd.weights.cols();
      std::vector<double> w;
      w.reserve(static_cast<std::size_t>(rows * cols));
      for (Eigen::Index r = 0; r < rows; ++r) {
        for (Eigen::Index c = 0; c < cols; ++c) w.push_back(nd.weights(r, c));
      }
      const std::string wn = init(out + "_W", {rows, cols}, w);
      const std::string bn =
          init(out + "_b", {rows}, std::vector<double>(nd.values.data(), nd.values.data() + nd.values.size()));
      attr(add("Gemm", {in(0), wn, bn}, out), "transB", std::int64_t{1});
      break;
    }
    case OpKind::Add: binary("Add"); break;
    case OpKind::Sub: binary("Sub"); break;
    case OpKind::Mul: binary("Mul"); break;
    case OpKind::Div: binary("Div"); break;
    case OpKind::Less: compare("Less"); break;
    case OpKind::LessEqual: compare("LessOrEqual"); break;
    case OpKind::Greater: compare("Greater"); break;
    case OpKind::GreaterEqual: compare("GreaterOrEqual"); break;
    case OpKind::Equal: compare("Equal"); break;
    case OpKind::Relu: add("Relu", {in(0)}, out); break;
    case OpKind::Sigmoid: add("Sigmoid", {in(0)}, out); break;
    case OpKind::Tanh: add("Tanh", {in(0)}, out); break;
    case OpKind::Identity: add("Identity", {in(0)}, out); break;
    case OpKind::Softmax: attr(add("Softmax", {in(0)}, out), "axis", std::int64_t{-1}); break;
    case OpKind::LeakyRelu: {
      const auto alpha = static_cast<float>(nd.alpha);
      if (static_cast<double>(alpha) == nd.alpha) {
        attr(add("LeakyRelu", {in(0)}, out), "alpha", alpha);
      } else {
        // LeakyRelu's alpha is a float attribute; keep a double slope exact with Where.
        const std::string zero = init(out + "_zero", {1}, {0.0});
        const std::string slope = init(out + "_alpha", {1}, {nd.alpha});
        add("Greater", {in(0), zero}, out + "_pos");
        add("Mul", {in(0), slope}, out + "_neg");
        add("Where", {out + "_pos", in(0), out + "_neg"}, out);
      }
      break;
    }
    case OpKind::Where:
      attr(add("Cast", {in(0)}, out + "_c"), "to", static_cast<std::int64_t>(Proto::BOOL));
      add("Where", {out + "_c", in(1), in(2)}, out);
      break;
    case OpKind::Select: {
      std::vector<std::int64_t> idx(nd.indices.begin(), nd.indices.end());
      const std::string in_name = init_ints(out + "_idx", {static_cast<std::int64_t>(idx.size())}, idx);
      attr(add("Gather", {in(0), in_name}, out), "axis", std::int64_t{1});
      break;
    }
    case OpKind::Lookup: {
      // [N, 1] index -> [N] -> int64 -> rows of the table: the Cast truncates, as Lookup does.
      const std::string axes = init_ints(out + "_axes", {1}, {1});
      add("Squeeze", {in(0), axes}, out + "_sq");
      attr(add("Cast", {out + "_sq"}, out + "_i"), "to", static_cast<std::int64_t>(Proto::INT64));
      std::vector<double> table;
      for (Eigen::Index r = 0; r < nd.weights.rows(); ++r) {
        for (Eigen::Index c = 0; c < nd.weights.cols(); ++c) table.push_back(nd.weights(r, c));
      }
      const std::string tn = init(out + "_table", {nd.weights.rows(), nd.weights.cols()}, table);
      attr(add("Gather", {tn, out + "_i"}, out), "axis", std::int64_t{0});
      break;
    }
    case OpKind::Concat: {
      std::vector<std::string> parts;
      bool any_batched = false;
      for (const int p : nd.inputs) any_batched = any_batched || batched_[static_cast<std::size_t>(p)];
      for (const int p : nd.inputs) parts.push_back(any_batched ? batched_value(p) : name(p));
      attr(add("Concat", std::move(parts), out), "axis", std::int64_t{1});
      break;
    }
    case OpKind::ArgMax: {
      onnx::NodeProto* n = add("ArgMax", {in(0)}, out + "_i");
      attr(n, "axis", std::int64_t{-1});
      attr(n, "keepdims", std::int64_t{1});
      attr(add("Cast", {out + "_i"}, out), "to", static_cast<std::int64_t>(Proto::DOUBLE));
      break;
    }
    case OpKind::TreeEnsemble: tree_ensemble(id, nd); break;
  }
}

void add_type(onnx::ValueInfoProto* v, const std::string& name, std::int64_t width) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(Proto::DOUBLE);
  tt->mutable_shape()->add_dim()->set_dim_param("N");
  tt->mutable_shape()->add_dim()->set_dim_value(width);
}

onnx::ModelProto Writer::write() {
  if (m_.input_width() <= 0) throw UnsupportedError(path_, "", "a model without inputs cannot be written as ONNX");
  onnx::ModelProto mp;
  mp.set_ir_version(8);
  mp.set_producer_name("witness");
  mp.set_model_version(1);
  auto* core = mp.add_opset_import();
  core->set_domain("");
  core->set_version(13);
  for (const Node& nd : m_.nodes)
    if (nd.op == OpKind::TreeEnsemble)
      for (const auto& tree : nd.trees->trees)
        for (const auto& x : tree.nodes) ml5_ = ml5_ || x.mode == TreeEnsemble::Mode::Member;
  auto* ml = mp.add_opset_import();
  ml->set_domain("ai.onnx.ml");
  ml->set_version(ml5_ ? 5 : 3);
  g_ = mp.mutable_graph();
  g_->set_name(m_.name.empty() ? std::string("model") : m_.name);
  add_type(g_->add_input(), "input", m_.input_width());

  // Only what the output and the decision rule depend on.
  const std::size_t n = m_.nodes.size();
  std::vector<bool> needed(n, false);
  needed[static_cast<std::size_t>(m_.output)] = true;
  needed[static_cast<std::size_t>(m_.rule.node)] = true;
  for (std::size_t i = n; i-- > 0;) {
    if (!needed[i]) continue;
    for (const int in : m_.nodes[i].inputs) needed[static_cast<std::size_t>(in)] = true;
  }
  batched_.assign(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    const Node& nd = m_.nodes[i];
    batched_[i] = nd.op == OpKind::Input;
    for (const int in : nd.inputs) batched_[i] = batched_[i] || batched_[static_cast<std::size_t>(in)];
    if (needed[i]) node(static_cast<int>(i));
  }
  const std::string out = batched_value(m_.output);
  add("Identity", {out}, "output");
  add_type(g_->add_output(), "output", m_.output_width());

  nlohmann::json rule = {{"value", name(m_.rule.node)}};
  switch (m_.rule.kind) {
    case DecisionRule::Kind::Threshold:
      rule["kind"] = "threshold";
      rule["index"] = m_.rule.index;
      rule["threshold"] = m_.rule.threshold;
      break;
    case DecisionRule::Kind::ArgMax: rule["kind"] = "argmax"; break;
    case DecisionRule::Kind::Direct: rule["kind"] = "direct"; break;
  }
  auto meta = [&](const char* key, const nlohmann::json& value) {
    auto* p = mp.add_metadata_props();
    p->set_key(key);
    // Names read from UBJSON or protobuf may hold invalid UTF-8, on which plain dump() throws.
    p->set_value(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  };
  meta("witness.rule", rule);
  if (!m_.rule.class_labels.empty()) meta("witness.class_labels", m_.rule.class_labels);
  meta("witness.input_names", m_.input_names);
  meta("witness.output_names", m_.output_names);
  if (!m_.columns.empty()) meta("witness.columns", raw_columns_json(m_.columns));
  return mp;
}

}  // namespace

void save_onnx(const Model& model, const std::string& path) {
  const onnx::ModelProto mp = Writer(model, path).write();
  std::string bytes;
  if (!mp.SerializeToString(&bytes)) throw InternalError(path + ": cannot serialise the ONNX model");
  write_file(path, bytes);
}

}  // namespace witness
