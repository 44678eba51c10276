// One interface to every fairness engine, looked up by name, so the CLI (and later the Python
// module and the web server) ask the same question the same way.
//
//   const witness::Model model = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   const witness::Schema schema = witness::load_schema("benchmarks/fairify/adult.toml");
//   const witness::FairnessProblem problem(model, schema, {"sex"});
//   witness::EngineSettings settings;
//   witness::set_engine_option(settings, "quantify", "true");   // or settings.quantify = true
//   witness::Env env;
//   env.start();
//   const witness::FairnessResult r = witness::run_fairness_engine("auto", problem, settings, env);
#pragma once

#include <Eigen/Dense>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/options.h"
#include "domain/schema.h"
#include "fairness/complete/options.h"
#include "fairness/concolic_search.h"
#include "fairness/problem.h"
#include "fairness/verdict.h"
#include "model/model.h"
#include "symbolic/path_tree.h"

namespace witness {

// Everything an engine may be told; each engine reads the settings it understands (the `engines`
// column says which) and ignores the rest.
struct EngineSettings {
  int max_witnesses = 1;                                  // all: stop after this many replayed witnesses
  bool quantify = false;                                  // complete, auto: measure the whole domain
  bool check = false;                                     // complete, auto: re-prove every bound closure with Z3
  SplitRule split = SplitRule::Auto;                      // complete, auto
  int max_regions = 1000;                                 // complete, auto (quantify): regions reported
  double estimate_seconds = 1.0;                          // complete, auto (quantify): sampling time
  double confidence = 0.95;                               // complete, auto (quantify): of the estimate
  FrontierOrder order = FrontierOrder::DecisionFirst;     // dual, concolic
  const Eigen::MatrixXd* seeds = nullptr;                 // dual, concolic: raw rows [features][n]
  long long max_seeds = 0;                                // concolic
  SeedOrder seed_order = SeedOrder::InOrder;              // concolic
  int kmeans_k = 4;                                       // concolic
  double query_time_limit = 1.0;                          // dual, concolic: seconds per solver call
  std::function<void(const CompleteProgress&)> progress;  // complete, auto: shares as they grow
  // complete, auto: save the search to / continue it from these files (CompleteSearchOptions).
  // File paths: set by the CLI only, never by name (witness serve sets options by name).
  std::string checkpoint;
  double checkpoint_seconds = kCheckpointSeconds;
  std::string resume;
  std::shared_ptr<const SearchState> start;  // complete, auto: CompleteSearchOptions::start, answer_only
  bool answer_only = false;
};

// The engine settings as options, declared once (name, type, default, range or allowed values,
// help saying which engines read them). The CLI generates its flags from this table; the Python
// module and the web server set options by the same names.
using EngineOption = SettingOption<EngineSettings>;
const std::vector<EngineOption>& engine_options();
// Checks and stores one option: InputError ("--split: unknown rule 'x' (known: ...)",
// "--max-witnesses: 0 is outside [1, ...]") for a bad value or an unknown name.
void set_engine_option(EngineSettings& settings, const std::string& name, const std::string& value);
// InputError for the first setting outside its declared range (settings filled in by code).
void check_engine_settings(const EngineSettings& settings);

// One row of the engine table: what the engine is called and can do, and how it is run.
struct EngineInfo {
  std::string name;
  std::string summary;
  bool measures_domain = false;   // reports certified/falsified/undecided shares
  bool searches_regions = false;  // the complete engine's region search: checkpoints, resume, split
  // Whether it calls Z3 on this model (Z3 can overrun a time limit; see cli/fair.cpp).
  bool (*uses_z3)(const Model& model) = nullptr;
  FairnessResult (*run)(const FairnessProblem& problem, const EngineSettings& settings, Env& env) = nullptr;
};

// Every engine, in the order they are documented: auto, complete, smt, dual, concolic.
const std::vector<EngineInfo>& fairness_engines();
// InputError "unknown engine 'x' (known: auto, complete, smt, dual, concolic)".
const EngineInfo& fairness_engine(const std::string& name);
// Whether the engine calls Z3 on this model (Z3 can overrun a time limit; see cli/fair.cpp).
bool engine_uses_z3(const std::string& name, const Model& model);

// The complete engine's search cut into `parts` sub-problems (split_complete_search); InputError
// for an engine other than complete or auto.
std::vector<SearchState> split_fairness_search(const std::string& engine, const FairnessProblem& problem,
                                               const EngineSettings& settings, int parts, Env& env);

// Runs the engine and records its SearchStats in env.stats as `search.*` counters.
FairnessResult run_fairness_engine(const std::string& name, const FairnessProblem& problem,
                                   const EngineSettings& settings, Env& env);
// The result's counters under the names --stats prints (`search.tests`, `search.sat`, ...).
void record_search_stats(const SearchStats& s, Stats& stats);

}  // namespace witness
