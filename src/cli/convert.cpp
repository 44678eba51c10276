// witness convert MODEL -o OUT.onnx|OUT.json: writes the same network in another format.
#include <memory>

#include "cli/cli.h"
#include "core/error.h"
#include "model/loaders.h"

namespace witness::cli {
namespace {

struct ConvertArgs {
  std::string model;
  std::string out;
};

void run_convert(const ConvertArgs& args) {
  const Model model = load_model(args.model);
  const auto dot = args.out.find_last_of('.');
  const std::string ext = dot == std::string::npos ? "" : args.out.substr(dot + 1);
  if (ext == "onnx") {
    save_onnx(model, args.out);
  } else if (ext == "json") {
    save_mlp_json(model, args.out);
  } else {
    throw InputError(args.out, "", "unknown output format: use a .onnx or .json (mlp-json-v1) file name");
  }
}

}  // namespace

void add_convert_command(CLI::App& app) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* cmd = app.add_subcommand("convert", "Write a model as ONNX (.onnx) or mlp-json-v1 (.json)");
  cmd->add_option("model", args->model, "model file (.json mlp-json-v1, Keras .h5, .onnx)")->required();
  cmd->add_option("-o,--output", args->out, "output file; its extension picks the format")->required();
  cmd->callback([args] { run_convert(*args); });
}

}  // namespace witness::cli
