#include "run/jobs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <utility>

#include "core/choice.h"
#include "core/error.h"
#include "fairness/bias.h"
#include "fairness/group_metrics.h"
#include "fairness/problem.h"
#include "fairness/row_audit.h"
#include "model/loaders.h"
#include "program/program.h"
#include "report/bias_report.h"
#include "report/fairness_report.h"
#include "report/group_report.h"
#include "report/html_report.h"
#include "report/query_report.h"
#include "report/rows.h"
#include "report/testing_report.h"
#include "run/near_data.h"
#include "run/provenance.h"
#include "solver/z3_check.h"

namespace witness {
namespace {

// A row of a settings table, reading and writing a member of a bigger job struct.
template <typename J, typename S>
SettingOption<J> nested(const SettingOption<S>& o, S J::*member) {
  return {o.spec, [store = o.store, member](J& j, const std::string& v) { store(j.*member, v); },
          [text = o.text, member](const J& j) { return text(j.*member); }};
}

template <typename J>
SettingOption<J> favorable_option() {
  return {{"favorable",
           OptionSpec::Type::String,
           "",
           0,
           0,
           "with data rows: the class people want (approved, >50K); rates, impact ratios and harm are stated in its "
           "terms (default: the model's second class, said to be assumed)",
           {}},
          [](J& j, const std::string& v) { j.favorable = v; },
          [](const J& j) { return j.favorable; }};
}

// With data rows: the group metrics over the subject's group columns, added to the answer's text
// and JSON.
void add_group_metrics(RunOutput& out, const JobSubject& subject, const Outcome& outcome) {
  if (!subject.data || !subject.model || subject.group_names.empty()) return;
  const GroupMetrics g = group_metrics(*subject.model, subject.schema, *subject.data,
                                       group_columns(subject.schema, subject.group_names), outcome);
  out.text += group_metrics_text(g);
  out.result["groups"] = group_metrics_json(g);
}

// The provenance block of an answer (run/provenance.h) with what it says of the data: the label
// column, the favourable class and the accuracy on the labelled rows.
void add_provenance(RunOutput& out, const JobSubject& subject, const Env& env, const std::string& command,
                    nlohmann::json options) {
  nlohmann::json p = provenance_json(subject, env, command, std::move(options));
  p["label"] = subject.data && subject.data->has_labels() ? nlohmann::json(subject.data->label_column) : nullptr;
  p["favorable"] = out.result.contains("favorable") ? out.result["favorable"] : nullptr;
  p["accuracy"] = out.result.contains("groups") && out.result["groups"].is_object()
                      ? out.result["groups"].value("accuracy", nlohmann::json())
                      : nullptr;
  out.result["provenance"] = std::move(p);
}

// What every answer about rows says once: the favourable class, and whether it was assumed.
nlohmann::json outcome_json(const Outcome& o) { return {{"class", o.name()}, {"assumed", o.assumed}}; }

// The data's columns that were read as nothing, named so that a label is never lost silently.
void add_unread_columns(RunOutput& out, const JobSubject& subject) {
  if (!subject.data || subject.data->unread.empty()) return;
  constexpr std::size_t kNamed = 20;  // in the text; the JSON lists 1,000 (a file may have a million)
  const std::vector<std::string>& unread = subject.data->unread;
  const std::vector<std::string> named(unread.begin(), unread.begin() + std::min(kNamed, unread.size()));
  out.text += fmt::format("  columns of {} not read: {}{}{}\n", subject.data_name, fmt::join(named, ", "),
                          unread.size() > kNamed ? fmt::format(" and {} more", unread.size() - kNamed) : "",
                          subject.data->has_labels() ? "" : " (name the true label with --label)");
  out.result["unread_columns"] =
      std::vector<std::string>(unread.begin(), unread.begin() + std::min<std::size_t>(1000, unread.size()));
  out.result["unread_column_count"] = unread.size();
}

// The protected attributes the model does not read: a note beside the answer, or the answer.
void add_unread_protected(RunOutput& out, const JobSubject& subject) {
  if (subject.unread_protected.empty()) return;
  out.text += fmt::format(
      "  {} does not read {}: no change of {} changes a decision; the groups below still split "
      "the data by {}\n",
      subject.model->name, fmt::join(subject.unread_protected, ", "),
      subject.unread_protected.size() == 1 ? "it" : "them", subject.unread_protected.size() == 1 ? "it" : "them");
  out.result["unread_protected"] = subject.unread_protected;
}

// A model that reads none of the protected attributes: no flip is possible, so the individual
// question is verified; the groups (an unaware model's disparate impact) are the answer's substance.
RunOutput unaware_answer(const JobSubject& subject, const Outcome& outcome, const Env& env, const std::string& command,
                         nlohmann::json options) {
  const std::string names = fmt::format("{}", fmt::join(subject.unread_protected, ", "));
  RunOutput out;
  out.text = fmt::format(
      "verified: {} does not read {} (not one of its inputs), so no change of {} changes a "
      "decision\n",
      subject.model->name, names, subject.unread_protected.size() == 1 ? "it" : "them");
  out.result = {{"verdict", "verified"},
                {"engine", "none"},
                {"model", subject.model->source},
                {"schema", subject.schema.source()},
                {"protected", nlohmann::json::array()},
                {"unread_protected", subject.unread_protected},
                {"exhaustive", true},
                {"vacuous", false},
                {"reason", fmt::format("the model does not read {}", names)},
                {"witness", nullptr},
                {"witnesses_found", 0}};
  if (subject.data) {
    out.text += "  " + outcome.sentence() + "\n";
    out.result["favorable"] = outcome_json(outcome);
  }
  add_unread_columns(out, subject);
  add_group_metrics(out, subject, outcome);
  add_provenance(out, subject, env, command, std::move(options));
  out.report =
      report_envelope("fair", command, out.text, out.result, schema_json(subject.schema), nlohmann::json::array());
  return out;
}

std::string engine_help() {
  std::string help = "the engine:";
  for (const EngineInfo& e : fairness_engines()) help += fmt::format(" {}: {};", e.name, e.summary);
  help.back() = '.';
  return help;
}

std::vector<std::string> engine_names() {
  std::vector<std::string> out;
  for (const EngineInfo& e : fairness_engines()) out.push_back(e.name);
  return out;
}

// Real people first: the data rows that flip are the first witnesses, in row order, in every mode.
// Without quantification (or a saved search), rows enough for --max-witnesses answer alone; else
// the engine runs and its witnesses follow the rows'. A flipping row that replays makes the verdict
// `witness` whatever the engine found, so the same input gives the same verdict and first witness.
FairnessResult fair_with_rows(const JobSubject& subject, const FairnessProblem& problem, const FairJob& job,
                              const EngineSettings& settings, const RowAudit* audit, Env& env) {
  auto engine_run = [&] {
    return job.near_data >= 0 ? fair_near_data(subject, problem, settings, job.near_data, env)
                              : run_fairness_engine(job.engine, problem, settings, env);
  };
  if (audit == nullptr) return engine_run();
  const int asked = std::max(1, settings.max_witnesses);
  SearchStats rows_stats;
  std::vector<WitnessPair> found = row_witnesses(*audit, problem, subject.data->raw, asked, rows_stats);
  const bool rows_answer = job.near_data < 0 && !settings.quantify && settings.checkpoint.empty() &&
                           settings.resume.empty() && settings.start == nullptr;
  FairnessResult r;
  if (rows_answer && static_cast<int>(found.size()) >= asked) {
    r.verdict = Verdict::Witness;
    r.engine = fairness_engine(job.engine).name;
    r.witnesses = std::move(found);
    r.witnesses_asked = asked;
    r.stats = rows_stats;
    r.stats.seconds = env.elapsed_seconds();
  } else {
    r = engine_run();
    if (found.empty()) return r;
    const std::size_t keep = std::max(static_cast<std::size_t>(asked), r.witnesses.size());
    for (WitnessPair& w : r.witnesses) {
      if (found.size() >= keep) break;
      if (std::none_of(found.begin(), found.end(), [&](const WitnessPair& o) { return o.raw == w.raw; }))
        found.push_back(std::move(w));
    }
    r.witnesses = std::move(found);
    // A quantification keeps why its shares stop short; any other reason was the want of a witness.
    if (r.verdict != Verdict::Witness && !settings.quantify) r.reason.clear();
    r.verdict = Verdict::Witness;
    if (static_cast<int>(r.witnesses.size()) >= asked) r.witnesses_note.clear();
    r.stats.tests += rows_stats.tests;
    r.stats.rejected += rows_stats.rejected;
  }
  r.phase = r.phase.empty() ? "data rows" : "data rows, then " + r.phase;
  record_search_stats(r.stats, env.stats);
  return r;
}

}  // namespace

const std::vector<SettingOption<FairJob>>& fair_options() {
  static const std::vector<SettingOption<FairJob>> options = [] {
    std::vector<SettingOption<FairJob>> out;
    out.push_back({{"engine", OptionSpec::Type::String, "auto", 0, 0, engine_help(), engine_names()},
                   [](FairJob& j, const std::string& v) { j.engine = fairness_engine(v).name; },
                   [](const FairJob& j) { return j.engine; }});
    for (const EngineOption& o : engine_options()) out.push_back(nested(o, &FairJob::settings));
    out.push_back(favorable_option<FairJob>());
    out.push_back({{"flips-shown",
                    OptionSpec::Type::Int,
                    "20",
                    0,
                    1e6,
                    "with data rows: flipped rows listed in the text and the report (all of them: --flips-out)",
                    {}},
                   [](FairJob& j, const std::string& v) { j.flips_shown = static_cast<int>(std::stod(v)); },
                   [](const FairJob& j) { return std::to_string(j.flips_shown); }});
    out.push_back({{"near-data",
                    OptionSpec::Type::Int,
                    "-1",
                    -1,
                    1e6,
                    "with data rows: search and count only in boxes around them (numeric features within K steps "
                    "of the row, 1% of the range for reals; categories as the row's); -1: the whole domain",
                    {}},
                   [](FairJob& j, const std::string& v) { j.near_data = static_cast<int>(std::stod(v)); },
                   [](const FairJob& j) { return std::to_string(j.near_data); }});
    return out;
  }();
  return options;
}

const std::vector<SettingOption<BiasJob>>& bias_options() {
  static const std::vector<SettingOption<BiasJob>> options = {
      {{"samples",
        OptionSpec::Type::Int,
        "100000",
        1,
        1e8,
        "inputs drawn (uniformly from the domain, or from the data rows)",
        {}},
       [](BiasJob& j, const std::string& v) { j.samples = static_cast<long long>(std::stod(v)); },
       [](const BiasJob& j) { return std::to_string(j.samples); }},
      favorable_option<BiasJob>(),
  };
  return options;
}

const std::vector<SettingOption<QueryJob>>& query_options() {
  static const std::vector<SettingOption<QueryJob>> options = {
      {{"query-time-limit",
        OptionSpec::Type::Real,
        "0",
        0,
        1e6,
        "seconds per query before the solver gives up (0: none; --time-limit bounds all of them together)",
        {}},
       [](QueryJob& j, const std::string& v) { j.options.time_limit = std::stod(v); },
       [](const QueryJob& j) { return number_text(j.options.time_limit); }},
      {{"query-memory-limit",
        OptionSpec::Type::Real,
        "4096",
        0,
        1e7,
        "megabytes the solver may use per query before it gives up (0: no limit)",
        {}},
       [](QueryJob& j, const std::string& v) { j.options.memory_limit_mb = std::stod(v); },
       [](const QueryJob& j) { return number_text(j.options.memory_limit_mb); }},
      {{"semantics",
        OptionSpec::Type::String,
        "",
        0,
        0,
        "override every query's semantics",
        {"real", "float64", "float32"}},
       [](QueryJob& j, const std::string& v) {
         if (v != "real" && v != "float64" && v != "float32")
           throw InputError(fmt::format("--semantics: '{}' (real, float64, float32)", v));
         j.semantics = v;
       },
       [](const QueryJob& j) { return j.semantics; }},
      {{"only", OptionSpec::Type::String, "", 0, 0, "answer only these queries (comma-separated names)", {}},
       [](QueryJob& j, const std::string& v) { j.only = v; },
       [](const QueryJob& j) { return j.only; }},
      {{"enumerate-cases",
        OptionSpec::Type::Int,
        "4096",
        0,
        1e7,
        "free inputs that all take few values, with at most this many combinations, are answered case by case "
        "(0: always the solver)",
        {}},
       [](QueryJob& j, const std::string& v) { j.options.enumerate_cases = static_cast<std::size_t>(std::stod(v)); },
       [](const QueryJob& j) { return std::to_string(j.options.enumerate_cases); }},
      {{"tree-boxes",
        OptionSpec::Type::Int,
        "1000000",
        0,
        1e9,
        "tree models: a query over boxes of the inputs about the label is answered by branch and bound, "
        "searching at most this many boxes before the solver takes over (0: always the solver)",
        {}},
       [](QueryJob& j, const std::string& v) { j.options.tree_boxes = static_cast<std::size_t>(std::stod(v)); },
       [](const QueryJob& j) { return std::to_string(j.options.tree_boxes); }},
  };
  return options;
}

nlohmann::json progress_json(const CompleteProgress& p) {
  return {{"certified", p.certified},
          {"falsified", p.falsified},
          {"undecided", std::max(0.0, 1.0 - p.certified - p.falsified)},
          {"leaves", p.leaves},
          {"seconds", p.seconds}};
}

nlohmann::json progress_json(const TestProgress& p) {
  return {
      {"generated", p.generated}, {"discriminatory", p.discriminatory}, {"budget", p.budget}, {"seconds", p.seconds}};
}

void settle_test_budget(TestOptions& options, const std::map<std::string, std::string>& given) {
  const auto limit = given.find("time-limit");
  if (limit != given.end() && std::stod(limit->second) > 0 && !given.contains("budget")) options.budget = 0;
}

void apply_process_limits(const Env& env) { limit_solver_memory(env.options.get_real("memory-limit")); }

RunOutput run_fair(const JobSubject& subject, const FairJob& job, Env& env, const std::string& command) {
  if (!subject.model) throw InputError("fair: no model");
  const Outcome outcome = resolve_outcome(*subject.model, subject.schema, job.favorable);
  if (subject.protected_features.empty() && !subject.unread_protected.empty())
    return unaware_answer(subject, outcome, env, command, settings_json(fair_options(), job));
  const FairnessProblem problem(*subject.model, subject.schema, subject.protected_names);
  EngineSettings settings = job.settings;
  if (subject.seeds) settings.seeds = &subject.seeds->raw;
  env.log(1, "fair: {} ({} inputs), engine {}, protected {}", subject.model->name, subject.model->input_width(),
          job.engine, fmt::format("{}", fmt::join(subject.protected_names, ",")));
  // Every data row decided with every other protected value, once: the flips by group and
  // direction, the row witnesses and the data share all come from it.
  std::optional<RowAudit> audit;
  if (subject.data) {
    audit = audit_rows(problem, subject.data->raw, outcome, subject.data_name);
    audit->row_labels = subject.data->row_labels;
  }
  FairnessResult r = fair_with_rows(subject, problem, job, settings, audit ? &*audit : nullptr, env);
  if (audit) {
    r.data = data_share(*audit);
    find_nearest_rows(subject.data->raw, r.witnesses);  // how far each witness is from a real person
  }
  const FairnessRun run{.problem = problem,
                        .result = r,
                        .quantify = settings.quantify,
                        .counters = env.stats.all(),
                        .audit = audit ? &*audit : nullptr,
                        .flips_shown = static_cast<std::size_t>(std::max(0, job.flips_shown))};
  RunOutput out{.result = fairness_json(run),
                .text = fairness_text(run),
                .report = nullptr,
                .pairs_csv = witness_csv(run),
                .regions_csv = settings.quantify ? regions_csv(run) : "",
                .flips_csv = audit ? flips_csv(*audit, subject.schema, subject.data->raw) : ""};
  if (audit) out.result["favorable"] = outcome_json(outcome);
  add_unread_protected(out, subject);
  add_unread_columns(out, subject);
  add_group_metrics(out, subject, outcome);
  // A search continued from a file believes the verdicts of the regions the file says were
  // closed (its accounts and open regions were checked; certificates will check the rest).
  if (!settings.resume.empty()) {
    add_trust_note(
        out, fmt::format("resumed from {}; the regions it had closed are trusted, not re-checked", settings.resume));
  }
  add_provenance(out, subject, env, command, settings_json(fair_options(), job));
  out.report = report_envelope("fair", command, out.text, out.result, schema_json(subject.schema),
                               witness_pairs_json(run, kReportPairs));
  return out;
}

void add_trust_note(RunOutput& out, const std::string& note) {
  out.text += "  " + note + "\n";
  out.result["trusted"] = note;
  if (out.report.is_object()) {
    out.report["text"] = out.text;
    out.report["result"]["trusted"] = note;
  }
}

RunOutput run_testing(const JobSubject& subject, LabelOracle& oracle, TestOptions options, Env& env,
                      const std::string& command, std::size_t max_csv_pairs, const std::string& pairs_file) {
  const Schema& schema = subject.schema;
  const Model* model = oracle.model();
  if (subject.protected_features.empty() && !subject.unread_protected.empty())
    throw InputError(
        fmt::format("test: the model does not read {}, so no test can find a pair that differs in it; "
                    "`witness fair --data` gives the groups' rates",
                    fmt::join(subject.unread_protected, ", ")));
  options.protected_features = subject.protected_features;
  if (subject.seeds) options.seeds = &subject.seeds->raw;
  auto label_of = [&](int label) { return model ? label_name(*model, schema, label) : label_name(schema, label); };
  std::vector<DiscriminatoryPair> pairs;
  PairTable csv(schema, options.protected_features);
  std::size_t csv_rows = 0;
  auto on_pair = options.on_pair;
  options.on_pair = [&](const DiscriminatoryPair& p) {
    if (pairs.size() < kReportPairs) pairs.push_back(p);
    if (csv_rows++ < max_csv_pairs) csv.add(p.x, p.x_prime, label_of(p.label), label_of(p.label_prime));
    if (on_pair) on_pair(p);
  };
  const TestResult r = run_test(oracle, schema, options, env);
  const TestingRun run{.schema = schema,
                       .model = model,
                       .command = model ? "" : oracle.name(),
                       .protected_names = subject.protected_names,
                       .protected_features = options.protected_features,
                       .budget = options.budget,
                       .seed = env.seed(),
                       .result = r,
                       .pairs = std::move(pairs),
                       .pairs_csv = pairs_file,
                       .pairs_written = static_cast<std::int64_t>(csv_rows)};
  RunOutput out{.result = testing_json(run),
                .text = testing_text(run),
                .report = nullptr,
                .pairs_csv = max_csv_pairs > 0 ? csv.text() : "",
                .regions_csv = "",
                .flips_csv = ""};
  add_provenance(out, subject, env, command, settings_json(test_options(), options));
  out.report = report_envelope("test", command, out.text, out.result, schema_json(schema), testing_pairs_json(run));
  return out;
}

RunOutput run_bias(const JobSubject& subject, const BiasJob& job, Env& env, const std::string& command) {
  if (!subject.model) throw InputError("bias: no model");
  check_settings(bias_options(), job);
  if (subject.protected_features.empty() && !subject.unread_protected.empty()) {
    // No sample can differ in what the model does not read: Bias% is 0 by construction.
    RunOutput out = unaware_answer(subject, resolve_outcome(*subject.model, subject.schema, job.favorable), env,
                                   command, settings_json(bias_options(), job));
    out.result["kind"] = "bias";
    out.result["bias_percent"] = 0.0;
    out.report["kind"] = "bias";
    return out;
  }
  BiasOptions o;
  o.samples = job.samples;
  o.seed = env.seed();
  o.threads = env.threads();
  if (subject.data) o.rows = &subject.data->raw;
  o.stop = [&env] { return env.expired(); };  // --time-limit, a cancel, Ctrl-C
  const BiasEstimate b = estimate_bias(*subject.model, subject.schema, subject.protected_features, o);
  const double seconds = env.elapsed_seconds();
  env.stats.set("bias.samples", static_cast<double>(b.samples));
  env.stats.set("bias.discriminatory", static_cast<double>(b.discriminatory));
  env.stats.set("bias.seconds", seconds);
  const BiasRun run{.model = *subject.model,
                    .schema = subject.schema,
                    .protected_names = subject.protected_names,
                    .estimate = b,
                    .seed = o.seed,
                    .data = subject.data ? subject.data_name : "",
                    .seconds = seconds};
  RunOutput out{.result = bias_json(run),
                .text = bias_text(run),
                .report = nullptr,
                .pairs_csv = "",
                .regions_csv = "",
                .flips_csv = ""};
  if (subject.data) {
    const Outcome outcome = resolve_outcome(*subject.model, subject.schema, job.favorable);
    out.text += "  " + outcome.sentence() + "\n";
    out.result["favorable"] = outcome_json(outcome);
    add_unread_protected(out, subject);
    add_unread_columns(out, subject);
    add_group_metrics(out, subject, outcome);
  }
  add_provenance(out, subject, env, command, settings_json(bias_options(), job));
  out.report =
      report_envelope("bias", command, out.text, out.result, schema_json(subject.schema), bias_pairs_json(run));
  return out;
}

std::vector<Query> job_queries(std::vector<Query> queries, const QueryJob& job) {
  if (!job.only.empty()) {
    const std::vector<std::string> keep = split_list(job.only);
    for (const auto& k : keep) {
      if (std::none_of(queries.begin(), queries.end(), [&](const Query& q) { return q.name == k; }))
        throw InputError(fmt::format("--only: no query named '{}'", k));
    }
    std::erase_if(queries, [&](const Query& q) { return std::find(keep.begin(), keep.end(), q.name) == keep.end(); });
  }
  if (!job.model.empty() && !job.program.empty()) throw InputError("give --model or --program, not both");
  if (!job.function.empty() && job.program.empty()) throw InputError("--function needs --program");
  for (Query& q : queries) {
    if (!job.model.empty()) {
      q.model_path = job.model;
      q.program_path.clear();
    }
    if (!job.program.empty()) {
      q.program_path = job.program;
      q.model_path.clear();
      if (!job.function.empty()) q.function = job.function;
      if (q.function.empty())
        throw InputError(fmt::format("{}: --program needs --function (the query names none)", q.where));
    }
    if (job.semantics == "real") q.semantics = Semantics::Real;
    if (job.semantics == "float64") q.semantics = Semantics::Float64;
    if (job.semantics == "float32") q.semantics = Semantics::Float32;
  }
  return queries;
}

double query_seconds(const QueryOptions& options, double run_limit, double elapsed) {
  if (run_limit <= 0) return std::max(0.0, options.time_limit);
  const double left = run_limit - elapsed;
  if (left <= 0) return -1.0;
  return options.time_limit > 0 ? std::min(options.time_limit, left) : left;
}

RunOutput run_queries(const std::vector<Query>& queries, const QueryOptions& run_options, double run_limit,
                      const std::string& given,
                      const std::function<void(const Query&, const QueryAnswer&)>& on_answer) {
  std::map<std::string, std::unique_ptr<Model>> models;
  std::map<std::pair<std::string, std::string>, std::unique_ptr<Program>> programs;
  RunOutput out{.result = nullptr, .text = "", .report = nullptr, .pairs_csv = "", .regions_csv = "", .flips_csv = ""};
  nlohmann::json all = nlohmann::json::array();
  const auto start = std::chrono::steady_clock::now();
  for (const Query& q : queries) {
    // Cancelled: the queries not yet asked are left out (each would compile or encode first).
    if (run_options.cancel != nullptr && run_options.cancel->load()) break;
    QueryOptions options = run_options;
    options.time_limit = query_seconds(run_options, run_limit,
                                       std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    QueryAnswer a;
    if (options.time_limit < 0) {  // the run's time is used up: unknown, not asked
      a.name = q.name;
      a.kind = q.kind;
      a.semantics = q.semantics;
      a.status = QueryAnswer::Status::Unknown;
      a.reason_unknown = fmt::format("time limit: the run's {} s were used up before this query was asked", run_limit);
    } else if (q.program_path.empty()) {
      auto& m = models[q.model_path];
      if (!m) {
        try {
          m = std::make_unique<Model>(load_model(q.model_path));
        } catch (const InputError& e) {
          // Name the query file too: the model path came from it (or from `given`).
          throw InputError(fmt::format("{} (model of {})", e.what(), given.empty() ? q.model_where : given));
        }
      }
      a = answer_query(*m, q, options);
    } else {
      auto& p = programs[{q.program_path, q.function}];
      if (!p)
        p = std::make_unique<Program>(Program::compile(
            q.program_path, q.function, given.empty() ? q.model_where : given,
            // The compiler runs under the query's time limit (else 120 s) and stops on cancel.
            BuildLimits{.seconds = options.time_limit > 0 ? options.time_limit : 120.0, .cancel = options.cancel}));
      a = answer_query(*p, q, options);
    }
    all.push_back(query_json(q, a));
    out.text += query_text(q, a);
    if (on_answer) on_answer(q, a);
  }
  out.result = {{"queries", all}};
  return out;
}

}  // namespace witness
