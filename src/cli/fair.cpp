// witness fair MODEL --schema S --protected A[,B] --engine concolic|dual: find an unfairness
// witness pair, or prove that none exists in the schema's domain.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <tuple>

#include "cli/cli.h"
#include "core/alarm.h"
#include "core/error.h"
#include "domain/dataset.h"
#include "fairness/engine.h"
#include "model/loaders.h"
#include "report/fairness_report.h"
#include "report/html_report.h"
#include "report/rows.h"

namespace witness::cli {
namespace {

struct FairArgs {
  std::string model;
  std::string schema;
  std::string box;
  std::string protected_list;
  std::string engine = "auto";
  std::string seeds;
  std::string witnesses_out;
  std::string regions_out;
  std::string data;
  bool json = false;
  std::map<std::string, std::string> engine_options;  // engine_options() flags as given
  std::map<std::string, std::string> env_options;
  ReportFiles report;
};

int run_fair(const FairArgs& args) {
  Env env;
  apply_env_options(env, args.env_options);
  env.start();
  const Model model = load_model(args.model);
  const Schema schema = load_schema_for(model, args.schema, args.box);
  const FairnessProblem problem(
      model, schema, args.protected_list.empty() ? std::vector<std::string>() : split_list(args.protected_list));
  const std::vector<std::string>& names = problem.protected_names();
  const std::vector<int>& prot = problem.protected_features();
  (void)fairness_engine(args.engine);  // an unknown engine before any work

  EngineSettings settings;
  apply_setting_flags(engine_options(), args.engine_options, settings);
  Dataset data;
  if (!args.seeds.empty()) {
    data = load_csv(args.seeds, schema);
    if (data.raw.cols() == 0) throw InputError(args.seeds, "", "no data rows");
    settings.seeds = &data.raw;
  }
  const double limit = env.options.get_real("time-limit");
  // The latest shares the complete engine reported (sound when reported), for the answer below.
  std::atomic<double> last_certified{0.0}, last_falsified{0.0};
  const bool measures = fairness_engine(args.engine).measures_domain;
  const bool uses_z3 = engine_uses_z3(args.engine, model);
  // The last resort behind --time-limit: Z3 4.8.12 ignores its timeout and interrupts inside some
  // integer checks, so if the engine has not returned well after the limit, print an inconclusive
  // answer (with the shares known so far) and end the process (exit 20) instead of overrunning.
  auto late_answer = [&]() {
    const std::string why = fmt::format("the engine did not stop within {:.0f} s of the {} s time limit{}",
                                        limit * 0.1 + 2.0, limit, uses_z3 ? " (a Z3 call ignored its timeout)" : "");
    const double c = last_certified.load(), f = last_falsified.load();
    if (!args.json) {
      std::string text = "inconclusive: " + why + "\n";
      if (measures)
        text += fmt::format("  domain: certified {}, falsified {}, undecided {} (the last shares reported)\n",
                            percent(c), percent(f), percent(std::max(0.0, 1.0 - c - f)));
      return text;
    }
    nlohmann::json late = {{"verdict", "inconclusive"},
                           {"engine", args.engine},
                           {"model", model.source},
                           {"schema", schema.source()},
                           {"protected", names},
                           {"exhaustive", false},
                           {"reason", why},
                           {"witnesses_found", 0},
                           {"witness", nullptr},
                           {"stats", {{"seconds", limit}}}};
    if (measures) {
      late["certified"] = c;
      late["falsified"] = f;
      late["undecided"] = std::max(0.0, 1.0 - c - f);
    }
    return late.dump(2) + "\n";
  };
  const Alarm deadline(limit > 0 ? std::optional(std::chrono::steady_clock::now() +
                                                 std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                     std::chrono::duration<double>(limit * 1.1 + 2.0)))
                                 : std::nullopt,
                       [&late_answer] {
                         const std::string answer = late_answer();
                         std::fputs(answer.c_str(), stdout);
                         std::fflush(stdout);
                         std::_Exit(20);
                       });
  ProgressLine progress;
  double last_log = 0.0;
  settings.progress = [&](const CompleteProgress& p) {
    last_certified = p.certified;
    last_falsified = p.falsified;
    const std::string line = fmt::format("decided {} (certified {}, falsified {}), {} leaves, {:.0f} leaves/s",
                                         percent(p.certified + p.falsified), percent(p.certified), percent(p.falsified),
                                         p.leaves, p.seconds > 0 ? static_cast<double>(p.leaves) / p.seconds : 0.0);
    if (env.options.get_int("verbose") >= 1) {  // --verbose: a line a second, terminal or not
      if (p.seconds - last_log >= 1.0) {
        last_log = p.seconds;
        env.log(1, "{:.1f} s: {}", p.seconds, line);
      }
    } else {
      progress.show(line);
    }
  };
  Dataset rows;
  if (!args.data.empty()) {
    rows = load_csv(args.data, schema);
    if (rows.raw.cols() == 0) throw InputError(args.data, "", "no data rows");
  }
  env.log(1, "fair: {} ({} inputs), engine {}, protected {}, time limit {} s", model.name, model.input_width(),
          args.engine, fmt::join(names, ","), limit);
  FairnessResult r = run_fairness_engine(args.engine, problem, settings, env);
  progress.clear();
  if (!args.data.empty()) r.data = measure_rows(model, schema, prot, rows.raw, args.data);
  const FairnessRun run{.problem = problem, .result = r, .quantify = settings.quantify, .counters = env.stats.all()};
  if (!args.witnesses_out.empty()) write_witness_csv(args.witnesses_out, run);
  if (!args.regions_out.empty()) write_regions_csv(args.regions_out, run);
  print_stats(env);
  const nlohmann::json doc = fairness_json(run);
  const std::string text = fairness_text(run);
  if (!args.report.html.empty() || !args.report.json.empty())
    write_reports(args.report, report_envelope("fair", command_line(), text, doc, schema_json(schema),
                                               witness_pairs_json(run, kReportPairs)));
  if (args.json) {
    print_json(doc);
  } else {
    std::cout << text;
  }
  return exit_code(r.verdict);
}

// The --engine help, from the engine table.
std::string engine_help() {
  std::string help = "the engine, by name [default auto]:";
  for (const EngineInfo& e : fairness_engines()) help += fmt::format(" {}: {};", e.name, e.summary);
  help.back() = '.';
  return help;
}

}  // namespace

void add_fair_command(CLI::App& app, int& status) {
  auto args = std::make_shared<FairArgs>();
  CLI::App* cmd = app.add_subcommand(
      "fair",
      "Find an unfairness witness (two inputs that differ only in protected attributes and get different "
      "labels), or prove that none exists. Exit 0 verified, 10 witness, 20 inconclusive");
  cmd->add_option("model", args->model, "model file (.json mlp-json-v1, Keras .h5, .onnx)")->required();
  cmd->add_option("--schema", args->schema, "input schema (TOML)")->required();
  cmd->add_option("--box", args->box, "use a named alternative box of the schema (e.g. fairify)");
  cmd->add_option("--protected", args->protected_list, "protected attributes, comma-separated (default: the schema's)");
  cmd->add_option("--engine", args->engine, engine_help());
  cmd->add_option("--seeds", args->seeds, "CSV of seed rows (concolic: every row; dual: the first is the start)");
  cmd->add_option("--witnesses-out", args->witnesses_out, "write the witness pairs as CSV (raw, named values)");
  cmd->add_option("--regions-out", args->regions_out,
                  "--quantify: write the falsified and undecided regions as CSV (rules over the features, shares)");
  cmd->add_option("--data", args->data,
                  "also check every row of this CSV against every protected value (exact) and report the share of "
                  "rows whose label changes");
  add_setting_flags(*cmd, engine_options(), args->engine_options);
  cmd->add_flag("--json", args->json, "print one JSON document on stdout");
  add_report_options(*cmd, args->report);
  add_env_options(*cmd, args->env_options, {"seed", "time-limit", "threads", "verbose", "stats"});
  cmd->callback([args, &status] { status = run_fair(*args); });
}

}  // namespace witness::cli
