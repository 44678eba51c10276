// witness transform MODEL --schema S --zero-inputs A[,B] -o OUT: the same model with the first-layer
// weights of the named features zeroed (PyFair's artificially fair models), or scaled with
// --scale-inputs A[,B] --factor F (near-fair variants).
#include "fairness/transform.h"

#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <set>

#include "cli/cli.h"
#include "core/error.h"
#include "model/loaders.h"

namespace witness::cli {
namespace {

struct TransformArgs {
  std::string model;
  std::string schema;
  std::string box;
  std::string zero;
  std::string scale;
  double factor = std::nan("");
  std::string out;
};

void run_transform(const TransformArgs& args) {
  const auto dot = args.out.find_last_of('.');
  const std::string ext = dot == std::string::npos ? "" : args.out.substr(dot + 1);
  if (ext != "onnx" && ext != "json") {
    throw InputError(args.out, "", "unknown output format: use a .onnx or .json (mlp-json-v1) file name");
  }
  const bool scaling = !args.scale.empty();
  if (args.zero.empty() == !scaling) throw InputError("give one of --zero-inputs and --scale-inputs");
  if (scaling && std::isnan(args.factor)) throw InputError("--scale-inputs needs --factor");
  if (!scaling && !std::isnan(args.factor)) throw InputError("--factor goes with --scale-inputs");
  if (scaling && !std::isfinite(args.factor)) throw InputError(fmt::format("--factor: {} is not finite", args.factor));

  const Model model = load_model(args.model);
  const Schema schema = load_schema_for(model, args.schema, args.box);
  const std::vector<std::string> names = split_list(scaling ? args.scale : args.zero);
  if (names.empty()) throw InputError(scaling ? "--scale-inputs: no feature named" : "--zero-inputs: no feature named");
  std::set<int> inputs;  // once each, so that a name given twice is not scaled twice
  std::string list;
  for (const auto& name : names) {
    const Feature& f = schema.feature(schema.feature_index(name));
    for (int k = 0; k < f.model_width; ++k) inputs.insert(f.model_offset + k);
    list += (list.empty() ? "" : ", ") + name;
  }
  const std::vector<int> columns(inputs.begin(), inputs.end());
  const Model out = scaling ? scale_input_weights(model, columns, args.factor) : zero_input_weights(model, columns);
  if (ext == "onnx") {
    save_onnx(out, args.out);
  } else {
    save_mlp_json(out, args.out);
  }
  std::cout << fmt::format("wrote {}: {} with the first-layer weights of {} ({} model input{}) {}\n", args.out,
                           model.name, list, columns.size(), columns.size() == 1 ? "" : "s",
                           scaling ? fmt::format("multiplied by {}", args.factor) : std::string("set to 0"));
}

}  // namespace

void add_transform_command(CLI::App& app) {
  auto args = std::make_shared<TransformArgs>();
  CLI::App* cmd = app.add_subcommand(
      "transform", "Zero or scale the first-layer weights of features (artificially fair models, PyFair RQ4)");
  cmd->add_option("model", args->model, "model file (.json mlp-json-v1, Keras .h5, .onnx)")->required();
  cmd->add_option("--schema", args->schema, "input schema (TOML)")->required();
  cmd->add_option("--box", args->box, "use a named alternative box of the schema (e.g. fairify)");
  cmd->add_option("--zero-inputs", args->zero, "features whose first-layer weights become 0, comma-separated");
  cmd->add_option("--scale-inputs", args->scale, "features whose first-layer weights are multiplied by --factor");
  cmd->add_option("--factor", args->factor, "scale factor for --scale-inputs (e.g. 1e-3)");
  cmd->add_option("-o,--output", args->out, "output file; its extension picks the format (.onnx or .json)")->required();
  cmd->callback([args] { run_transform(*args); });
}

}  // namespace witness::cli
