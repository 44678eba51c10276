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
};

double rate(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

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
  auto name_of = [&](int label) { return model ? label_name(*model, schema, label) : label_name(schema, label); };

  std::optional<PairCsv> csv;
  if (!args.out.empty()) csv.emplace(args.out, schema, o.protected_features);
  std::optional<DiscriminatoryPair> example;
  o.on_pair = [&](const DiscriminatoryPair& p) {
    if (!example) example = p;
    if (csv) csv->write(p.x, p.x_prime, name_of(p.label), name_of(p.label_prime));
  };
  ProgressLine progress;
  o.on_progress = [&](const TestProgress& p) {
    const std::string of = p.budget > 0 ? fmt::format("/{}", p.budget) : "";
    progress.show(fmt::format("{}: {}{} tests, {} discriminatory ({:.1f}%), {:.1f} s", to_string(o.method), p.generated,
                              of, p.discriminatory, 100 * rate(p.discriminatory, p.generated), p.seconds));
  };
  const TestResult r = run_test(*oracle, schema, o, env);
  progress.clear();
  if (csv) csv->close();
  status = r.discriminatory > 0 ? 10 : 0;
  print_stats(env);

  const double tps = r.seconds > 0 ? static_cast<double>(r.generated) / r.seconds : 0.0;
  const double dps = r.seconds > 0 ? static_cast<double>(r.discriminatory) / r.seconds : 0.0;
  if (args.json) {
    nlohmann::json phases = nlohmann::json::object();
    for (const TestPhase& ph : r.phases)
      phases[ph.name] = {{"generated", ph.generated}, {"discriminatory", ph.discriminatory}};
    nlohmann::json doc = {{"method", to_string(r.method)},
                          {"model", model ? nlohmann::json(model->source) : nlohmann::json(nullptr)},
                          {"command", model ? nullptr : nlohmann::json(args.command)},
                          {"protected", names},
                          {"budget", o.budget},
                          {"seed", env.seed()},
                          {"generated", r.generated},
                          {"discriminatory", r.discriminatory},
                          {"success_rate", rate(r.discriminatory, r.generated)},
                          {"per_phase", phases},
                          {"seconds", r.seconds},
                          {"tests_per_second", tps},
                          {"discriminatory_per_second", dps},
                          {"queries", r.queries},
                          {"duplicates", r.duplicates},
                          {"rejected", r.rejected},
                          {"stopped", r.stopped},
                          {"pairs_csv", args.out.empty() ? nullptr : nlohmann::json(args.out)}};
    doc["example"] = nullptr;
    if (example) {
      doc["example"] = {{"x", named_row(schema, example->x)},
                        {"x_prime", named_row(schema, example->x_prime)},
                        {"label", name_of(example->label)},
                        {"label_prime", name_of(example->label_prime)}};
    }
    print_json(doc);
    return;
  }
  const std::string who = model ? fmt::format("{} ({})", model->name, model->source) : "'" + args.command + "'";
  std::cout << fmt::format("{} on {}, protected {}\n", to_string(r.method), who, fmt::join(names, ","));
  std::cout << fmt::format("  {} unique tests, {} discriminatory ({:.1f}%) in {:.2f} s; stopped: {}\n", r.generated,
                           r.discriminatory, 100 * rate(r.discriminatory, r.generated), r.seconds, r.stopped);
  std::string phases;
  for (const TestPhase& ph : r.phases)
    phases += fmt::format("{}{} {}/{}", phases.empty() ? "" : ", ", ph.name, ph.discriminatory, ph.generated);
  std::cout << fmt::format("  per phase (discriminatory/generated): {}\n", phases);
  std::cout << fmt::format("  {:.0f} tests/s, {:.0f} discriminatory/s; {} labels asked of the {}\n", tps, dps,
                           r.queries, model ? "model" : "program");
  if (r.rejected > 0)
    std::cout << fmt::format("  {} label changes did not replay on the model and were dropped\n", r.rejected);
  if (example) {
    std::cout << fmt::format("  example: {} -> {}\n", schema.display_row(example->x), name_of(example->label));
    std::string changed;
    for (int f : o.protected_features)
      changed += fmt::format("{}{}={}", changed.empty() ? "" : ", ", schema.feature(f).name,
                             schema.display(f, example->x_prime(f)));
    std::cout << fmt::format("       vs: {} -> {}\n", changed, name_of(example->label_prime));
  }
  if (csv) std::cout << fmt::format("  {} pairs written to {}\n", csv->rows(), args.out);
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
