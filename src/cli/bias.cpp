// witness bias MODEL --schema S --protected A[,B]: sampled Bias% with a 95% confidence interval.
#include "fairness/bias.h"

#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "core/error.h"
#include "domain/dataset.h"
#include "model/loaders.h"
#include "report/bias_report.h"
#include "report/html_report.h"

namespace witness::cli {
namespace {

struct BiasArgs {
  std::string model;
  std::string schema;
  std::string box;
  std::string protected_list;
  std::string data;
  long long samples = 100000;
  bool json = false;
  std::map<std::string, std::string> env_options;
  ReportFiles report;
};

void run_bias(const BiasArgs& args) {
  Env env;
  apply_env_options(env, args.env_options);
  if (args.samples <= 0) throw InputError(fmt::format("--samples: expected a positive count, got {}", args.samples));
  const Model model = load_model(args.model);
  const Schema schema = load_schema_for(model, args.schema, args.box);
  const std::vector<std::string> names =
      args.protected_list.empty() ? schema.protected_names() : split_list(args.protected_list);
  if (names.empty()) throw InputError(args.schema, "", "no protected attribute: give --protected or set `protected`");
  const std::vector<int> prot = schema.protected_indices(names);

  BiasOptions o;
  o.samples = args.samples;
  o.seed = env.seed();
  o.threads = env.threads();
  Dataset data;
  if (!args.data.empty()) {
    data = load_csv(args.data, schema);
    o.rows = &data.raw;
  }
  const BiasEstimate b = estimate_bias(model, schema, prot, o);
  const double seconds = env.elapsed_seconds();
  env.stats.set("bias.samples", static_cast<double>(b.samples));
  env.stats.set("bias.discriminatory", static_cast<double>(b.discriminatory));
  env.stats.set("bias.seconds", seconds);
  const BiasRun run{.model = model,
                    .schema = schema,
                    .protected_names = names,
                    .estimate = b,
                    .seed = o.seed,
                    .data = args.data,
                    .seconds = seconds};
  print_stats(env);
  const nlohmann::json doc = bias_json(run);
  const std::string text = bias_text(run);
  if (!args.report.html.empty() || !args.report.json.empty())
    write_reports(args.report,
                  report_envelope("bias", command_line(), text, doc, schema_json(schema), bias_pairs_json(run)));
  if (args.json) {
    print_json(doc);
  } else {
    std::cout << text;
  }
}

}  // namespace

void add_bias_command(CLI::App& app) {
  auto args = std::make_shared<BiasArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bias", "Estimate Bias%: the share of inputs whose label changes with the protected attribute");
  cmd->add_option("model", args->model, "model file (.json mlp-json-v1, Keras .h5, .onnx)")->required();
  cmd->add_option("--schema", args->schema, "input schema (TOML)")->required();
  cmd->add_option("--box", args->box, "use a named alternative box of the schema (e.g. fairify)");
  cmd->add_option("--protected", args->protected_list, "protected attributes, comma-separated (default: the schema's)");
  cmd->add_option("--samples", args->samples, "number of random inputs [default 100000]");
  cmd->add_option("--data", args->data, "draw inputs from the rows of this CSV instead of uniformly (PyFair's way)");
  cmd->add_flag("--json", args->json, "print one JSON document on stdout");
  add_report_options(*cmd, args->report);
  add_env_options(*cmd, args->env_options, {"seed", "threads", "verbose", "stats"});
  cmd->callback([args] { run_bias(*args); });
}

}  // namespace witness::cli
