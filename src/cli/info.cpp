// witness info MODEL [--json]: inputs, layers, op counts and the decision rule.
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <memory>

#include "cli/cli.h"
#include "model/columns.h"
#include "model/loaders.h"

namespace witness::cli {
namespace {

struct InfoArgs {
  std::string model;
  std::string schema;
  bool json = false;
};

std::string rule_text(const Model& m) {
  const DecisionRule& r = m.rule;
  const Node& n = m.nodes[static_cast<std::size_t>(r.node)];
  const std::string node = fmt::format("node {} ({})", r.node, op_name(n.op));
  std::string text;
  switch (r.kind) {
    case DecisionRule::Kind::Threshold: {
      text = fmt::format("label 1 iff {}[{}] > {}", node, r.index, r.threshold);
      const Node& out = m.nodes[static_cast<std::size_t>(m.output)];
      if (out.op == OpKind::Sigmoid && r.node == out.inputs[0]) text += " (the logit: sigmoid output > 0.5)";
      break;
    }
    case DecisionRule::Kind::ArgMax: text = fmt::format("label = argmax of {}, ties to the lower index", node); break;
    case DecisionRule::Kind::Direct: text = fmt::format("label = value of {}", node); break;
  }
  if (!r.class_labels.empty()) {
    text += " ; classes:";
    for (std::size_t i = 0; i < r.class_labels.size(); ++i) text += fmt::format(" {}={}", i, r.class_labels[i]);
  }
  return text;
}

// "x0 [0, 60760], x1 [-3.14, 3.14], ..." for the bounds a file declares (.nnet).
std::string bounds_text(const Model& m) {
  std::string s;
  for (std::size_t i = 0; i < m.input_bounds.size(); ++i) {
    const std::string name = i < m.input_names.size() ? m.input_names[i] : fmt::format("x{}", i);
    s += fmt::format("{}{} [{}, {}]", s.empty() ? "" : ", ", name, m.input_bounds[i].first, m.input_bounds[i].second);
  }
  return s;
}

std::string names_text(const std::vector<std::string>& names) {
  if (names.size() <= 8) {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
  }
  return fmt::format("{}, {}, ..., {}", names[0], names[1], names.back());
}

// A model that carries its preprocessing: each raw column and how it becomes model inputs.
std::string column_text(const RawColumn& c) {
  std::string how;
  if (c.categorical) how = fmt::format("{} categories, {}", c.categories.size(), c.one_hot ? "one-hot" : "code");
  if (c.norm.form != Normalisation::Form::None) how += (how.empty() ? "" : ", ") + c.norm.describe("x");
  if (!c.missing.empty()) how += fmt::format("{}missing -> {}", how.empty() ? "" : ", ", c.missing);
  return how.empty() ? c.name : fmt::format("{} ({})", c.name, how);
}

void run_info(const InfoArgs& args) {
  Model m = load_model(args.model);
  if (!args.schema.empty()) m.input_names = load_schema_for(m, args.schema, "").model_input_names();
  std::map<std::string, int> counts;
  int relus = 0;
  for (const Node& n : m.nodes) {
    if (n.op == OpKind::Input) continue;
    ++counts[op_name(n.op)];
    if (n.op == OpKind::Relu || n.op == OpKind::LeakyRelu) relus += n.width;
  }
  const long long params = count_parameters(m);
  if (args.json) {
    nlohmann::json layers = nlohmann::json::array();
    for (std::size_t i = 1; i < m.nodes.size(); ++i) {
      const Node& n = m.nodes[i];
      layers.push_back({{"id", i}, {"op", op_name(n.op)}, {"name", n.name}, {"width", n.width}, {"inputs", n.inputs}});
    }
    nlohmann::json doc = {{"model", m.name},
                          {"file", m.source},
                          {"format", m.format},
                          {"inputs", m.input_names},
                          {"outputs", m.output_names},
                          {"layers", layers},
                          {"op_counts", counts},
                          {"parameters", params},
                          {"relu_neurons", relus},
                          {"decision", rule_text(m)},
                          {"columns", raw_columns_json(m.columns)}};
    if (!m.input_bounds.empty()) doc["input_bounds"] = m.input_bounds;  // [[min, max], ...]; not enforced
    print_json(doc);
    return;
  }
  std::cout << fmt::format("model      {} ({}, {})\n", m.name, m.format, m.source);
  if (!m.columns.empty()) {
    std::cout << fmt::format("columns    {} raw columns, preprocessing carried by the model:\n", m.columns.size());
    for (const RawColumn& c : m.columns) std::cout << "             " << column_text(c) << "\n";
  }
  std::cout << fmt::format("inputs     {}: {}\n", m.input_width(), names_text(m.input_names));
  std::cout << fmt::format("outputs    {}: {}\n", m.output_width(), names_text(m.output_names));
  std::cout << fmt::format("decision   {}\n", rule_text(m));
  if (!m.input_bounds.empty()) {
    std::cout << fmt::format("bounds     {} (declared by the {} file; inputs outside are evaluated unclipped)\n",
                             bounds_text(m), m.format);
  }
  std::cout << fmt::format("parameters {}, ReLU neurons {}\n", params, relus);
  std::string ops;
  for (const auto& [op, c] : counts) ops += fmt::format("{}{} {}", ops.empty() ? "" : ", ", op, c);
  std::cout << fmt::format("ops        {}\n", ops);
  std::cout << "layers\n";
  std::cout << fmt::format("  {:>3}  {:<13} {:>6}  {:<10} {}\n", "id", "op", "width", "reads", "name");
  for (std::size_t i = 1; i < m.nodes.size(); ++i) {
    const Node& n = m.nodes[i];
    std::string reads;
    for (int in : n.inputs) reads += fmt::format("{}{}", reads.empty() ? "" : ",", in);
    std::cout << fmt::format("  {:>3}  {:<13} {:>6}  {:<10} {}\n", i, op_name(n.op), n.width, reads, n.name);
  }
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd = app.add_subcommand("info", "Describe a model: inputs, layers, op counts, decision rule");
  cmd->add_option("model", args->model, "model file (.json mlp-json-v1, Keras .h5, .onnx, .nnet)")->required();
  cmd->add_option("--schema", args->schema, "input schema (TOML): show the inputs by name");
  cmd->add_flag("--json", args->json, "print one JSON document on stdout");
  cmd->callback([args] { run_info(*args); });
}

}  // namespace witness::cli
