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
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <tuple>

#include "cli/cli.h"
#include "core/alarm.h"
#include "core/error.h"
#include "core/file.h"
#include "report/rows.h"
#include "run/jobs.h"
#include "run/option_catalog.h"
#include "run/subproblems.h"

namespace witness::cli {
namespace {

struct FairArgs {
  SubjectArgs subject;
  std::string seeds;
  std::string witnesses_out;
  std::string regions_out;
  std::string flips_out;
  std::string data;
  bool json = false;
  std::map<std::string, std::string> options;  // fair_options() and the run options, as given
  ReportFiles report;
  // Paths are CLI flags, never job options: witness serve sets job options by name.
  std::string checkpoint, resume;
  double checkpoint_every = kCheckpointSeconds;
  int split = 0;  // --split-into K: write K sub-problems to out_dir instead of searching
  std::string out_dir;
  std::string subproblem;  // continue this sub-problem file
};

// --split-into K --out-dir D: the sub-problem files, and how to go on.
int write_split(const FairArgs& args, const FairJob& job, Env& env) {
  if (args.out_dir.empty()) throw InputError("--split-into: give the folder for the sub-problems with --out-dir");
  SubjectSource src = args.subject.source();
  src.data.path = args.data;
  const std::vector<std::string> files =
      write_subproblems(src, given_options(args.options), job, args.split, args.out_dir, env);
  fmt::print("wrote {} sub-problems: {} ... {}\n", files.size(), files.front(), files.back());
  fmt::print(
      "  solve each (anywhere these paths are readable): witness fair --subproblem FILE [--threads N] "
      "[--time-limit S]\n  then: witness merge {}/part-*.result.json\n",
      args.out_dir);
  return 0;
}

// The flags that go together, checked before anything is read.
void check_fair_args(const FairArgs& args) {
  const bool subproblem = !args.subproblem.empty();
  if (subproblem && (!args.subject.model.empty() || !args.subject.schema.empty() || !args.data.empty() ||
                     !args.subject.protected_list.empty() || !args.resume.empty() || !args.checkpoint.empty()))
    throw InputError(
        "--subproblem: the sub-problem file says the model, schema, data and protected features, and "
        "where its result goes");
  if (!subproblem && args.subject.model.empty())
    throw InputError("fair: a model file is needed (or --subproblem FILE)");
  check_report_files(args.report);
  for (const std::string& f : {args.witnesses_out, args.regions_out, args.flips_out}) {
    if (!f.empty()) check_writable(f);
  }
  if (!args.flips_out.empty() && args.data.empty()) throw InputError("--flips-out: give the data rows (--data)");
}

// The complete engine's progress: a line that rewrites itself on a terminal, or with --verbose a
// logged line a second; the latest shares are kept for a late answer.
std::function<void(const CompleteProgress&)> progress_writer(Env& env, ProgressLine& progress,
                                                             std::atomic<double>& last_certified,
                                                             std::atomic<double>& last_falsified) {
  return [&env, &progress, &last_certified, &last_falsified, last_log = 0.0](const CompleteProgress& p) mutable {
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
}

int run_fair_command(const FairArgs& args) {
  Env env;
  FairJob job;
  set_job_options(fair_options(), job, env, given_options(args.options));
  job.settings.checkpoint = args.checkpoint;
  job.settings.checkpoint_seconds = args.checkpoint_every;
  job.settings.resume = args.resume;
  env.set_cancel(&interrupt_flag());
  env.start();
  apply_process_limits(env);
  if (args.split > 0) return write_split(args, job, env);
  const bool subproblem = !args.subproblem.empty();
  check_fair_args(args);
  SubjectSource src = args.subject.source();
  src.data.path = args.data;
  src.seeds.path = args.seeds;
  const double limit = env.options.get_real("time-limit");
  const bool measures = fairness_engine(job.engine).measures_domain;
  // What an answer cut short by the limit says: nothing decided (the shares known so far, below).
  auto cut_short = [&](double certified, double falsified) {
    nlohmann::json fields = {{"engine", job.engine},
                             {"exhaustive", false},
                             {"witnesses_found", 0},
                             {"witness", nullptr},
                             {"stats", {{"seconds", limit}}}};
    if (measures) {
      fields["certified"] = certified;
      fields["falsified"] = falsified;
      fields["undecided"] = std::max(0.0, 1.0 - certified - falsified);
    }
    return fields;
  };
  const std::optional<JobSubject> subject =
      subproblem ? std::nullopt
                 : std::optional(load_subject_within_limit(src, env, "fair", args.json, cut_short(0.0, 0.0)));
  const std::string model_name = subproblem ? args.subproblem : subject->model->source;
  const std::string schema_name = subproblem ? args.subproblem : subject->schema.source();
  const std::vector<std::string> protected_names = subproblem ? std::vector<std::string>{} : subject->protected_names;
  // The latest shares the complete engine reported (sound when reported), for the answer below.
  std::atomic<double> last_certified{0.0}, last_falsified{0.0};
  const bool uses_z3 = !subproblem && engine_uses_z3(job.engine, *subject->model);
  // The last resort behind --time-limit: Z3 4.8.12 ignores its timeout and interrupts inside some
  // integer checks, so if the engine has not returned well after the limit, print an inconclusive
  // answer (with the shares known so far) and end the process (exit 20) instead of overrunning.
  // The whole command counts (loading a wide network takes seconds): the answer comes within 10% or 1 s
  // past the limit, counted from the start.
  // Exiting a process of a few GB takes a few tenths; a checkpoint at the end, about a second per
  // 150,000 open regions.
  // "Within 10% or 1 s of the limit": the alarm leaves 30% of that for printing and exiting.
  const double grace = last_resort_grace(limit) + (args.checkpoint.empty() && !subproblem ? 0.0 : 2.0 + limit * 0.1);
  auto late_answer = [&]() {
    const std::string why = fmt::format("the engine did not stop within {:.1f} s of the {} s time limit{}", grace,
                                        limit, uses_z3 ? " (a Z3 call ignored its timeout)" : "");
    const double c = last_certified.load(), f = last_falsified.load();
    if (!args.json) {
      std::string text = "inconclusive: " + why + "\n";
      if (measures)
        text += fmt::format("  domain: certified {}, falsified {}, undecided {} (the last shares reported)\n",
                            percent(c), percent(f), percent(std::max(0.0, 1.0 - c - f)));
      return text;
    }
    nlohmann::json late = cut_short(c, f);
    late.update({{"verdict", "inconclusive"},
                 {"model", model_name},
                 {"schema", schema_name},
                 {"protected", protected_names},
                 {"reason", why}});
    return late.dump(2) + "\n";
  };
  Alarm deadline(limit > 0 ? std::optional(seconds_from_now(limit + grace - env.elapsed_seconds())) : std::nullopt,
                 [&late_answer] {
                   wait_for_writes(120.0);  // a checkpoint being written is completed, so it can be resumed
                   const std::string answer = late_answer();
                   std::fputs(answer.c_str(), stdout);
                   std::fflush(stdout);
                   std::_Exit(20);
                 });
  ProgressLine progress;
  job.settings.progress = progress_writer(env, progress, last_certified, last_falsified);
  RunOutput out;
  if (subproblem) {
    std::string result;
    std::tie(out, result) = solve_subproblem(args.subproblem, job, env, command_line());
    env.log(0, "sub-problem {}: its state is saved in {}", args.subproblem, result);
  } else {
    out = run_fair(*subject, job, env, command_line());
  }
  // Disarmed before printing: an alarm already printing holds the lock until it exits, so exactly one
  // answer is printed (CI saw both when the engine returned just at the deadline).
  deadline.disarm();
  progress.clear();
  // The answer first: a side file that fails after all is an error, but the verdict is printed.
  print_stats(env);
  print_answer(out, args.json);
  if (!args.witnesses_out.empty()) write_file(args.witnesses_out, out.pairs_csv);
  if (!args.regions_out.empty()) write_file(args.regions_out, out.regions_csv);
  if (!args.flips_out.empty()) write_file(args.flips_out, out.flips_csv);
  write_reports(args.report, out.report);
  return verdict_exit_code(out.result);
}

}  // namespace

void add_fair_command(CLI::App& app, int& status) {
  auto args = std::make_shared<FairArgs>();
  CLI::App* cmd = app.add_subcommand(
      "fair",
      "Find an unfairness witness (two inputs that differ only in protected attributes and get different "
      "labels), or prove that none exists. Exit 0 verified, 10 witness, 20 inconclusive");
  add_subject_options(*cmd, args->subject, "--data", false);
  cmd->add_option("--seeds", args->seeds, "CSV of seed rows (concolic: every row; dual: the first is the start)");
  cmd->add_option("--witnesses-out", args->witnesses_out, "write the witness pairs as CSV (raw, named values)");
  cmd->add_option("--regions-out", args->regions_out,
                  "--quantify: write the falsified and undecided regions as CSV (rules over the features, shares)");
  cmd->add_option("--data", args->data,
                  "data rows (CSV): decide every row with every other protected value (exact): the rows that flip "
                  "come first, by group and direction; then the group table (rates, impact ratios; true and false "
                  "positive rates with --label); a model that carries its preprocessing reads its schema off them");
  add_data_options(*cmd, args->subject);
  cmd->add_option("--flips-out", args->flips_out,
                  "with --data: write every row that flips as CSV (row, group, both decisions and scores, values)");
  add_setting_flags(*cmd, fair_options(), args->options);
  cmd->add_option("--checkpoint", args->checkpoint,
                  "complete, auto: save the search (closed shares, open regions) to FILE every --checkpoint-every "
                  "seconds and at the end, written atomically");
  cmd->add_option("--checkpoint-every", args->checkpoint_every,
                  fmt::format("seconds between checkpoints (default {})", number_text(kCheckpointSeconds)));
  cmd->add_option("--resume", args->resume,
                  "complete, auto: continue the search saved in FILE (by --checkpoint) with the same model, schema, "
                  "protected features and mode");
  cmd->add_option("--split-into", args->split,
                  "complete, auto: write K sub-problems (saved searches of parts of the domain) to --out-dir instead "
                  "of searching; solve each with --subproblem, join them with witness merge");
  cmd->add_option("--out-dir", args->out_dir, "--split-into: the folder for the sub-problem files");
  cmd->add_option("--subproblem", args->subproblem,
                  "continue a sub-problem file of --split-into (it names the model, schema and options); its state is "
                  "saved beside it as part-K.result.json");
  cmd->add_flag("--json", args->json, "print one JSON document on stdout");
  add_report_options(*cmd, args->report);
  add_env_options(*cmd, args->options, job_run_options("fair"));
  cmd->callback([args, &status] { status = run_fair_command(*args); });
}

void add_merge_command(CLI::App& app, int& status) {
  struct MergeArgs {
    std::vector<std::string> results;
    std::string witnesses_out, regions_out;
    bool json = false;
  };
  auto args = std::make_shared<MergeArgs>();
  CLI::App* cmd =
      app.add_subcommand("merge",
                         "Join the results of the sub-problems of `witness fair --split-into` (every part exactly "
                         "once) into the answer one "
                         "run gives: verdict, shares, regions. Exit 0 verified, 10 witness, 20 inconclusive");
  cmd->add_option("results", args->results, "the part-K.result.json files")->required();
  cmd->add_option("--witnesses-out", args->witnesses_out, "write the witness pairs as CSV (raw, named values)");
  cmd->add_option("--regions-out", args->regions_out, "--quantify: write the regions as CSV");
  cmd->add_flag("--json", args->json, "print one JSON document on stdout");
  cmd->callback([args, &status] {
    Env env;
    env.start();
    for (const std::string& f : {args->witnesses_out, args->regions_out}) {
      if (!f.empty()) check_writable(f);
    }
    const RunOutput out = merge_subproblems(args->results, FairJob{}, env, command_line());
    print_answer(out, args->json);
    if (!args->witnesses_out.empty()) write_file(args->witnesses_out, out.pairs_csv);
    if (!args->regions_out.empty()) write_file(args->regions_out, out.regions_csv);
    status = verdict_exit_code(out.result);
  });
}

}  // namespace witness::cli
