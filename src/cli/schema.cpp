// witness schema infer DATA.csv [--label NAME] [-o OUT.toml]: a starting schema from a CSV file.
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/cli.h"
#include "core/error.h"
#include "domain/infer.h"

namespace witness::cli {
namespace {

struct InferArgs {
  std::string data;
  std::string label;
  bool label_given = false;
  bool no_label = false;
  std::string out;
};

void run_infer(const InferArgs& args) {
  std::optional<std::string> label;
  if (args.no_label) {
    label = "";
  } else if (args.label_given) {
    label = args.label;
  }
  const std::string toml = infer_schema_toml(args.data, label);
  if (args.out.empty()) {
    std::cout << toml;
    return;
  }
  std::ofstream out(args.out);
  if (!out || !(out << toml)) throw InputError(args.out, "", "cannot write file");
}

}  // namespace

void add_schema_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("schema", "Work with input schemas");
  cmd->require_subcommand(1);
  auto args = std::make_shared<InferArgs>();
  CLI::App* infer = cmd->add_subcommand("infer", "Write a starting schema (TOML) for a CSV file");
  infer->add_option("data", args->data, "CSV file with a header row")->required();
  infer->add_option("--label", args->label, "label column (default: the last column)");
  infer->add_flag("--no-label", args->no_label, "the CSV has no label column");
  infer->add_option("-o,--output", args->out, "write the schema here instead of stdout");
  infer->callback([args, infer] {
    InferArgs a = *args;
    a.label_given = infer->count("--label") > 0;
    run_infer(a);
  });
}

}  // namespace witness::cli
