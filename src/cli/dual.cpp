// witness dual MODEL --schema S [--protected A[,B]] -o DUAL.onnx: writes PyFair's dual network, whose
// label is 1 exactly for inputs (x, p') where the model's labels on x and on x' differ.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "core/error.h"
#include "fairness/dual_model.h"
#include "model/loaders.h"

namespace witness::cli {
namespace {

struct DualArgs {
  std::string model;
  std::string schema;
  std::string box;
  std::string protected_list;
  std::string out;
  bool duplicate = false;
};

void run_dual(const DualArgs& args) {
  const auto dot = args.out.find_last_of('.');
  if (dot == std::string::npos || args.out.substr(dot + 1) != "onnx") {
    throw InputError(args.out, "",
                     "the dual model can only be written as ONNX (.onnx); mlp-json-v1 holds only plain MLPs");
  }
  const Model model = load_model(args.model);
  const Schema schema = load_schema_for(model, args.schema, args.box);
  const std::vector<std::string> names =
      args.protected_list.empty() ? schema.protected_names() : split_list(args.protected_list);
  if (names.empty()) throw InputError(args.schema, "", "no protected attribute: give --protected or set `protected`");
  const DualModel d = make_dual_model(model, schema, schema.protected_indices(names),
                                      args.duplicate ? DualForm::Duplicated : DualForm::BlockDiagonal);
  save_onnx(d.model, args.out);

  const auto& in = d.model.input_names;
  const auto& out = d.model.output_names;
  const auto w = static_cast<std::ptrdiff_t>(d.decision_width);
  const auto x = static_cast<std::ptrdiff_t>(d.width_x);
  std::cout << fmt::format("wrote {} to {} ({}, {} nodes)\n", d.model.name, args.out,
                           d.block_diagonal ? "block-diagonal layers" : "two copies of every node",
                           d.model.nodes.size());
  std::cout << fmt::format("inputs   {}: x = the {} inputs of {} ({}), then p' = {}\n", in.size(), x, model.name,
                           fmt::join(in.begin(), in.begin() + x, ", "), fmt::join(in.begin() + x, in.end(), ", "));
  std::cout << fmt::format("outputs  {}: {} on x, {} on x' (the values {}'s decision rule reads), differ\n", out.size(),
                           fmt::join(out.begin(), out.begin() + w, ", "),
                           fmt::join(out.begin() + w, out.begin() + 2 * w, ", "), model.name);
  std::cout << "decision label = differ: 1 iff the labels of x and x' differ\n";
}

}  // namespace

void add_dual_command(CLI::App& app) {
  auto args = std::make_shared<DualArgs>();
  CLI::App* cmd = app.add_subcommand(
      "dual", "Write the dual network (PyFair): label 1 iff the model's labels differ on x and on x'");
  cmd->add_option("model", args->model, "model file (.json mlp-json-v1, Keras .h5, .onnx)")->required();
  cmd->add_option("--schema", args->schema, "input schema (TOML)")->required();
  cmd->add_option("--box", args->box, "use a named alternative box of the schema (e.g. fairify)");
  cmd->add_option("--protected", args->protected_list, "protected attributes, comma-separated (default: the schema's)");
  cmd->add_flag("--duplicate", args->duplicate,
                "two copies of every layer instead of block-diagonal layers (logits bit-identical to the model's)");
  cmd->add_option("-o,--output", args->out, "output file (.onnx)")->required();
  cmd->callback([args] { run_dual(*args); });
}

}  // namespace witness::cli
