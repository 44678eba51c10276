// The four jobs (fair, test, bias, query) from options to answer, for every front end: the CLI, the
// Python module and witness serve call these, so defaults, checks and answers are written once.
// Each job's options are declared once in a table (name, type, default, range, help): the CLI
// makes its flags from the tables, Python and the server set options by the same names.
//
//   witness::SubjectSource src;
//   src.model_path = "benchmarks/fairify/models/adult/AC1.h5";
//   src.schema_path = "benchmarks/fairify/adult.toml";
//   src.protected_names = {"sex"};
//   witness::Env env;
//   witness::FairJob job;
//   witness::set_job_options(witness::fair_options(), job, env, {{"max-witnesses", "3"}, {"seed", "1"}});
//   witness::RunOutput out = witness::run_fair(witness::load_subject(src), job, env, "witness fair AC1.h5 ...");
//   std::string verdict = out.result["verdict"];    // "witness"
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/options.h"
#include "fairness/bias.h"
#include "fairness/blackbox.h"
#include "fairness/engine.h"
#include "fairness/oracle.h"
#include "query/query.h"
#include "run/subject.h"

namespace witness {

struct RunOutput {
  nlohmann::json result;    // the CLI's --json document
  std::string text;         // the CLI's text output
  nlohmann::json report;    // the HTML report's envelope (null for queries)
  std::string pairs_csv;    // witness or discriminatory pairs (the CLI's --out columns; empty if none)
  std::string regions_csv;  // fair --quantify: the falsified and undecided regions (--regions-out)
  std::string flips_csv;    // fair with data rows: every row that flips, both decisions (--flips-out)
};

// --- options -----------------------------------------------------------------------------------
struct FairJob {
  std::string engine = "auto";
  EngineSettings settings;  // progress and cancel are set by the caller
  std::string favorable;    // data rows: the outcome people want ("": the second class, said to be assumed)
  int near_data = -1;       // data rows: search and count in boxes of +-K around them (run/near_data.h)
  int flips_shown = 20;     // data rows: flipped rows listed in the text and the report
};
struct BiasJob {
  long long samples = BiasOptions{}.samples;
  std::string favorable;
};
struct QueryJob {
  QueryOptions options;   // time limit, memory limit, float cases; cancel is set by the caller
  std::string semantics;  // "": each query's own; else real, float64 or float32 for every query
  std::string only;       // comma-separated query names to answer ("": all)
  std::string model;      // use this model for every query ("": each query's own)
  std::string program;    // or this C/C++ program ...
  std::string function;   // ... and its decision function
};

const std::vector<SettingOption<FairJob>>& fair_options();    // engine, engine_options(), favorable, ...
const std::vector<SettingOption<BiasJob>>& bias_options();    // samples, favorable
const std::vector<SettingOption<QueryJob>>& query_options();  // time-limit, memory-limit, semantics, only
// test: test_options() (fairness/blackbox.h)

// The run options (seed, threads, time-limit, verbose, stats: core/options.h) go to env, every other
// one to the job's table; InputError naming the option for an unknown name or a bad value.
template <typename J>
void set_job_options(const std::vector<SettingOption<J>>& table, J& job, Env& env,
                     const std::map<std::string, std::string>& options) {
  for (const auto& option : options) {
    const std::string& name = option.first;  // a plain name: clang 14 cannot capture structured bindings
    const std::string& value = option.second;
    const bool run_option =
        std::any_of(option_table().begin(), option_table().end(), [&](const OptionSpec& s) { return s.name == name; });
    const bool job_option =
        std::any_of(table.begin(), table.end(), [&](const SettingOption<J>& o) { return o.spec.name == name; });
    if (run_option && !job_option) {
      env.options.set(name, value);
    } else {
      set_setting(table, job, name, value);
    }
  }
}

// A progress report as every front end shows it (the server's job status, Python's callback): fair
// {certified, falsified, undecided, leaves, seconds}; test {generated, discriminatory, budget, seconds}.
nlohmann::json progress_json(const CompleteProgress& p);
nlohmann::json progress_json(const TestProgress& p);

// test's one rule across options, for the CLI, Python and the server alike: a time limit (> 0)
// given without a budget runs until the limit (budget 0). `given` as set_job_options took it.
void settle_test_budget(TestOptions& options, const std::map<std::string, std::string>& given);

// --memory-limit for a command-line run: the run stops once the process holds that much (Env),
// and the solver's own bound is set to it (one setting per process, so not for a server's jobs).
void apply_process_limits(const Env& env);

// Adds what an answer takes on trust (regions closed by another process, read from a file) to its
// text, its JSON (`trusted`) and its report.
void add_trust_note(RunOutput& out, const std::string& note);

// --- jobs --------------------------------------------------------------------------------------
// `command` is the CLI line that does the same, shown in the report. With data rows, fair also
// decides every row with every other protected value (exact): the rows that flip are the first
// witnesses (verdict `witness` in every mode when one replays), counted per group and direction of
// the favourable outcome and listed; and the group metrics over subject.group_names. A model that
// reads none of the protected attributes (columns of the data only) is `verified` with the groups.
RunOutput run_fair(const JobSubject& subject, const FairJob& job, Env& env, const std::string& command);

// Black-box testing through `oracle` (replayed on oracle.model() when it has one). At most
// `max_csv_pairs` pairs go into pairs_csv; options.on_pair sees every one (and writes them to
// `pairs_file`, named in the answer, when the caller streams them to a file).
RunOutput run_testing(const JobSubject& subject, LabelOracle& oracle, TestOptions options, Env& env,
                      const std::string& command, std::size_t max_csv_pairs, const std::string& pairs_file = "");

// The Bias% estimate; drawn from the subject's data rows when it has them, else uniformly.
RunOutput run_bias(const JobSubject& subject, const BiasJob& job, Env& env, const std::string& command);

// The query files' queries with the job's overrides (model, program, semantics, only), checked:
// InputError for an unknown name in `only`, both a model and a program, a program without a function.
std::vector<Query> job_queries(std::vector<Query> queries, const QueryJob& job);
// The seconds the next query may take: its own limit (options.time_limit) or what is left of the
// run's (`run_limit` after `elapsed` seconds), whichever is less; 0: no limit; negative: none left.
double query_seconds(const QueryOptions& options, double run_limit, double elapsed);
// Answers queries in order, loading (compiling) each model and program once, within `run_limit`
// seconds for all of them (0: none; those it leaves no time are unknown, not asked). `given` names
// where the model or program paths came from when not from the query files (e.g. "--model"), for
// messages. on_answer (if set) sees each answer as it comes. result = {"queries": [...]}.
RunOutput run_queries(const std::vector<Query>& queries, const QueryOptions& options, double run_limit,
                      const std::string& given = "",
                      const std::function<void(const Query&, const QueryAnswer&)>& on_answer = {});

}  // namespace witness
