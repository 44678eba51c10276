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
  SubjectArgs subject;
  std::string data;
  std::string out;
  bool duplicate = false;
};

void run_dual(const DualArgs& args) {
  const auto dot = args.out.find_last_of('.');
  if (dot == std::string::npos || args.out.substr(dot + 1) != "onnx") {
    throw InputError(args.out, "",
                     "the dual model can only be written as ONNX (.onnx); mlp-json-v1 holds only plain MLPs");
  }
  SubjectSource src = args.subject.source();
  src.data.path = args.data;
  const JobSubject subject = load_subject(src);
  const Model& model = *subject.model;
  const DualModel d = make_dual_model(model, subject.schema, subject.protected_features,
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
  add_subject_options(*cmd, args->subject);
  cmd->add_option("--data", args->data, "CSV of raw rows: the schema of a model that carries its preprocessing");
  cmd->add_flag("--duplicate", args->duplicate,
                "two copies of every layer instead of block-diagonal layers (logits bit-identical to the model's)");
  cmd->add_option("-o,--output", args->out, "output file (.onnx)")->required();
  cmd->callback([args] { run_dual(*args); });
}

}  // namespace witness::cli
