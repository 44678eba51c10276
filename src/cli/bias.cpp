// witness bias MODEL --schema S --protected A[,B]: sampled Bias% with a 95% confidence interval.
#include <memory>

#include "cli/cli.h"
#include "run/jobs.h"
#include "run/option_catalog.h"

namespace witness::cli {
namespace {

struct BiasArgs {
  SubjectArgs subject;
  std::string data;
  bool json = false;
  std::map<std::string, std::string> options;  // bias_options() and the run options, as given
  ReportFiles report;
};

void run_bias_command(const BiasArgs& args) {
  Env env;
  BiasJob job;
  set_job_options(bias_options(), job, env, given_options(args.options));
  env.set_cancel(&interrupt_flag());
  env.start();
  apply_process_limits(env);
  check_report_files(args.report);
  SubjectSource src = args.subject.source();
  src.data.path = args.data;
  const RunOutput out = run_bias(load_subject_within_limit(src, env, "bias", args.json), job, env, command_line());
  print_stats(env);
  print_answer(out, args.json);
  write_reports(args.report, out.report);
}

}  // namespace

void add_bias_command(CLI::App& app) {
  auto args = std::make_shared<BiasArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bias", "Estimate Bias%: the share of inputs whose label changes with the protected attribute");
  add_subject_options(*cmd, args->subject);
  cmd->add_option("--data", args->data,
                  "draw inputs from the rows of this CSV instead of uniformly (PyFair's way); a model that carries "
                  "its preprocessing reads its schema off them");
  add_data_options(*cmd, args->subject);
  add_setting_flags(*cmd, bias_options(), args->options);
  cmd->add_flag("--json", args->json, "print one JSON document on stdout");
  add_report_options(*cmd, args->report);
  add_env_options(*cmd, args->options, job_run_options("bias"));
  cmd->callback([args] { run_bias_command(*args); });
}

}  // namespace witness::cli
