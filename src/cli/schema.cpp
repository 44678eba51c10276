// witness schema infer DATA.csv [--label NAME] [-o OUT.toml]: a starting schema from a CSV file;
// witness schema infer MODEL --data DATA.csv: the schema of a model that carries its preprocessing.
#include <iostream>
#include <memory>
#include <optional>

#include "cli/cli.h"
#include "core/error.h"
#include "core/file.h"
#include "domain/infer.h"
#include "model/loaders.h"

namespace witness::cli {
namespace {

struct InferArgs {
  std::string input;  // DATA.csv, or MODEL with --data
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
  std::string toml;
  if (args.data.empty()) {
    toml = infer_schema_toml(args.input, label);
  } else {
    const Model model = load_model(args.input);
    if (model.columns.empty())
      throw InputError(args.input, "",
                       "the model reads encoded inputs, not raw columns: it brings no schema; infer one from the data "
                       "alone (witness schema infer DATA.csv) and add its encodings");
    toml = infer_schema_toml(args.data, label, &model);
  }
  if (args.out.empty()) {
    std::cout << toml;
    return;
  }
  write_file(args.out, toml);
}

}  // namespace

void add_schema_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("schema", "Work with input schemas");
  cmd->require_subcommand(1);
  auto args = std::make_shared<InferArgs>();
  CLI::App* infer = cmd->add_subcommand(
      "infer",
      "Write a starting schema (TOML) for a CSV file; or, with --data, the schema of a model that carries its "
      "preprocessing (a skl2onnx pipeline): its columns, categories and encodings, the data's ranges");
  infer->add_option("input", args->input, "CSV file with a header row; or a MODEL file with --data")->required();
  infer->add_option("--data", args->data, "CSV file of the model's raw columns (with MODEL)");
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
