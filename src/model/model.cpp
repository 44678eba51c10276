#include "model/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/error.h"

namespace witness {

std::string node_label(const Node& n, std::size_t id) {
  if (n.name.empty()) return "node #" + std::to_string(id);
  if (n.name.starts_with("node ") || n.name.starts_with("layer ")) return n.name;
  return "node '" + n.name + "'";
}

int single_tree_ensemble(const Model& m, std::string& why) {
  int found = -1;
  for (std::size_t i = 0; i < m.nodes.size(); ++i) {
    if (m.nodes[i].op != OpKind::TreeEnsemble) continue;
    if (found >= 0) {
      why = "the model has more than one tree ensemble";
      return -1;
    }
    found = static_cast<int>(i);
  }
  if (found < 0) why = "the model has no tree ensemble";
  return found;
}

const char* op_name(OpKind op) {
  switch (op) {
    case OpKind::Input: return "Input";
    case OpKind::Constant: return "Constant";
    case OpKind::Dense: return "Dense";
    case OpKind::Add: return "Add";
    case OpKind::Sub: return "Sub";
    case OpKind::Mul: return "Mul";
    case OpKind::Div: return "Div";
    case OpKind::Relu: return "Relu";
    case OpKind::LeakyRelu: return "LeakyRelu";
    case OpKind::Sigmoid: return "Sigmoid";
    case OpKind::Tanh: return "Tanh";
    case OpKind::Softmax: return "Softmax";
    case OpKind::Identity: return "Identity";
    case OpKind::Less: return "Less";
    case OpKind::LessEqual: return "LessOrEqual";
    case OpKind::Greater: return "Greater";
    case OpKind::GreaterEqual: return "GreaterOrEqual";
    case OpKind::Equal: return "Equal";
    case OpKind::Where: return "Where";
    case OpKind::Select: return "Select";
    case OpKind::Lookup: return "Lookup";
    case OpKind::Concat: return "Concat";
    case OpKind::ArgMax: return "ArgMax";
    case OpKind::TreeEnsemble: return "TreeEnsemble";
  }
  return "?";
}

bool is_elementwise_binary(OpKind op) {
  switch (op) {
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Less:
    case OpKind::LessEqual:
    case OpKind::Greater:
    case OpKind::GreaterEqual:
    case OpKind::Equal: return true;
    default: return false;
  }
}

bool is_unary(OpKind op) {
  switch (op) {
    case OpKind::Relu:
    case OpKind::LeakyRelu:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::Softmax:
    case OpKind::Identity: return true;
    default: return false;
  }
}

int TreeEnsemble::leaf_of(int t, const double* x, std::ptrdiff_t stride) const {
  const Tree& tree = trees[static_cast<std::size_t>(t)];
  int id = 0;
  // A well-formed tree reaches a leaf in at most nodes.size() steps; the builder checked that.
  for (std::size_t steps = 0; steps <= tree.nodes.size(); ++steps) {
    const Node& n = tree.nodes[static_cast<std::size_t>(id)];
    if (n.mode == Mode::Leaf) return id;
    const double v = x[static_cast<std::ptrdiff_t>(n.feature) * stride];
    bool go_true = false;
    if (std::isnan(v)) {
      go_true = n.missing_tracks_true;
    } else {
      switch (n.mode) {
        case Mode::Leq: go_true = v <= n.threshold; break;
        case Mode::Lt: go_true = v < n.threshold; break;
        case Mode::Geq: go_true = v >= n.threshold; break;
        case Mode::Gt: go_true = v > n.threshold; break;
        case Mode::Eq: go_true = v == n.threshold; break;
        case Mode::Neq: go_true = v != n.threshold; break;
        case Mode::Member: go_true = std::binary_search(n.members.begin(), n.members.end(), v); break;
        case Mode::Leaf: break;
      }
    }
    id = go_true ? n.true_child : n.false_child;
  }
  throw InternalError("tree ensemble: cycle in tree " + std::to_string(t));
}

DecisionRule DecisionRule::threshold_on(int node, double t, int index) {
  DecisionRule r;
  r.kind = Kind::Threshold;
  r.node = node;
  r.index = index;
  r.threshold = t;
  return r;
}

DecisionRule DecisionRule::argmax_of(int node) {
  DecisionRule r;
  r.kind = Kind::ArgMax;
  r.node = node;
  return r;
}

DecisionRule DecisionRule::direct(int node) {
  DecisionRule r;
  r.kind = Kind::Direct;
  r.node = node;
  return r;
}

std::string DecisionRule::describe() const {
  switch (kind) {
    case Kind::Threshold:
      return fmt::format("label 1 iff node {}[{}] > {} (the logit; sigmoid > 0.5 iff logit > 0)", node, index,
                         threshold);
    case Kind::ArgMax: return fmt::format("label = argmax of node {} (ties to the lower index)", node);
    case Kind::Direct: return fmt::format("label = value of node {}", node);
  }
  return "?";
}

void Model::validate() const {
  if (nodes.empty() || input < 0 || static_cast<std::size_t>(input) >= nodes.size() ||
      nodes[static_cast<std::size_t>(input)].op != OpKind::Input) {
    throw InternalError("model '" + name + "': no input node");
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (int in : nodes[i].inputs) {
      if (in < 0 || static_cast<std::size_t>(in) >= i) {
        throw InternalError(fmt::format("model '{}': node {} reads node {} out of order", name, i, in));
      }
    }
  }
  if (output < 0 || static_cast<std::size_t>(output) >= nodes.size()) {
    throw InternalError("model '" + name + "': bad output node");
  }
  if (rule.node < 0 || static_cast<std::size_t>(rule.node) >= nodes.size()) {
    throw InternalError("model '" + name + "': decision rule reads no node");
  }
  if (static_cast<int>(input_names.size()) != input_width()) {
    throw InternalError("model '" + name + "': input names do not match the input width");
  }
}

ModelBuilder::ModelBuilder(std::string name, std::vector<std::string> input_names) {
  model_.name = std::move(name);
  Node in;
  in.op = OpKind::Input;
  in.name = "input";
  in.width = static_cast<int>(input_names.size());
  model_.input_names = std::move(input_names);
  model_.nodes.push_back(std::move(in));
}

void ModelBuilder::set_source(std::string file, std::string format) {
  model_.source = std::move(file);
  model_.format = std::move(format);
}

void ModelBuilder::fail(const std::string& where, const std::string& what) const {
  throw InputError(model_.source, where, what);
}

void ModelBuilder::check_id(int id, const std::string& where) const {
  if (id < 0 || static_cast<std::size_t>(id) >= model_.nodes.size()) {
    fail(where, fmt::format("reads an undefined value (node {})", id));
  }
}

int ModelBuilder::width(int node) const { return model_.nodes.at(static_cast<std::size_t>(node)).width; }

const Node& ModelBuilder::node(int id) const { return model_.nodes.at(static_cast<std::size_t>(id)); }

int ModelBuilder::add(Node n) {
  if (n.width <= 0) fail(n.name, "produces an empty vector");
  model_.nodes.push_back(std::move(n));
  return static_cast<int>(model_.nodes.size()) - 1;
}

int ModelBuilder::constant(Eigen::VectorXd values, const std::string& where) {
  if (!values.allFinite()) fail(where, "constant contains NaN or infinity");
  Node n;
  n.op = OpKind::Constant;
  n.name = where;
  n.width = static_cast<int>(values.size());
  n.values = std::move(values);
  return add(std::move(n));
}

int ModelBuilder::dense(int x, Eigen::MatrixXd weights, Eigen::VectorXd bias, const std::string& where) {
  check_id(x, where);
  if (weights.cols() != width(x)) {
    fail(where, fmt::format("weights have {} inputs but the incoming vector has {}", weights.cols(), width(x)));
  }
  if (bias.size() != weights.rows()) {
    fail(where, fmt::format("bias has {} entries, expected {}", bias.size(), weights.rows()));
  }
  if (!weights.allFinite()) fail(where, "weights contain NaN or infinity");
  if (!bias.allFinite()) fail(where, "bias contains NaN or infinity");
  Node n;
  n.op = OpKind::Dense;
  n.name = where;
  n.inputs = {x};
  n.width = static_cast<int>(weights.rows());
  n.weights = std::move(weights);
  n.values = std::move(bias);
  return add(std::move(n));
}

int ModelBuilder::unary(OpKind op, int x, const std::string& where, double alpha) {
  check_id(x, where);
  if (!is_unary(op)) throw InternalError(std::string("ModelBuilder::unary: not a unary op: ") + op_name(op));
  if (!std::isfinite(alpha)) fail(where, "alpha is NaN or infinite");
  Node n;
  n.op = op;
  n.name = where;
  n.inputs = {x};
  n.width = width(x);
  n.alpha = alpha;
  return add(std::move(n));
}

int ModelBuilder::binary(OpKind op, int a, int b, const std::string& where) {
  check_id(a, where);
  check_id(b, where);
  if (!is_elementwise_binary(op)) {
    throw InternalError(std::string("ModelBuilder::binary: not a binary op: ") + op_name(op));
  }
  const int wa = width(a);
  const int wb = width(b);
  if (wa != wb && wa != 1 && wb != 1) {
    fail(where, fmt::format("operands have widths {} and {}; they must match or one must be 1", wa, wb));
  }
  Node n;
  n.op = op;
  n.name = where;
  n.inputs = {a, b};
  n.width = std::max(wa, wb);
  return add(std::move(n));
}

int ModelBuilder::where(int cond, int a, int b, const std::string& where_) {
  check_id(cond, where_);
  check_id(a, where_);
  check_id(b, where_);
  const int w = std::max({width(cond), width(a), width(b)});
  for (int id : {cond, a, b}) {
    if (width(id) != w && width(id) != 1) {
      fail(where_, fmt::format("Where operands have widths {}, {}, {}", width(cond), width(a), width(b)));
    }
  }
  Node n;
  n.op = OpKind::Where;
  n.name = where_;
  n.inputs = {cond, a, b};
  n.width = w;
  return add(std::move(n));
}

int ModelBuilder::select(int x, std::vector<int> indices, const std::string& where) {
  check_id(x, where);
  for (int i : indices) {
    if (i < 0 || i >= width(x)) fail(where, fmt::format("index {} is outside [0, {})", i, width(x)));
  }
  Node n;
  n.op = OpKind::Select;
  n.name = where;
  n.inputs = {x};
  n.width = static_cast<int>(indices.size());
  n.indices = std::move(indices);
  return add(std::move(n));
}

int ModelBuilder::lookup(int index, Eigen::MatrixXd table, const std::string& where) {
  check_id(index, where);
  if (width(index) != 1) fail(where, fmt::format("lookup index must be a single value, got width {}", width(index)));
  if (table.rows() == 0 || table.cols() == 0) fail(where, "lookup table is empty");
  if (!table.allFinite()) fail(where, "lookup table contains NaN or infinity");
  Node n;
  n.op = OpKind::Lookup;
  n.name = where;
  n.inputs = {index};
  n.width = static_cast<int>(table.cols());
  n.weights = std::move(table);
  return add(std::move(n));
}

int ModelBuilder::concat(const std::vector<int>& parts, const std::string& where) {
  if (parts.empty()) fail(where, "Concat of nothing");
  int w = 0;
  for (int p : parts) {
    check_id(p, where);
    w += width(p);
  }
  Node n;
  n.op = OpKind::Concat;
  n.name = where;
  n.inputs = parts;
  n.width = w;
  return add(std::move(n));
}

int ModelBuilder::argmax(int x, const std::string& where) {
  check_id(x, where);
  Node n;
  n.op = OpKind::ArgMax;
  n.name = where;
  n.inputs = {x};
  n.width = 1;
  return add(std::move(n));
}

namespace {

bool indexed(const TreeEnsemble& te) {
  return std::all_of(te.trees.begin(), te.trees.end(),
                     [](const TreeEnsemble::Tree& t) { return t.leaf_begin.size() == t.nodes.size() + 1; });
}

void index_leaves(TreeEnsemble::Tree& tree) {
  std::stable_sort(tree.leaves.begin(), tree.leaves.end(),
                   [](const TreeEnsemble::Leaf& a, const TreeEnsemble::Leaf& b) { return a.node < b.node; });
  tree.leaf_begin.assign(tree.nodes.size() + 1, 0);
  for (const auto& leaf : tree.leaves) ++tree.leaf_begin[static_cast<std::size_t>(leaf.node) + 1];
  for (std::size_t i = 1; i < tree.leaf_begin.size(); ++i) tree.leaf_begin[i] += tree.leaf_begin[i - 1];
}

}  // namespace

int ModelBuilder::tree_ensemble(int x, std::shared_ptr<const TreeEnsemble> trees, const std::string& where) {
  check_id(x, where);
  if (!trees || trees->trees.empty()) fail(where, "tree ensemble has no trees");
  if (trees->n_targets <= 0) fail(where, "tree ensemble has no outputs");
  if (!trees->base_values.empty() && static_cast<int>(trees->base_values.size()) != trees->n_targets) {
    fail(where, fmt::format("{} base values for {} outputs", trees->base_values.size(), trees->n_targets));
  }
  for (std::size_t k = 0; k < trees->base_values.size(); ++k) {
    if (!std::isfinite(trees->base_values[k]))
      fail(where, fmt::format("base value {} is {}; expected a finite number", k, trees->base_values[k]));
  }
  for (std::size_t t = 0; t < trees->trees.size(); ++t) {
    const auto& tree = trees->trees[t];
    const int count = static_cast<int>(tree.nodes.size());
    if (count == 0) fail(where, fmt::format("tree {} has no nodes", t));
    for (int i = 0; i < count; ++i) {
      const auto& nd = tree.nodes[static_cast<std::size_t>(i)];
      if (nd.mode == TreeEnsemble::Mode::Leaf) continue;
      if (nd.feature < 0 || nd.feature >= width(x)) {
        fail(where, fmt::format("tree {} node {} tests feature {}, but the input has {}", t, i, nd.feature, width(x)));
      }
      if (!std::isfinite(nd.threshold) && !std::isinf(nd.threshold)) {
        fail(where, fmt::format("tree {} node {} has a NaN threshold", t, i));
      }
      if (nd.mode == TreeEnsemble::Mode::Member &&
          (nd.members.empty() || !std::is_sorted(nd.members.begin(), nd.members.end()) ||
           !std::all_of(nd.members.begin(), nd.members.end(), [](double v) { return std::isfinite(v); }))) {
        fail(where, fmt::format("tree {} node {} has a set split whose values are not finite and sorted", t, i));
      }
      // Children must come later: this rules out cycles, so evaluation always ends.
      if (nd.true_child <= i || nd.true_child >= count || nd.false_child <= i || nd.false_child >= count) {
        fail(where, fmt::format("tree {} node {} has children {} and {} (expected later nodes of the tree)", t, i,
                                nd.true_child, nd.false_child));
      }
    }
    for (const auto& leaf : tree.leaves) {
      if (leaf.node < 0 || leaf.node >= count ||
          tree.nodes[static_cast<std::size_t>(leaf.node)].mode != TreeEnsemble::Mode::Leaf) {
        fail(where, fmt::format("tree {} has a weight for node {}, which is not a leaf", t, leaf.node));
      }
      if (leaf.target < 0 || leaf.target >= trees->n_targets) {
        fail(where,
             fmt::format("tree {} leaf {} targets output {} of {}", t, leaf.node, leaf.target, trees->n_targets));
      }
      if (!std::isfinite(leaf.weight))
        fail(where, fmt::format("tree {} leaf {} has a non-finite weight", t, leaf.node));
    }
  }
  if (!indexed(*trees)) {
    auto copy = std::make_shared<TreeEnsemble>(*trees);
    for (auto& tree : copy->trees) index_leaves(tree);
    trees = std::move(copy);
  }
  Node n;
  n.op = OpKind::TreeEnsemble;
  n.name = where;
  n.inputs = {x};
  n.width = trees->binary_single_score ? 2 : trees->n_targets;
  n.trees = std::move(trees);
  return add(std::move(n));
}

int ModelBuilder::copy_node(const Node& n, const std::vector<int>& in, const std::string& where) {
  if (in.size() != n.inputs.size()) fail(where, fmt::format("copy of a {} with {} inputs", op_name(n.op), in.size()));
  if (is_elementwise_binary(n.op)) return binary(n.op, in[0], in[1], where);
  if (is_unary(n.op)) return unary(n.op, in[0], where, n.alpha);
  switch (n.op) {
    case OpKind::Constant: return constant(n.values, where);
    case OpKind::Dense: return dense(in[0], n.weights, n.values, where);
    case OpKind::Where: return this->where(in[0], in[1], in[2], where);
    case OpKind::Select: return select(in[0], n.indices, where);
    case OpKind::Lookup: return lookup(in[0], n.weights, where);
    case OpKind::Concat: return concat(in, where);
    case OpKind::ArgMax: return argmax(in[0], where);
    case OpKind::TreeEnsemble: return tree_ensemble(in[0], n.trees, where);
    default: break;
  }
  throw InternalError(std::string("ModelBuilder::copy_node: cannot copy a node of kind ") + op_name(n.op));
}

Model ModelBuilder::finish(int output, DecisionRule rule, std::vector<std::string> output_names) {
  check_id(output, "output");
  model_.output = output;
  if (output_names.empty()) {
    for (int i = 0; i < width(output); ++i) output_names.push_back("y" + std::to_string(i));
  }
  if (static_cast<int>(output_names.size()) != width(output)) {
    fail("output", fmt::format("{} output names for {} outputs", output_names.size(), width(output)));
  }
  model_.output_names = std::move(output_names);
  model_.rule = std::move(rule);
  if (model_.rule.node < 0) {
    std::vector<std::string> labels = std::move(model_.rule.class_labels);
    model_.rule = default_rule(model_);
    model_.rule.class_labels = std::move(labels);
  }
  check_id(model_.rule.node, "decision rule");
  if (model_.rule.kind == DecisionRule::Kind::Threshold &&
      (model_.rule.index < 0 || model_.rule.index >= width(model_.rule.node))) {
    fail("decision rule", "threshold reads an output that does not exist");
  }
  model_.validate();
  return std::move(model_);
}

namespace {

// [1 - sigmoid(z), sigmoid(z)] (a binary network's two probabilities, as skl2onnx writes them): its
// argmax is class 1 iff sigmoid(z) > 0.5, decided on the logit z.
int binary_logit(const Model& m, const Node& out) {
  if (out.op != OpKind::Concat || out.inputs.size() != 2 || out.width != 2) return -1;
  const Node& q = m.nodes[static_cast<std::size_t>(out.inputs[0])];
  const Node& p = m.nodes[static_cast<std::size_t>(out.inputs[1])];
  if (p.op != OpKind::Sigmoid || p.width != 1 || q.op != OpKind::Sub || q.width != 1 || q.inputs.size() != 2 ||
      q.inputs[1] != out.inputs[1])
    return -1;
  const Node& one = m.nodes[static_cast<std::size_t>(q.inputs[0])];
  if (one.op != OpKind::Constant || one.values.size() != 1 || one.values[0] != 1.0) return -1;
  return p.inputs[0];
}

}  // namespace

DecisionRule default_rule(const Model& m) {
  int node = m.output;
  const Node& out = m.nodes[static_cast<std::size_t>(node)];
  if (const int logit = binary_logit(m, out); logit >= 0) return DecisionRule::threshold_on(logit, 0.0);
  if ((out.op == OpKind::Sigmoid || out.op == OpKind::Softmax) && !out.inputs.empty()) node = out.inputs[0];
  const Node& decided = m.nodes[static_cast<std::size_t>(node)];
  if (decided.op == OpKind::ArgMax) return DecisionRule::direct(node);
  if (decided.width == 1) return DecisionRule::threshold_on(node, 0.0);
  return DecisionRule::argmax_of(node);
}

}  // namespace witness
