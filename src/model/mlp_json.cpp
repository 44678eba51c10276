// mlp-json-v1: {"format": "mlp-json-v1", "name", "input_dim", "layer_sizes",
//               "layers": [{"activation", "weights": [out][in], "bias": [out]}, ...]}
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file.h"
#include "model/loaders.h"

namespace witness {
namespace {

using nlohmann::json;

const json& field(const json& obj, const char* key, const std::string& path, const std::string& where) {
  const auto it = obj.find(key);
  if (it == obj.end()) throw InputError(path, where, fmt::format("missing field \"{}\"", key));
  return *it;
}

double number(const json& v, const std::string& path, const std::string& where) {
  if (!v.is_number()) throw InputError(path, where, fmt::format("expected a number, got {}", v.type_name()));
  return v.get<double>();
}

int activation_node(ModelBuilder& b, int x, const std::string& act, const std::string& path, const std::string& where) {
  if (act == "relu") return b.unary(OpKind::Relu, x, where + "/relu");
  if (act == "sigmoid") return b.unary(OpKind::Sigmoid, x, where + "/sigmoid");
  if (act == "softmax") return b.unary(OpKind::Softmax, x, where + "/softmax");
  if (act == "tanh") return b.unary(OpKind::Tanh, x, where + "/tanh");
  if (act == "linear") return x;
  throw UnsupportedError(path, where,
                         fmt::format("activation \"{}\" (expected relu, sigmoid, softmax, tanh or linear)", act));
}

}  // namespace

Model parse_mlp_json(const std::string& text, const std::string& path) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    // parse_error carries the line and column; out_of_range (a number too large) does not.
    std::string what = e.what();
    const auto pos = what.find("parse error");
    throw InputError(path, "", "not valid JSON: " + (pos == std::string::npos ? what : what.substr(pos)));
  }
  if (!doc.is_object()) throw InputError(path, "", "expected a JSON object at the top level");
  const json& format = field(doc, "format", path, "");
  if (!format.is_string() || format.get<std::string>() != "mlp-json-v1") {
    throw InputError(path, "format", "expected \"mlp-json-v1\"");
  }
  const json& dim = field(doc, "input_dim", path, "");
  if (!dim.is_number_integer() || dim.get<long long>() <= 0 || dim.get<long long>() > 1'000'000) {
    throw InputError(path, "input_dim", "expected a positive integer");
  }
  const int input_dim = dim.get<int>();
  std::vector<std::string> names;
  if (const auto it = doc.find("input_names"); it != doc.end()) {
    if (!it->is_array() || static_cast<int>(it->size()) != input_dim) {
      throw InputError(path, "input_names", fmt::format("expected an array of {} strings", input_dim));
    }
    for (const json& n : *it) {
      if (!n.is_string()) throw InputError(path, "input_names", "expected strings");
      names.push_back(n.get<std::string>());
    }
  } else {
    for (int i = 0; i < input_dim; ++i) names.push_back("x" + std::to_string(i));
  }
  std::string name = "model";
  if (const auto it = doc.find("name"); it != doc.end() && it->is_string()) name = it->get<std::string>();

  ModelBuilder b(name, names);
  b.set_source(path, "mlp-json-v1");
  const json& layers = field(doc, "layers", path, "");
  if (!layers.is_array() || layers.empty()) throw InputError(path, "layers", "expected a non-empty array");
  int x = b.input();
  for (std::size_t li = 0; li < layers.size(); ++li) {
    const std::string where = fmt::format("layers[{}]", li);
    const json& layer = layers[li];
    if (!layer.is_object()) throw InputError(path, where, "expected an object");
    const json& w = field(layer, "weights", path, where);
    const json& bias = field(layer, "bias", path, where);
    if (!w.is_array() || w.empty()) throw InputError(path, where + ".weights", "expected a non-empty [out][in] array");
    if (!bias.is_array()) throw InputError(path, where + ".bias", "expected an array");
    const auto out = static_cast<Eigen::Index>(w.size());
    const Eigen::Index in = b.width(x);
    // Check every row's length before allocating: out x in must be backed by numbers in the file.
    for (Eigen::Index r = 0; r < out; ++r) {
      const json& row = w[static_cast<std::size_t>(r)];
      if (!row.is_array() || static_cast<Eigen::Index>(row.size()) != in) {
        throw InputError(path, fmt::format("{}.weights[{}]", where, r),
                         fmt::format("expected {} numbers (the previous layer's width)", in));
      }
    }
    Eigen::MatrixXd W(out, in);
    for (Eigen::Index r = 0; r < out; ++r) {
      const json& row = w[static_cast<std::size_t>(r)];
      const std::string rw = fmt::format("{}.weights[{}]", where, r);
      for (Eigen::Index c = 0; c < in; ++c) W(r, c) = number(row[static_cast<std::size_t>(c)], path, rw);
    }
    if (static_cast<Eigen::Index>(bias.size()) != out) {
      throw InputError(path, where + ".bias", fmt::format("expected {} numbers, got {}", out, bias.size()));
    }
    Eigen::VectorXd B(out);
    for (Eigen::Index r = 0; r < out; ++r) B(r) = number(bias[static_cast<std::size_t>(r)], path, where + ".bias");
    x = b.dense(x, std::move(W), std::move(B), where);
    std::string act = "linear";
    if (const auto it = layer.find("activation"); it != layer.end()) {
      if (!it->is_string()) throw InputError(path, where + ".activation", "expected a string");
      act = it->get<std::string>();
    }
    x = activation_node(b, x, act, path, where);
  }
  if (const auto it = doc.find("layer_sizes"); it != doc.end()) {
    if (!it->is_array()) throw InputError(path, "layer_sizes", "expected an array of integers");
    std::vector<int> declared;
    for (const json& s : *it) {
      if (!s.is_number_integer()) throw InputError(path, "layer_sizes", "expected integers");
      declared.push_back(s.get<int>());
    }
    std::vector<int> actual{input_dim};
    for (const json& layer : layers) actual.push_back(static_cast<int>(layer["weights"].size()));
    if (declared != actual) throw InputError(path, "layer_sizes", "does not match the layers' weight shapes");
  }
  return b.finish(x, DecisionRule{});
}

Model load_mlp_json(const std::string& path) { return parse_mlp_json(read_file(path), path); }

void save_mlp_json(const Model& model, const std::string& path) {
  json layers = json::array();
  for (std::size_t i = 0; i < model.nodes.size(); ++i) {
    const Node& n = model.nodes[i];
    if (n.op == OpKind::Input) continue;
    if (n.op == OpKind::Dense) {
      json w = json::array();
      for (Eigen::Index r = 0; r < n.weights.rows(); ++r) {
        json row = json::array();
        for (Eigen::Index c = 0; c < n.weights.cols(); ++c) row.push_back(n.weights(r, c));
        w.push_back(std::move(row));
      }
      json bias = json::array();
      for (Eigen::Index r = 0; r < n.values.size(); ++r) bias.push_back(n.values(r));
      layers.push_back({{"activation", "linear"}, {"weights", std::move(w)}, {"bias", std::move(bias)}});
      continue;
    }
    const char* act = nullptr;
    switch (n.op) {
      case OpKind::Relu: act = "relu"; break;
      case OpKind::Sigmoid: act = "sigmoid"; break;
      case OpKind::Softmax: act = "softmax"; break;
      case OpKind::Tanh: act = "tanh"; break;
      default: break;
    }
    if (act == nullptr || layers.empty() || layers.back()["activation"] != "linear") {
      std::string what = "mlp-json-v1 holds only Dense layers, each followed by at most one activation";
      if (model.format == "nnet") what += " (the .nnet file's means/ranges need Sub/Div/Mul/Add nodes: write .onnx)";
      throw UnsupportedError(path, fmt::format("node {} ({})", i, op_name(n.op)), what);
    }
    layers.back()["activation"] = act;
  }
  json sizes = json::array({model.input_width()});
  for (const json& l : layers) sizes.push_back(l["weights"].size());
  json doc = {{"format", "mlp-json-v1"},
              {"name", model.name},
              {"source", model.source},
              {"input_dim", model.input_width()},
              {"input_names", model.input_names},
              {"layer_sizes", sizes},
              {"layers", layers}};
  // All or nothing: a full disk leaves no truncated file. Names read from UBJSON or protobuf may
  // hold invalid UTF-8, on which plain dump() throws: such bytes become U+FFFD.
  write_file(path, doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace witness
