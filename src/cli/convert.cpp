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
  bool nnet_raw = false;
};

void run_convert(const ConvertArgs& args) {
  // --nnet-raw: read MODEL as .nnet whatever its name, without the file's means and ranges.
  const Model model = args.nnet_raw ? load_nnet(args.model, false) : load_model(args.model);
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
  cmd->add_option("model", args->model, "model file (.json mlp-json-v1, Keras .h5, .onnx, .nnet)")->required();
  cmd->add_option("-o,--output", args->out, "output file; its extension picks the format")->required();
  cmd->add_flag("--nnet-raw", args->nnet_raw,
                "read .nnet inputs and outputs without the file's means/ranges, as FairQuant does");
  cmd->callback([args] { run_convert(*args); });
}

}  // namespace witness::cli
