// witness predict MODEL DATA.csv --schema S: one label per line, or --json with the outputs.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "model/evaluator.h"
#include "report/rows.h"
#include "run/subject.h"

namespace witness::cli {
namespace {

struct PredictArgs {
  std::string model;
  std::string data;
  std::string schema;
  std::string box;
  std::string precision = "float64";
  bool json = false;
};

void run_predict(const PredictArgs& args) {
  SubjectSource src;
  src.model_path = args.model;
  src.schema_path = args.schema;
  src.box = args.box;
  src.data.path = args.data;
  src.needs_protected = false;
  const JobSubject subject = load_subject(src);
  const Model& model = *subject.model;
  const Schema& schema = subject.schema;
  const Precision precision = args.precision == "float32" ? Precision::Float32 : Precision::Float64;
  const Evaluation r = evaluate(model, subject.data->model_inputs(schema), precision);
  if (!args.json) {
    std::string out;
    out.reserve(r.labels.size() * 2);
    for (int label : r.labels) {
      out += label_name(model, schema, label);
      out += '\n';
    }
    std::cout << out;
    return;
  }
  nlohmann::json labels = nlohmann::json::array();
  nlohmann::json outputs = nlohmann::json::array();
  for (Eigen::Index c = 0; c < r.outputs.cols(); ++c) {
    const int label = r.labels[static_cast<std::size_t>(c)];
    labels.push_back(label_json(model, schema, label));
    nlohmann::json row = nlohmann::json::array();
    for (Eigen::Index k = 0; k < r.outputs.rows(); ++k) row.push_back(r.outputs(k, c));
    outputs.push_back(std::move(row));
  }
  print_json({{"labels", std::move(labels)}, {"outputs", std::move(outputs)}});
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto args = std::make_shared<PredictArgs>();
  CLI::App* cmd = app.add_subcommand("predict", "Label every row of a CSV file with a model");
  cmd->add_option("model", args->model, "model file (.json mlp-json-v1, Keras .h5, .onnx incl. skl2onnx pipelines)")
      ->required();
  cmd->add_option("data", args->data, "CSV file with a header naming the schema's features")->required();
  cmd->add_option("--schema", args->schema,
                  "input schema (TOML); a model that carries its preprocessing brings its own, read off the data");
  cmd->add_option("--box", args->box, "use a named alternative box of the schema (e.g. fairify)");
  cmd->add_option("--precision", args->precision, "arithmetic of the forward pass")
      ->check(CLI::IsMember({"float64", "float32"}));
  cmd->add_flag("--json", args->json, "print {\"labels\": [...], \"outputs\": [[...], ...]} on stdout");
  cmd->callback([args] { run_predict(*args); });
}

}  // namespace witness::cli
