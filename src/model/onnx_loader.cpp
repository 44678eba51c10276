// ONNX loader: onnx::ModelProto -> model IR. This file holds the driver (parse_onnx, load_onnx,
// Loader::load: graph inputs, the live nodes, outputs and metadata) and the op dispatch; the values,
// tensors and ops are in the other src/model/onnx_*.cpp files, declared in onnx_internal.h.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>

#include "model/columns.h"
#include "model/loaders.h"
#include "model/onnx_internal.h"

namespace witness {
namespace onnx_detail {
namespace {

// Metadata written by save_onnx so that a round trip keeps the decision rule and the names.
constexpr const char* kMetaRule = "witness.rule";
constexpr const char* kMetaLabels = "witness.class_labels";
constexpr const char* kMetaInputs = "witness.input_names";
constexpr const char* kMetaOutputs = "witness.output_names";
constexpr const char* kMetaColumns = "witness.columns";

std::vector<std::string> json_strings(const nlohmann::json& j, const std::string& path, const char* key) {
  if (!j.is_array()) throw InputError(path, fmt::format("metadata '{}'", key), "expected a JSON array of strings");
  std::vector<std::string> out;
  for (const auto& s : j) {
    if (!s.is_string()) throw InputError(path, fmt::format("metadata '{}'", key), "expected a JSON array of strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Graph

void Loader::convert(const Ctx& c, const std::string& domain) {
  const std::string& op = c.node.op_type();
  if (domain == "ai.onnx.ml") {
    if (op == "TreeEnsembleClassifier") return op_tree_classifier(c);
    if (op == "TreeEnsembleRegressor") return op_tree_regressor(c);
    if (op == "TreeEnsemble") {
      if (ml_opset_ < 5)
        fail(c.where, fmt::format("TreeEnsemble needs ai.onnx.ml opset 5; the model imports {}", ml_opset_));
      return op_tree_ensemble(c);
    }
    if (op == "LinearClassifier") return op_linear_classifier(c);
    if (op == "LinearRegressor") return op_linear_regressor(c);
    if (op == "Scaler") return op_scaler(c);
    if (op == "ZipMap") return op_zipmap(c);  // the scores, keyed by label: same values
    if (op == "Normalizer") return op_normalizer(c);
  } else if (domain.empty() || domain == "ai.onnx") {
    if (op == "Gemm") return op_gemm(c);
    if (op == "MatMul") return op_matmul(c);
    if (op == "Add") return op_elementwise(c, OpKind::Add);
    if (op == "Sub") return op_elementwise(c, OpKind::Sub);
    if (op == "Mul") return op_elementwise(c, OpKind::Mul);
    if (op == "Div") return op_elementwise(c, OpKind::Div);
    if (op == "Less") return op_elementwise(c, OpKind::Less);
    if (op == "LessOrEqual") return op_elementwise(c, OpKind::LessEqual);
    if (op == "Greater") return op_elementwise(c, OpKind::Greater);
    if (op == "GreaterOrEqual") return op_elementwise(c, OpKind::GreaterEqual);
    if (op == "Equal") return op_elementwise(c, OpKind::Equal);
    if (op == "Where") return op_where(c);
    if (op == "Relu") return op_unary(c, OpKind::Relu);
    if (op == "LeakyRelu") return op_unary(c, OpKind::LeakyRelu, attr_finite_float(c, "alpha", 0.01F));
    if (op == "Sigmoid") return op_unary(c, OpKind::Sigmoid);
    if (op == "Tanh") return op_unary(c, OpKind::Tanh);
    if (op == "Softmax") return op_softmax(c);
    if (op == "Identity") return op_alias(c);
    if (op == "Dropout") {
      if (c.node.output_size() > 1 && !c.node.output(1).empty() &&
          (!consumers_[c.node.output(1)].empty() || graph_outputs_.count(c.node.output(1)) != 0)) {
        unsupported(c.where, "Dropout's mask output is not supported");
      }
      // training_mode (opset 12 on) true drops values at random: no function of the input.
      if (has_input(c, 2)) {
        const Value& training = get(c, 2);
        const auto& v = training.c.data;
        if (!training.is_const || std::any_of(v.begin(), v.end(), [](double t) { return t != 0.0; }))
          unsupported(c.where, "Dropout in training mode (training_mode not a constant false)");
      }
      return op_alias(c);  // inference: the identity
    }
    if (op == "Flatten") return op_flatten(c);
    if (op == "Reshape") return op_reshape(c);
    if (op == "Squeeze") return op_squeeze(c, false);
    if (op == "Unsqueeze") return op_squeeze(c, true);
    if (op == "Cast") return op_cast(c);
    if (op == "Constant") return op_constant(c);
    if (op == "Gather") return op_gather(c);
    if (op == "Slice") return op_slice(c);
    if (op == "Concat") return op_concat(c);
    if (op == "ArgMax") return op_argmax(c);
  }
  unsupported(c.where, fmt::format("op type '{}.{}' is not supported", domain.empty() ? "ai.onnx" : domain, op));
}

void Loader::set_opsets(const onnx::ModelProto& mp) {
  bool seen_default = false;
  bool seen_ml = false;
  for (const auto& o : mp.opset_import()) {
    const bool ml = o.domain() == "ai.onnx.ml";
    if (!ml && !o.domain().empty() && o.domain() != "ai.onnx") continue;  // ops of other domains are refused
    bool& seen = ml ? seen_ml : seen_default;
    const char* name = ml ? "ai.onnx.ml" : "the default domain (ai.onnx)";
    if (seen) fail("opset_import", fmt::format("imports {} twice", name));
    seen = true;
    const std::int64_t lo = ml ? kMinMlOpset : kMinOpset;
    const std::int64_t hi = ml ? kMaxMlOpset : kMaxOpset;
    if (o.version() < lo || o.version() > hi) {
      fail("opset_import", fmt::format("{} opset {}: witness reads opsets {} to {}", name, o.version(), lo, hi));
    }
    (ml ? ml_opset_ : opset_) = o.version();
  }
}

Model Loader::load(const onnx::ModelProto& mp) {
  set_opsets(mp);
  if (!mp.has_graph()) fail("", "the model has no graph");
  const onnx::GraphProto& g = mp.graph();
  if (g.node_size() > kMaxNodes) fail("graph", fmt::format("{} nodes is too many", g.node_size()));
  if (g.sparse_initializer_size() > 0) unsupported("graph", "sparse initializers are not supported");
  std::map<std::string, nlohmann::json> meta = read_metadata(mp);
  for (const auto& t : g.initializer()) {
    if (!initializers_.emplace(t.name(), &t).second)
      fail("graph", fmt::format("initializer '{}' appears twice", t.name()));
  }
  add_inputs(g, meta);
  // Convert only nodes that some graph output (or the stored decision rule) depends on.
  std::string rule_value;
  if (const auto it = meta.find(kMetaRule); it != meta.end()) {
    const auto v = it->second.find("value");
    if (!it->second.is_object() || v == it->second.end() || !v->is_string()) {
      fail(fmt::format("metadata '{}'", kMetaRule), "expected an object with a string \"value\"");
    }
    rule_value = v->get<std::string>();
  }
  convert_live_nodes(g, rule_value);
  return finish(g, meta, rule_value);
}

std::map<std::string, nlohmann::json> Loader::read_metadata(const onnx::ModelProto& mp) const {
  std::map<std::string, nlohmann::json> meta;
  for (const auto& p : mp.metadata_props()) {
    if (p.key() != kMetaRule && p.key() != kMetaLabels && p.key() != kMetaInputs && p.key() != kMetaOutputs &&
        p.key() != kMetaColumns)
      continue;
    nlohmann::json j = nlohmann::json::parse(p.value(), nullptr, false);
    if (j.is_discarded()) fail(fmt::format("metadata '{}'", p.key()), "not valid JSON");
    meta[p.key()] = std::move(j);
  }

  return meta;
}

void Loader::add_inputs(const onnx::GraphProto& g, const std::map<std::string, nlohmann::json>& meta) {
  // Graph inputs, concatenated into the IR's one input vector.
  struct Input {
    std::string name;
    bool batched = true;
    Dims dims;
    std::int64_t width = 0;
    bool integer = false;
  };
  std::vector<Input> inputs;
  std::int64_t total = 0;
  for (const auto& in : g.input()) {
    if (initializers_.count(in.name()) != 0) continue;  // an initializer's default
    const std::string where = fmt::format("input '{}'", in.name());
    if (!in.type().has_tensor_type()) unsupported(where, "is not a tensor");
    const auto& tt = in.type().tensor_type();
    if (!float_type(tt.elem_type()) && !integer_type(tt.elem_type())) {
      unsupported(where, fmt::format("has element type {}; expected a numeric type", tt.elem_type()));
    }
    if (!tt.has_shape()) fail(where, "has no shape; expected [N, k]");
    Input x;
    x.name = in.name();
    x.integer = integer_type(tt.elem_type());
    const auto& dims = tt.shape().dim();
    // [N, k...] with a batch dim; [k] or a scalar without; [N] (symbolic) is one value per row.
    if (dims.empty()) {
      x.batched = false;
    } else if (dims.size() == 1) {
      x.batched = !dims[0].has_dim_value();
      if (!x.batched) x.dims = {dims[0].dim_value()};
    } else {
      for (int i = 1; i < dims.size(); ++i) {
        if (!dims[i].has_dim_value() || dims[i].dim_value() <= 0) {
          fail(where, fmt::format("dimension {} must be a fixed positive size; expected [N, k]", i));
        }
        x.dims.push_back(dims[i].dim_value());
      }
    }
    x.width = count_of(x.dims, kMaxWidth);
    if (x.width <= 0)
      fail(where, fmt::format("has per-row shape {}; expected a positive, bounded size", dims_str(x.dims)));
    total += x.width;
    if (total > kMaxWidth) fail(where, "the inputs are too wide");
    inputs.push_back(std::move(x));
  }
  if (inputs.empty()) fail("graph", "has no inputs");

  std::vector<std::string> names;
  for (const Input& x : inputs) {
    for (std::int64_t i = 0; i < x.width; ++i) {
      names.push_back(x.width == 1 ? x.name : fmt::format("{}[{}]", x.name, i));
    }
  }
  if (const auto it = meta.find(kMetaInputs); it != meta.end()) {
    std::vector<std::string> m = json_strings(it->second, path_, kMetaInputs);
    if (m.size() != names.size()) {
      fail(fmt::format("metadata '{}'", kMetaInputs), fmt::format("{} names for {} inputs", m.size(), names.size()));
    }
    names = std::move(m);
  }
  b_.emplace(g.name().empty() ? std::string("model") : g.name(), std::move(names));
  b_->set_source(path_, "onnx");
  std::int64_t offset = 0;
  for (const Input& x : inputs) {
    int node = b_->input();
    if (inputs.size() > 1) {
      std::vector<int> idx(static_cast<std::size_t>(x.width));
      std::iota(idx.begin(), idx.end(), static_cast<int>(offset));
      node = b_->select(node, std::move(idx), fmt::format("input '{}'", x.name));
    }
    offset += x.width;
    Value v = dynamic(node, x.batched, x.dims, "graph");
    v.integer = x.integer;
    if (!values_.emplace(x.name, std::move(v)).second) fail("graph", fmt::format("input '{}' appears twice", x.name));
  }
}

void Loader::convert_live_nodes(const onnx::GraphProto& g, const std::string& rule_value) {
  std::unordered_set<std::string> needed;
  for (const auto& o : g.output()) {
    needed.insert(o.name());
    graph_outputs_.insert(o.name());
  }
  if (!rule_value.empty()) needed.insert(rule_value);
  std::vector<bool> live(static_cast<std::size_t>(g.node_size()), false);
  for (int i = g.node_size(); i-- > 0;) {
    const auto& n = g.node(i);
    for (const auto& out : n.output())
      live[static_cast<std::size_t>(i)] = live[static_cast<std::size_t>(i)] || needed.count(out) != 0;
    if (!live[static_cast<std::size_t>(i)]) continue;
    for (int k = 0; k < n.input_size(); ++k) {
      needed.insert(n.input(k));
      consumers_[n.input(k)].emplace_back(&n, k);
    }
  }
  for (int i = 0; i < g.node_size(); ++i) {
    if (!live[static_cast<std::size_t>(i)]) continue;
    const auto& n = g.node(i);
    const std::string where =
        n.name().empty() ? fmt::format("node #{} ({})", i, n.op_type()) : fmt::format("node '{}'", n.name());
    convert(Ctx{n, where}, n.domain());
  }
}

// The model output: the first graph output that is not an integer label, and the decision rule.
Model Loader::finish(const onnx::GraphProto& g, std::map<std::string, nlohmann::json>& meta,
                     const std::string& rule_value) {
  if (g.output_size() == 0) fail("graph", "has no outputs");
  const onnx::ValueInfoProto* chosen = nullptr;
  for (const auto& o : g.output()) {
    Value& v = lookup(o.name(), fmt::format("output '{}'", o.name()));
    const bool int_type = o.type().has_tensor_type() && (integer_type(o.type().tensor_type().elem_type()) ||
                                                         o.type().tensor_type().elem_type() == Proto::STRING);
    if (int_type || v.is_label) continue;
    chosen = &o;
    break;
  }
  if (chosen == nullptr) chosen = &g.output(0);
  const std::string where = fmt::format("output '{}'", chosen->name());
  Value& v = lookup(chosen->name(), where);
  int out = -1;
  DecisionRule rule;
  if (v.is_label) {
    out = v.label_scores;  // a classifier whose only output is its label: report its scores
  } else {
    out = dyn(v, where).node;
  }
  if (v.rule_node >= 0) rule = DecisionRule::argmax_of(v.rule_node);
  rule.class_labels = v.class_labels;
  if (!rule_value.empty()) {
    const std::string mw = fmt::format("metadata '{}'", kMetaRule);
    const nlohmann::json& j = meta[kMetaRule];
    const auto kind = j.find("kind");
    if (kind == j.end() || !kind->is_string()) fail(mw, "expected a string \"kind\"");
    const int node = dyn(lookup(rule_value, mw), mw).node;
    if (*kind == "threshold") {
      const auto idx = j.find("index");
      const auto thr = j.find("threshold");
      if (idx == j.end() || !idx->is_number_integer() || thr == j.end() || !thr->is_number()) {
        fail(mw, "expected an integer \"index\" and a number \"threshold\"");
      }
      const auto i = idx->get<std::int64_t>();
      if (i < 0 || i >= b_->width(node)) fail(mw, fmt::format("index {} is out of range", i));
      rule = DecisionRule::threshold_on(node, thr->get<double>(), static_cast<int>(i));
    } else if (*kind == "argmax") {
      rule = DecisionRule::argmax_of(node);
    } else if (*kind == "direct") {
      rule = DecisionRule::direct(node);
    } else {
      fail(mw, "\"kind\" must be threshold, argmax or direct");
    }
  }
  if (const auto it = meta.find(kMetaLabels); it != meta.end()) {
    rule.class_labels = json_strings(it->second, path_, kMetaLabels);
  }
  const int width = b_->width(out);
  std::vector<std::string> out_names;
  out_names.reserve(static_cast<std::size_t>(width));
  for (int i = 0; i < width; ++i) {
    out_names.push_back(width == 1 ? chosen->name() : fmt::format("{}[{}]", chosen->name(), i));
  }
  if (const auto it = meta.find(kMetaOutputs); it != meta.end()) {
    std::vector<std::string> m = json_strings(it->second, path_, kMetaOutputs);
    if (static_cast<int>(m.size()) != width) {
      fail(fmt::format("metadata '{}'", kMetaOutputs), fmt::format("{} names for {} outputs", m.size(), width));
    }
    out_names = std::move(m);
  }
  Model m = b_->finish(out, std::move(rule), std::move(out_names));
  if (const auto it = meta.find(kMetaColumns); it != meta.end()) {
    m.columns = raw_columns_from_json(it->second, path_);
    check_raw_columns(m);
  }
  return m;
}

}  // namespace onnx_detail

Model parse_onnx(const std::string& bytes, const std::string& path) {
  onnx::ModelProto mp;
  if (!mp.ParseFromString(bytes)) throw InputError(path, "", "not a valid ONNX protobuf");
  if (onnx_detail::reads_raw_columns(mp)) {
    // A pipeline over raw columns: its preprocessing becomes the model's column encodings.
    onnx_detail::LiftedColumns lifted = onnx_detail::lift_columns(mp, path);
    const Model inner = onnx_detail::Loader(path).load(lifted.classifier);
    return with_raw_columns(inner, std::move(lifted.columns), lifted.sources);
  }
  return onnx_detail::Loader(path).load(mp);
}

Model load_onnx(const std::string& path) { return parse_onnx(read_file(path), path); }

}  // namespace witness
