// witness query FILE.toml... [--json] [--time-limit S] [--query-time-limit S] [--model M] [--semantics S]: answers
// might / would counterfactual queries (soid) with a replayed scenario.
#include "query/query.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "core/alarm.h"
#include "report/query_report.h"
#include "report/rows.h"
#include "run/jobs.h"
#include "run/option_catalog.h"

namespace witness::cli {
namespace {

struct QueryArgs {
  std::vector<std::string> files;
  bool json = false;
  QueryJob job;                                // model, program, function (paths, checked to exist)
  std::map<std::string, std::string> options;  // query_options(), as given
};

int run_query_command(const QueryArgs& args) {
  QueryJob job = args.job;
  Env env;  // takes --time-limit, the whole run's
  set_job_options(query_options(), job, env, given_options(args.options));
  const double run_limit = env.options.get_real("time-limit");
  const auto start = std::chrono::steady_clock::now();
  job.options.cancel = &interrupt_flag();
  std::vector<Query> queries;
  for (const auto& f : args.files) {
    for (Query& q : load_query_file(f, !job.model.empty() || !job.program.empty())) queries.push_back(std::move(q));
  }
  queries = job_queries(std::move(queries), job);
  int status = 0;
  const std::string given = !job.model.empty() ? "--model" : !job.program.empty() ? "--program" : "";
  // The last resort behind a query's time limit (its own, or what is left of the run's): one term
  // of a wide network can take Z3 seconds to build, which no poll interrupts. A query (its model's
  // loading included) that has not answered within its limit and 70% of max(10%, 1 s) gets an
  // unknown answer, printed with those before it, and the process ends (exit 20); the queries
  // after it are not asked.
  std::size_t answered = 0;
  nlohmann::json so_far = nlohmann::json::array();
  double limit = 0.0;
  auto overdue = [&] {
    const Query& q = queries[answered];
    QueryAnswer a;
    a.name = q.name;
    a.kind = q.kind;
    a.semantics = q.semantics;
    a.status = QueryAnswer::Status::Unknown;
    const std::size_t left = queries.size() - answered - 1;
    const std::string unasked = left == 1  ? "; the query after it was not asked"
                                : left > 1 ? fmt::format("; the {} queries after it were not asked", left)
                                           : "";
    a.reason_unknown =
        fmt::format("time limit ({} s): the solver did not stop in time, so witness ended{}", limit, unasked);
    a.seconds = limit + last_resort_grace(limit);
    if (args.json) {
      so_far.push_back(query_json(q, a));
      std::cout << json_text(nlohmann::json{{"queries", so_far}}) << '\n';
    } else {
      std::cout << query_text(q, a);
    }
    std::cout.flush();
    std::_Exit(20);
  };
  auto arm = [&]() -> std::unique_ptr<Alarm> {
    limit = query_seconds(job.options, run_limit,
                          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (limit <= 0 || answered >= queries.size()) return nullptr;
    return std::make_unique<Alarm>(seconds_from_now(limit + last_resort_grace(limit)), overdue);
  };
  std::unique_ptr<Alarm> deadline = arm();
  const RunOutput out = run_queries(queries, job.options, run_limit, given, [&](const Query& q, const QueryAnswer& a) {
    deadline.reset();
    ++answered;
    if (a.status == QueryAnswer::Status::Unknown) status = 20;
    if (!args.json) std::cout << query_text(q, a) << std::flush;  // as each answer comes
    so_far.push_back(query_json(q, a));
    deadline = arm();
  });
  deadline.reset();
  if (args.json) print_json(out.result);
  return status;
}

}  // namespace

void add_query_command(CLI::App& app, int& status) {
  auto args = std::make_shared<QueryArgs>();
  CLI::App* cmd = app.add_subcommand(
      "query", "Answer might/would counterfactual queries about a model's decision, with a concrete scenario");
  cmd->add_option("files", args->files, "query files (TOML)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--model", args->job.model, "use this model for every query instead of the files' model")
      ->check(CLI::ExistingFile);
  cmd->add_option("--program", args->job.program, "use this C/C++ program for every query instead of the files' agent")
      ->check(CLI::ExistingFile);
  cmd->add_option("--function", args->job.function, "the program's decision function (with --program)");
  add_setting_flags(*cmd, query_options(), args->options);
  add_env_options(*cmd, args->options, job_run_options("query"));
  // Once the per-query memory bound: an old command line learns its new name (hidden from --help).
  cmd->add_option_function<std::string>("--memory-limit",
                                        [](const std::string&) {
                                          throw CLI::ValidationError(
                                              "--memory-limit",
                                              "the solver's megabytes per query are now --query-memory-limit MB");
                                        })
      ->group("");
  cmd->add_flag("--json", args->json, "print one JSON document on stdout");
  cmd->callback([args, &status] { status = run_query_command(*args); });
}

}  // namespace witness::cli
