// witness query FILE.toml... [--json] [--time-limit S] [--model M] [--semantics S]: answers
// might / would counterfactual queries (soid) with a replayed scenario.
#include "query/query.h"

#include <iostream>

#include "cli/cli.h"
#include "report/query_report.h"
#include "run/jobs.h"

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
  Env unused;
  set_job_options(query_options(), job, unused, given_options(args.options));
  job.options.cancel = &interrupt_flag();
  std::vector<Query> queries;
  for (const auto& f : args.files) {
    for (Query& q : load_query_file(f, !job.model.empty() || !job.program.empty())) queries.push_back(std::move(q));
  }
  queries = job_queries(std::move(queries), job);
  int status = 0;
  const std::string given = !job.model.empty() ? "--model" : !job.program.empty() ? "--program" : "";
  const RunOutput out = run_queries(queries, job.options, given, [&](const Query& q, const QueryAnswer& a) {
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
  cmd->add_option("--model", args->job.model, "use this model for every query instead of the files' model")
      ->check(CLI::ExistingFile);
  cmd->add_option("--program", args->job.program, "use this C/C++ program for every query instead of the files' agent")
      ->check(CLI::ExistingFile);
  cmd->add_option("--function", args->job.function, "the program's decision function (with --program)");
  add_setting_flags(*cmd, query_options(), args->options);
  cmd->add_flag("--json", args->json, "print one JSON document on stdout");
  cmd->callback([args, &status] { status = run_query_command(*args); });
}

}  // namespace witness::cli
