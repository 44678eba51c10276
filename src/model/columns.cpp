#include "model/columns.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>
#include <set>
#include <string_view>

#include "core/error.h"

namespace witness {

double Normalisation::to_model(double raw) const {
  switch (form) {
    case Form::None: return raw;
    case Form::ScaleOffset: return raw * a + b;
    case Form::MeanStd: return (raw - a) / b;
    case Form::CenterScale: return (raw - a) * b;
  }
  return raw;
}

double Normalisation::to_raw(double model) const {
  switch (form) {
    case Form::None: return model;
    case Form::ScaleOffset: return (model - b) / a;
    case Form::MeanStd: return model * b + a;
    case Form::CenterScale: return model / b + a;
  }
  return model;
}

std::string Normalisation::describe(const std::string& name) const {
  switch (form) {
    case Form::None: return name;
    case Form::ScaleOffset: return fmt::format("{} * {} + {}", name, a, b);
    case Form::MeanStd: return fmt::format("({} - {}) / {}", name, a, b);
    case Form::CenterScale: return fmt::format("({} - {}) * {}", name, a, b);
  }
  return name;
}

double Normalisation::slope() const {
  switch (form) {
    case Form::None: return 1.0;
    case Form::ScaleOffset: return a;
    case Form::MeanStd: return 1.0 / b;
    case Form::CenterScale: return b;
  }
  return 1.0;
}

double Normalisation::intercept() const {
  switch (form) {
    case Form::None: return 0.0;
    case Form::ScaleOffset: return b;
    case Form::MeanStd: return -a / b;
    case Form::CenterScale: return -a * b;
  }
  return 0.0;
}

std::vector<int> raw_column_offsets(const std::vector<RawColumn>& columns) {
  std::vector<int> out;
  int at = 0;
  for (const RawColumn& c : columns) {
    out.push_back(at);
    at += c.width();
  }
  return out;
}

std::vector<std::string> raw_column_input_names(const std::vector<RawColumn>& columns) {
  std::vector<std::string> out;
  for (const RawColumn& c : columns) {
    if (!c.one_hot) {
      out.push_back(c.name);
      continue;
    }
    for (const std::string& label : c.categories) out.push_back(c.name + "=" + label);
  }
  return out;
}

namespace {

void check_columns(const std::vector<RawColumn>& columns, const std::string& source) {
  std::set<std::string, std::less<>> names;
  for (const RawColumn& c : columns) {
    const std::string where = fmt::format("column '{}'", c.name);
    if (c.name.empty()) throw InputError(source, "", "a raw column has no name");
    if (!names.insert(c.name).second) throw InputError(source, where, "is listed twice");
    if (c.categorical) {
      if (c.categories.empty()) throw InputError(source, where, "a categorical column has no categories");
      std::set<std::string_view> seen;
      for (const std::string& label : c.categories) {
        if (!seen.insert(label).second)
          throw InputError(source, where, fmt::format("category '{}' is listed twice", label));
      }
    } else if (c.one_hot || !c.categories.empty()) {
      throw InputError(source, where, "a numeric column has no categories");
    }
    if (c.one_hot && c.norm.form != Normalisation::Form::None)
      throw InputError(source, where, "a one-hot column cannot be normalised");
    const bool invertible = std::isfinite(c.norm.a) && std::isfinite(c.norm.b) &&
                            (c.norm.form == Normalisation::Form::None ||
                             (c.norm.form == Normalisation::Form::ScaleOffset ? c.norm.a != 0 : c.norm.b != 0));
    if (!invertible)
      throw InputError(source, where, fmt::format("the map {} is not invertible", c.norm.describe(c.name)));
  }
}

// sources[k] as a 0/1 matrix [features][inputs].
Eigen::MatrixXd selection(const std::vector<std::vector<int>>& sources, int width) {
  Eigen::MatrixXd p = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(sources.size()), width);
  for (std::size_t k = 0; k < sources.size(); ++k) {
    for (const int j : sources[k]) p(static_cast<Eigen::Index>(k), j) = 1.0;
  }
  return p;
}

// A Dense reading the transformed features, reading the inputs instead: column j of the new
// weights is the old column of the feature input j feeds (each input feeds at most one feature),
// so every product and sum is the one the original computes, in another order.
Eigen::MatrixXd gathered(const Eigen::MatrixXd& w, const std::vector<int>& feature_of, int width) {
  Eigen::MatrixXd out = Eigen::MatrixXd::Zero(w.rows(), width);
  for (int j = 0; j < width; ++j) {
    const int k = feature_of[static_cast<std::size_t>(j)];
    if (k >= 0) out.col(j) = w.col(k);
  }
  return out;
}

}  // namespace

Model with_raw_columns(const Model& inner, std::vector<RawColumn> columns,
                       const std::vector<std::vector<int>>& sources) {
  check_columns(columns, inner.source);
  std::vector<std::string> names = raw_column_input_names(columns);
  const int width = static_cast<int>(names.size());
  if (static_cast<int>(sources.size()) != inner.input_width())
    throw InputError(inner.source, "",
                     fmt::format("{} transformed features described, but the classifier reads {}", sources.size(),
                                 inner.input_width()));
  // feature_of[j]: the feature input j feeds (-1: none, e.g. a dropped category).
  std::vector<int> feature_of(static_cast<std::size_t>(width), -1);
  bool single = true;  // every feature is one input (trees can be renamed)
  for (std::size_t k = 0; k < sources.size(); ++k) {
    if (sources[k].size() != 1) single = false;
    for (const int j : sources[k]) {
      if (j < 0 || j >= width)
        throw InputError(inner.source, "", fmt::format("feature {} reads input {} of {}", k, j, width));
      if (feature_of[static_cast<std::size_t>(j)] >= 0)
        throw InputError(inner.source, "",
                         fmt::format("input '{}' feeds two transformed features ({} and {}); witness reads one "
                                     "encoding per column",
                                     names[static_cast<std::size_t>(j)], feature_of[static_cast<std::size_t>(j)], k));
      feature_of[static_cast<std::size_t>(j)] = static_cast<int>(k);
    }
  }
  // Can every reader of the input take the map itself?
  bool foldable = true;
  for (const Node& n : inner.nodes) {
    if (std::find(n.inputs.begin(), n.inputs.end(), inner.input) == n.inputs.end()) continue;
    if (n.op == OpKind::Dense) continue;
    if (n.op == OpKind::TreeEnsemble && single) continue;
    foldable = false;
  }
  if (inner.rule.node == inner.input || inner.output == inner.input) foldable = false;

  ModelBuilder b(inner.name, names);
  b.set_source(inner.source, inner.format);
  std::vector<int> id(inner.nodes.size(), -1);
  id[static_cast<std::size_t>(inner.input)] =
      foldable ? b.input()
               : b.dense(b.input(), selection(sources, width), Eigen::VectorXd::Zero(inner.input_width()),
                         "raw columns -> transformed features");
  for (std::size_t i = 0; i < inner.nodes.size(); ++i) {
    if (static_cast<int>(i) == inner.input) continue;
    const Node& n = inner.nodes[i];
    std::vector<int> in;
    for (const int x : n.inputs) in.push_back(id[static_cast<std::size_t>(x)]);
    const bool reads_input = std::find(n.inputs.begin(), n.inputs.end(), inner.input) != n.inputs.end();
    if (foldable && reads_input && n.op == OpKind::Dense) {
      id[i] = b.dense(in[0], gathered(n.weights, feature_of, width), n.values, n.name);
    } else if (foldable && reads_input && n.op == OpKind::TreeEnsemble) {
      auto trees = std::make_shared<TreeEnsemble>(*n.trees);
      for (auto& tree : trees->trees) {
        for (auto& node : tree.nodes) {
          if (node.mode != TreeEnsemble::Mode::Leaf)
            node.feature = sources[static_cast<std::size_t>(node.feature)].front();
        }
      }
      id[i] = b.tree_ensemble(in[0], std::move(trees), n.name);
    } else {
      id[i] = b.copy_node(n, in, n.name);
    }
  }
  DecisionRule rule = inner.rule;
  rule.node = id[static_cast<std::size_t>(rule.node)];
  Model out = b.finish(id[static_cast<std::size_t>(inner.output)], rule, inner.output_names);
  out.columns = std::move(columns);
  return out;
}

bool same_column(std::string_view data_name, std::string_view model_name) {
  if (data_name == model_name) return true;
  if (data_name.size() != model_name.size() && data_name.size() + 1 != model_name.size()) return false;
  std::string onnx_name;
  for (const char c : data_name) {
    const bool kept = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '+';
    onnx_name += kept ? c : '_';
  }
  if (!onnx_name.empty() && std::isdigit(static_cast<unsigned char>(onnx_name[0])) != 0) onnx_name.insert(0, "_");
  return onnx_name == model_name;
}

Model raw_input_model(const Model& model) {
  check_raw_columns(model);
  std::vector<std::string> names;
  for (const RawColumn& c : model.columns) names.push_back(c.name);
  ModelBuilder b(model.name, names);
  b.set_source(model.source, model.format);
  std::vector<int> parts;
  for (std::size_t k = 0; k < model.columns.size(); ++k) {
    const RawColumn& c = model.columns[k];
    const std::string where = fmt::format("column '{}'", c.name);
    const int x = model.columns.size() == 1 ? b.input() : b.select(b.input(), {static_cast<int>(k)}, where);
    if (c.one_hot) {
      Eigen::VectorXd codes(static_cast<Eigen::Index>(c.categories.size()));
      for (Eigen::Index j = 0; j < codes.size(); ++j) codes(j) = static_cast<double>(j);
      parts.push_back(b.binary(OpKind::Equal, x, b.constant(codes, where), where));
      continue;
    }
    const Normalisation& n = c.norm;
    auto constant = [&](double v) { return b.constant(Eigen::VectorXd::Constant(1, v), where); };
    switch (n.form) {
      case Normalisation::Form::None: parts.push_back(x); break;
      case Normalisation::Form::ScaleOffset:
        parts.push_back(b.binary(OpKind::Add, b.binary(OpKind::Mul, x, constant(n.a), where), constant(n.b), where));
        break;
      case Normalisation::Form::MeanStd:
        parts.push_back(b.binary(OpKind::Div, b.binary(OpKind::Sub, x, constant(n.a), where), constant(n.b), where));
        break;
      case Normalisation::Form::CenterScale:
        parts.push_back(b.binary(OpKind::Mul, b.binary(OpKind::Sub, x, constant(n.a), where), constant(n.b), where));
        break;
    }
  }
  const int encoded = parts.size() == 1 ? parts[0] : b.concat(parts, "raw columns -> model inputs");
  std::vector<int> id(model.nodes.size(), -1);
  id[static_cast<std::size_t>(model.input)] = encoded;
  for (std::size_t i = 0; i < model.nodes.size(); ++i) {
    if (static_cast<int>(i) == model.input) continue;
    const Node& n = model.nodes[i];
    std::vector<int> in;
    for (const int x : n.inputs) in.push_back(id[static_cast<std::size_t>(x)]);
    id[i] = b.copy_node(n, in, n.name);
  }
  DecisionRule rule = model.rule;
  rule.node = id[static_cast<std::size_t>(rule.node)];
  return b.finish(id[static_cast<std::size_t>(model.output)], rule, model.output_names);
}

nlohmann::json raw_columns_json(const std::vector<RawColumn>& columns) {
  static const char* forms[] = {"none", "scale_offset", "mean_std", "center_scale"};
  nlohmann::json out = nlohmann::json::array();
  for (const RawColumn& c : columns) {
    out.push_back({{"name", c.name},
                   {"categorical", c.categorical},
                   {"categories", c.categories},
                   {"one_hot", c.one_hot},
                   {"norm", {forms[static_cast<int>(c.norm.form)], c.norm.a, c.norm.b}},
                   {"missing", c.missing},
                   {"step", c.step}});
  }
  return out;
}

std::vector<RawColumn> raw_columns_from_json(const nlohmann::json& j, const std::string& source) {
  const std::string where = "metadata 'witness.columns'";
  auto bad = [&](const std::string& what) { return InputError(source, where, what); };
  if (!j.is_array()) throw bad("expected an array of columns");
  std::vector<RawColumn> out;
  for (const nlohmann::json& c : j) {
    if (!c.is_object() || !c.contains("name") || !c["name"].is_string() ||
        !c.value("categories", nlohmann::json()).is_array() || !c.value("norm", nlohmann::json()).is_array() ||
        c["norm"].size() != 3 || !c["norm"][0].is_string() || !c["norm"][1].is_number() || !c["norm"][2].is_number())
      throw bad("expected objects with a name, categories and a norm [form, a, b]");
    RawColumn rc;
    rc.name = c["name"].get<std::string>();
    rc.categorical = c.value("categorical", false);
    for (const auto& label : c["categories"]) {
      if (!label.is_string()) throw bad("categories must be strings");
      rc.categories.push_back(label.get<std::string>());
    }
    rc.one_hot = c.value("one_hot", false);
    const std::string form = c["norm"][0].get<std::string>();
    rc.norm.a = c["norm"][1].get<double>();
    rc.norm.b = c["norm"][2].get<double>();
    if (form == "none") {
      rc.norm = Normalisation();
    } else if (form == "scale_offset") {
      rc.norm.form = Normalisation::Form::ScaleOffset;
    } else if (form == "mean_std") {
      rc.norm.form = Normalisation::Form::MeanStd;
    } else if (form == "center_scale") {
      rc.norm.form = Normalisation::Form::CenterScale;
    } else {
      throw bad(fmt::format("unknown normalisation '{}'", form));
    }
    rc.missing = c.value("missing", std::string());
    rc.step = c.value("step", std::string());
    out.push_back(std::move(rc));
  }
  return out;
}

void check_raw_columns(const Model& model) {
  if (model.columns.empty()) return;
  check_columns(model.columns, model.source);
  int width = 0;
  for (const RawColumn& c : model.columns) width += c.width();
  if (width != model.input_width())
    throw InputError(model.source, "",
                     fmt::format("its raw columns give {} inputs, but the model reads {}", width, model.input_width()));
}

}  // namespace witness
