// witness test MODEL|--cmd CMD --schema S --protected A[,B] --method M: black-box fairness testing.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/cli.h"
#include "core/error.h"
#include "domain/dataset.h"
#include "fairness/blackbox.h"
#include "model/loaders.h"
#include "report/html_report.h"
#include "report/testing_report.h"

namespace witness::cli {
namespace {

struct TestArgs {
  std::string model;
  std::string command;
  std::string schema;
  std::string box;
  std::string protected_list;
  std::string seeds;
  std::string out;
  bool json = false;
  double batch_timeout = 60;
  long long batch_rows = 8192;
  bool category_names = false;
  int classes = 0;
  std::map<std::string, std::string> method_options;  // test_options() flags as given, keyed by name
  std::map<std::string, std::string> env_options;
  ReportFiles report;
};

void run_test_command(const TestArgs& args, int& status) {
  Env env;
  apply_env_options(env, args.env_options);
  if (args.model.empty() == args.command.empty())
    throw InputError("give either a MODEL file or a non-empty --cmd \"program\" (not both)");
  std::optional<Model> model;
  Schema schema;
  if (!args.model.empty()) {
    model = load_model(args.model);
    schema = load_schema_for(*model, args.schema, args.box);
  } else {
    schema = load_schema(args.schema);
    if (!args.box.empty()) schema = schema.with_box(args.box);
  }
  const std::vector<std::string> names =
      args.protected_list.empty() ? schema.protected_names() : split_list(args.protected_list);
  if (names.empty()) throw InputError(args.schema, "", "no protected attribute: give --protected or set `protected`");

  TestOptions o;
  apply_setting_flags(test_options(), args.method_options, o);
  o.protected_features = schema.protected_indices(names);
  const bool timed = env.options.get_real("time-limit") > 0;
  if (timed && args.method_options.at("budget").empty()) o.budget = 0;  // no budget given: until the time limit
  Dataset data;
  if (!args.seeds.empty()) {
    data = load_csv(args.seeds, schema);
    if (data.rows() == 0) throw InputError(args.seeds, "", "no data rows");
    o.seeds = &data.raw;
  }

  std::unique_ptr<LabelOracle> oracle;
  if (model) {
    oracle = std::make_unique<ModelOracle>(*model, schema, env.threads());
  } else {
    CommandOptions c;
    c.batch_seconds = args.batch_timeout;
    c.max_batch = args.batch_rows;
    c.category_names = args.category_names;
    c.classes = args.classes;
    if (timed) {
      const double left = env.options.get_real("time-limit") - env.elapsed_seconds();
      c.run_deadline =
          std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                 std::chrono::duration<double>(std::max(0.0, left)));
    }
    oracle = std::make_unique<CommandOracle>(args.command, schema, c);
  }
  std::vector<DiscriminatoryPair> pairs;
  std::optional<PairCsv> csv;
  if (!args.out.empty()) csv.emplace(args.out, schema, o.protected_features);
  auto label_of = [&](int label) { return model ? label_name(*model, schema, label) : label_name(schema, label); };
  o.on_pair = [&](const DiscriminatoryPair& p) {
    if (pairs.size() < kReportPairs) pairs.push_back(p);
    if (csv) csv->write(p.x, p.x_prime, label_of(p.label), label_of(p.label_prime));
  };
  ProgressLine progress;
  o.on_progress = [&](const TestProgress& p) {
    const std::string of = p.budget > 0 ? fmt::format("/{}", p.budget) : "";
    const double share = p.generated > 0 ? static_cast<double>(p.discriminatory) / static_cast<double>(p.generated) : 0;
    progress.show(fmt::format("{}: {}{} tests, {} discriminatory ({:.1f}%), {:.1f} s", to_string(o.method), p.generated,
                              of, p.discriminatory, 100 * share, p.seconds));
  };
  const TestResult r = run_test(*oracle, schema, o, env);
  progress.clear();
  if (csv) csv->close();
  status = r.discriminatory > 0 ? 10 : 0;
  print_stats(env);
  const TestingRun run{.schema = schema,
                       .model = model ? &*model : nullptr,
                       .command = args.command,
                       .protected_names = names,
                       .protected_features = o.protected_features,
                       .budget = o.budget,
                       .seed = env.seed(),
                       .result = r,
                       .pairs = std::move(pairs),
                       .pairs_csv = args.out,
                       .pairs_written = csv ? csv->rows() : 0};
  const nlohmann::json doc = testing_json(run);
  const std::string text = testing_text(run);
  if (!args.report.html.empty() || !args.report.json.empty())
    write_reports(args.report,
                  report_envelope("test", command_line(), text, doc, schema_json(schema), testing_pairs_json(run)));
  if (args.json) {
    print_json(doc);
  } else {
    std::cout << text;
  }
}

}  // namespace

void add_test_command(CLI::App& app, int& status) {
  auto args = std::make_shared<TestArgs>();
  CLI::App* cmd =
      app.add_subcommand("test", "Generate discriminatory test inputs (SymbGen, THEMIS, AEQUITAS, ADF, random pairs)");
  cmd->add_option("model", args->model, "model file (.json mlp-json-v1, Keras .h5, .onnx); or use --cmd");
  cmd->add_option("--cmd", args->command,
                  "black-box program: reads CSV rows on stdin, prints one label per row (docs/blackbox.md)");
  cmd->add_option("--schema", args->schema, "input schema (TOML)")->required();
  cmd->add_option("--box", args->box, "use a named alternative box of the schema (e.g. fairify)");
  cmd->add_option("--protected", args->protected_list, "protected attributes, comma-separated (default: the schema's)");
  cmd->add_option("--seeds", args->seeds, "dataset CSV: seed inputs and the distribution of perturbations");
  cmd->add_option("--out", args->out, "write the discriminatory pairs as CSV (raw, named values)");
  cmd->add_flag("--json", args->json, "print one JSON document on stdout");
  add_report_options(*cmd, args->report);
  add_setting_flags(*cmd, test_options(), args->method_options);
  cmd->add_option("--batch-timeout", args->batch_timeout, "--cmd: seconds the program may take per batch [60]");
  cmd->add_option("--batch-rows", args->batch_rows, "--cmd: rows per batch [default 8192]");
  cmd->add_flag("--category-names", args->category_names, "--cmd: write category labels instead of codes");
  cmd->add_option("--classes", args->classes,
                  "--cmd: the program's labels are 0..N-1 [default: the schema's label classes, else 2]");
  add_env_options(*cmd, args->env_options, {"seed", "threads", "time-limit", "verbose", "stats"});
  cmd->callback([args, &status] { run_test_command(*args, status); });
}

}  // namespace witness::cli
