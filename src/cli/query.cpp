// witness query FILE.toml... [--json] [--time-limit S] [--model M] [--semantics S]: answers
// might / would counterfactual queries (soid) with a replayed scenario.
#include "query/query.h"

#include <fmt/format.h>

#include <iostream>

#include "cli/cli.h"
#include "core/error.h"
#include "report/query_report.h"
#include "report/runs.h"

namespace witness::cli {
namespace {

struct QueryArgs {
  std::vector<std::string> files;
  std::string model;
  std::string program;
  std::string function;
  std::string semantics;
  std::string only;
  double time_limit = 0.0;
  double memory_limit = 4096;
  bool json = false;
};

int run_query(const QueryArgs& args) {
  std::vector<Query> queries;
  for (const auto& f : args.files) {
    for (Query& q : load_query_file(f)) queries.push_back(std::move(q));
  }
  if (!args.only.empty()) {
    const std::vector<std::string> keep = split_list(args.only);
    for (const auto& k : keep) {
      if (std::none_of(queries.begin(), queries.end(), [&](const Query& q) { return q.name == k; })) {
        throw InputError(fmt::format("--only: no query named '{}'", k));
      }
    }
    std::erase_if(queries, [&](const Query& q) { return std::find(keep.begin(), keep.end(), q.name) == keep.end(); });
  }
  if (!args.model.empty() && !args.program.empty()) throw InputError("give --model or --program, not both");
  if (!args.function.empty() && args.program.empty()) throw InputError("--function needs --program");
  for (Query& q : queries) {
    if (!args.model.empty()) {
      q.model_path = args.model;
      q.program_path.clear();
    }
    if (!args.program.empty()) {
      q.program_path = args.program;
      q.model_path.clear();
      if (!args.function.empty()) q.function = args.function;
      if (q.function.empty()) {
        throw InputError(fmt::format("{}: --program needs --function (the query names none)", q.where));
      }
    }
    if (args.semantics == "real") q.semantics = Semantics::Real;
    if (args.semantics == "float64") q.semantics = Semantics::Float64;
    if (args.semantics == "float32") q.semantics = Semantics::Float32;
  }
  QueryOptions options;
  options.time_limit = args.time_limit;
  options.memory_limit_mb = args.memory_limit;
  int status = 0;
  const std::string given = !args.model.empty() ? "--model" : !args.program.empty() ? "--program" : "";
  const RunOutput out = run_queries(queries, options, given, [&](const Query& q, const QueryAnswer& a) {
    if (a.status == QueryAnswer::Status::Unknown) status = 20;
    if (!args.json) std::cout << query_text(q, a) << std::flush;  // as each answer comes
  });
  if (args.json) print_json(out.result);
  return status;
}

}  // namespace

void add_query_command(CLI::App& app, int& status) {
  auto args = std::make_shared<QueryArgs>();
  CLI::App* cmd = app.add_subcommand(
      "query", "Answer might/would counterfactual queries about a model's decision, with a concrete scenario");
  cmd->add_option("files", args->files, "query files (TOML)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--model", args->model, "use this model for every query instead of the files' model")
      ->check(CLI::ExistingFile);
  cmd->add_option("--program", args->program, "use this C/C++ program for every query instead of the files' agent")
      ->check(CLI::ExistingFile);
  cmd->add_option("--function", args->function, "the program's decision function (with --program)");
  cmd->add_option("--semantics", args->semantics, "override every query's semantics")
      ->check(CLI::IsMember({"real", "float64", "float32"}));
  cmd->add_option("--only", args->only, "answer only these queries (comma-separated names)");
  cmd->add_option("--time-limit", args->time_limit, "seconds per query before the solver gives up (exit 20)")
      ->check(CLI::Range(0.0, 1.0e6));
  cmd->add_option("--memory-limit", args->memory_limit,
                  "megabytes the solver may use per query before it gives up (exit 20); 0: no limit")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0e7));
  cmd->add_flag("--json", args->json, "print one JSON document on stdout");
  cmd->callback([args, &status] { status = run_query(*args); });
}

}  // namespace witness::cli
