// Shared pieces of the witness subcommands (src/cli/*.cpp). Each subcommand file defines one
// `add_<name>_command(CLI::App&)` that registers its flags and its callback.
//
//   CLI::App app("witness");
//   int status = 0;                          // the exit code that fair, test and query set
//   witness::cli::add_info_command(app);
//   witness::cli::add_fair_command(app, status);
//   app.parse("info benchmarks/fairify/models/adult/AC1.h5");   // the callback runs and may throw witness::Error
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/options.h"
#include "core/sanitizer.h"
#include "domain/schema.h"
#include "model/model.h"
#include "report/rows.h"
#include "run/subject.h"

namespace witness {
struct RunOutput;
}

namespace witness::cli {

void add_info_command(CLI::App& app);
void add_merge_command(CLI::App& app, int& status);
void add_predict_command(CLI::App& app);
void add_bias_command(CLI::App& app);
void add_schema_command(CLI::App& app);
void add_convert_command(CLI::App& app);
void add_dual_command(CLI::App& app);
void add_transform_command(CLI::App& app);
// `status` receives the verdict's exit code (0 verified, 10 witness, 20 inconclusive).
void add_fair_command(CLI::App& app, int& status);
// `status`: 10 when discriminatory inputs were found, else 0.
void add_test_command(CLI::App& app, int& status);
// `status`: 20 when the solver gave up on some query, else 0.
void add_query_command(CLI::App& app, int& status);
// witness report RUN.json -o OUT.html
void add_report_command(CLI::App& app);
// witness serve [--port P] [--root DIR]: the workbench (src/server).
void add_serve_command(CLI::App& app, int& status);

// Ctrl-C (src/cli/interrupt.cpp): catch_interrupts() makes the first SIGINT raise interrupt_flag(),
// which the commands give their runs as the cancel flag; main exits 130 when it was raised.
void catch_interrupts();
const std::atomic<bool>& interrupt_flag();
bool was_interrupted();

// A --flag per spec (a Bool spec is a flag without a value); `raw` receives the texts given, keyed
// by name, to be checked and stored when the subcommand runs.
void add_option_flags(CLI::App& cmd, const std::vector<OptionSpec>& specs, std::map<std::string, std::string>& raw);
// A --flag per row of a settings table (engine_options(), test_options()), and the texts given
// stored into the settings (checked; InputError naming the flag).
template <typename S>
void add_setting_flags(CLI::App& cmd, const std::vector<SettingOption<S>>& table,
                       std::map<std::string, std::string>& raw) {
  std::vector<OptionSpec> specs;
  specs.reserve(table.size());
  for (const SettingOption<S>& o : table) specs.push_back(o.spec);
  add_option_flags(cmd, specs, raw);
}
template <typename S>
void apply_setting_flags(const std::vector<SettingOption<S>>& table, const std::map<std::string, std::string>& raw,
                         S& settings) {
  for (const auto& [name, value] : raw) {
    if (!value.empty()) set_setting(table, settings, name, value);
  }
}
// "Within 10% or 1 s of the limit": how far past --time-limit a command's answer may come. The
// last-resort alarms of fair and query fire at 70% of it, leaving the rest for printing and exiting.
// Under the sanitizers, which slow every step several times, three times that: the alarm is for an
// engine that does not stop, not for one gathering its answer (GC1's, 1,300 regions: 0.8 s there).
inline double limit_slack(double limit) { return std::max(limit * 0.1, 1.0); }
inline double last_resort_grace(double limit) { return 0.7 * limit_slack(limit) * (kAddressSanitizer ? 3.0 : 1.0); }
// The steady-clock moment `seconds` from now (none before now).
inline std::chrono::steady_clock::time_point seconds_from_now(double seconds) {
  return std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                std::chrono::duration<double>(std::max(0.0, seconds)));
}
// load_subject under --time-limit, which counts from the start: inputs still being read (a model of
// a million trees) once the limit and its grace (10% or 1 s, whichever is more) have passed end the command with an
// inconclusive answer that says so (exit 20), in text or, with `json`, as a JSON document that also
// holds `fields` (the keys a command's answer always has, so a reader of --json finds them).
JobSubject load_subject_within_limit(const SubjectSource& source, const Env& env, const std::string& command, bool json,
                                     const nlohmann::json& fields = nlohmann::json::object());
// Adds the named flags of option_table() (seed, threads, time-limit, verbose) to a subcommand;
// apply_env_options() moves their values into env.options when the subcommand runs.
void add_env_options(CLI::App& cmd, std::map<std::string, std::string>& raw, const std::vector<std::string>& names);
void apply_env_options(Env& env, const std::map<std::string, std::string>& raw);
// With --stats (or --verbose 1): every counter of the run on stderr, one `stats: name = value` a line.
void print_stats(const Env& env);

// The positional MODEL and --schema, --box, --protected of fair, test and bias. --schema may be left
// out for a model that carries its preprocessing when --data is given (run/subject.h).
struct SubjectArgs {
  std::string model;
  std::string schema;
  std::string box;
  std::string protected_list;
  std::string label;        // --label: the data's true-label column ("" unset)
  std::string groups_list;  // --groups: columns for group metrics

  [[nodiscard]] SubjectSource source() const;
};
// `rows` names the flag whose rows give a pipeline's schema; test's MODEL is optional (--cmd).
void add_subject_options(CLI::App& cmd, SubjectArgs& args, const std::string& rows = "--data",
                         bool model_required = true);
// --label and --groups, for the commands that read data rows (fair, bias).
void add_data_options(CLI::App& cmd, SubjectArgs& args);
// The options given (non-empty), as set_job_options takes them.
std::map<std::string, std::string> given_options(const std::map<std::string, std::string>& raw);
// A job's answer on stdout: the --json document, or the text.
void print_answer(const RunOutput& out, bool json);
// 0 verified, 10 witness, 20 inconclusive, from a fair answer's JSON.
int verdict_exit_code(const nlohmann::json& result);

// Prints a JSON document on stdout (the only thing on stdout with --json).
void print_json(const nlohmann::json& doc);
// --html OUT.html and --report-json OUT.json of fair, test and bias.
struct ReportFiles {
  std::string html;
  std::string json;
};
void add_report_options(CLI::App& cmd, ReportFiles& files);
// Writes the report envelope to the files asked for (InputError naming a file it cannot write).
void write_reports(const ReportFiles& files, const nlohmann::json& envelope);
// Before a run: every file it will write can be written (core/file.h check_writable).
void check_report_files(const ReportFiles& files);
// The command line as typed (for reports), recorded by main().
void set_command_line(int argc, const char* const* argv);
const std::string& command_line();

// One self-overwriting status line on stderr, shown only when stderr is a terminal and the run has
// lasted more than a second (so scripts and short runs stay silent).
class ProgressLine {
 public:
  ProgressLine();
  void show(const std::string& text);
  void clear();

 private:
  bool tty_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
};
// Number of parameters (weights, biases, table entries, tree leaves) in a model.
long long count_parameters(const Model& m);

}  // namespace witness::cli
