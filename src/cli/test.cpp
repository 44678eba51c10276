// witness test MODEL|--cmd CMD --schema S --protected A[,B] --method M: black-box fairness testing.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/cli.h"
#include "core/error.h"
#include "fairness/blackbox.h"
#include "report/rows.h"
#include "run/jobs.h"
#include "run/option_catalog.h"

namespace witness::cli {
namespace {

struct TestArgs {
  SubjectArgs subject;
  std::string command;
  std::string seeds;
  std::string out;
  bool json = false;
  double batch_timeout = 60;
  long long batch_rows = 8192;
  bool category_names = false;
  int classes = 0;
  std::map<std::string, std::string> options;  // test_options() and the run options, as given
  ReportFiles report;
};

void run_test_command(const TestArgs& args, int& status) {
  Env env;
  TestOptions o;
  const std::map<std::string, std::string> given = given_options(args.options);
  set_job_options(test_options(), o, env, given);
  settle_test_budget(o, given);
  env.set_cancel(&interrupt_flag());
  env.start();
  apply_process_limits(env);
  check_report_files(args.report);
  if (args.subject.model.empty() == args.command.empty())
    throw InputError("give either a MODEL file or a non-empty --cmd \"program\" (not both)");
  SubjectSource src = args.subject.source();
  src.seeds.path = args.seeds;
  const JobSubject subject = load_subject_within_limit(src, env, "test", args.json);
  const Schema& schema = subject.schema;

  std::unique_ptr<LabelOracle> oracle;
  if (subject.model) {
    oracle = std::make_unique<ModelOracle>(*subject.model, schema, env.threads());
  } else {
    CommandOptions c;
    c.batch_seconds = args.batch_timeout;
    c.max_batch = args.batch_rows;
    c.category_names = args.category_names;
    c.classes = args.classes;
    if (env.options.get_real("time-limit") > 0) {
      const double left = env.options.get_real("time-limit") - env.elapsed_seconds();
      c.run_deadline = seconds_from_now(left);
    }
    oracle = std::make_unique<CommandOracle>(args.command, schema, c);
  }
  // --out is streamed: a long run may find millions of pairs.
  std::optional<PairCsv> csv;
  if (!args.out.empty()) csv.emplace(args.out, schema, subject.protected_features);
  const Model* model = subject.model.get();
  auto label_of = [&](int label) { return model ? label_name(*model, schema, label) : label_name(schema, label); };
  o.on_pair = [&](const DiscriminatoryPair& p) {
    if (csv) csv->write(p.x, p.x_prime, label_of(p.label), label_of(p.label_prime));
  };
  ProgressLine progress;
  o.on_progress = [&](const TestProgress& p) {
    const std::string of = p.budget > 0 ? fmt::format("/{}", p.budget) : "";
    const double share = p.generated > 0 ? static_cast<double>(p.discriminatory) / static_cast<double>(p.generated) : 0;
    progress.show(fmt::format("{}: {}{} tests, {} discriminatory ({:.1f}%), {:.1f} s", to_string(o.method), p.generated,
                              of, p.discriminatory, 100 * share, p.seconds));
  };
  RunOutput out = run_testing(subject, *oracle, o, env, command_line(), 0, args.out);
  progress.clear();
  if (csv) csv->close();
  status = out.result.value("discriminatory", 0) > 0 ? 10 : 0;
  print_stats(env);
  print_answer(out, args.json);
  write_reports(args.report, out.report);
}

}  // namespace

void add_test_command(CLI::App& app, int& status) {
  auto args = std::make_shared<TestArgs>();
  CLI::App* cmd =
      app.add_subcommand("test", "Generate discriminatory test inputs (SymbGen, THEMIS, AEQUITAS, ADF, random pairs)");
  add_subject_options(*cmd, args->subject, "--seeds", false);
  cmd->add_option("--cmd", args->command,
                  "black-box program: reads CSV rows on stdin, prints one label per row (docs/blackbox.md)");
  cmd->add_option("--seeds", args->seeds, "dataset CSV: seed inputs and the distribution of perturbations");
  cmd->add_option("--out", args->out, "write the discriminatory pairs as CSV (raw, named values)");
  cmd->add_flag("--json", args->json, "print one JSON document on stdout");
  add_report_options(*cmd, args->report);
  add_setting_flags(*cmd, test_options(), args->options);
  cmd->add_option("--batch-timeout", args->batch_timeout, "--cmd: seconds the program may take per batch [60]");
  cmd->add_option("--batch-rows", args->batch_rows, "--cmd: rows per batch [default 8192]");
  cmd->add_flag("--category-names", args->category_names, "--cmd: write category labels instead of codes");
  cmd->add_option("--classes", args->classes,
                  "--cmd: the program's labels are 0..N-1 [default: the schema's label classes, else 2]");
  add_env_options(*cmd, args->options, job_run_options("test"));
  cmd->callback([args, &status] { run_test_command(*args, status); });
}

}  // namespace witness::cli
