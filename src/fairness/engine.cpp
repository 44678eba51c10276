#include "fairness/engine.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "bounds/relu_network.h"
#include "core/error.h"
#include "fairness/auto_search.h"
#include "fairness/complete/complete_search.h"
#include "fairness/complete/search/search_state.h"
#include "fairness/complete/trees/tree_search.h"
#include "fairness/smt_search.h"
#include "fairness/twins.h"

namespace witness {

const std::vector<EngineOption>& engine_options() {
  using S = EngineSettings;
  static const std::vector<EngineOption> options = {
      count_setting("max-witnesses", 1, &S::max_witnesses, "all engines: keep searching until this many witnesses"),
      flag_setting("quantify", &S::quantify,
                   "complete, auto: go on after a witness and measure the certified/falsified/undecided shares of "
                   "the domain"),
      flag_setting("check", &S::check,
                   "complete, auto: re-prove every region closed by bounds with Z3 (slow; for testing)"),
      choice_setting("split", kSplitRules, &S::split,
                     "complete, auto: split rule: gap narrows the unstable neurons that loosen the bounds, score takes "
                     "the largest coefficient x width, widest the widest feature; auto is gap with --quantify, score "
                     "otherwise"),
      count_setting("max-regions", 0, &S::max_regions,
                    "complete, auto with --quantify: regions kept for the report, largest falsified share first"),
      real_setting("estimate-seconds", 0, 3600, &S::estimate_seconds,
                   "complete, auto with --quantify: seconds for estimating the undecided share from points drawn in "
                   "it and decided exactly (taken from the time limit, at most a twentieth of it; 0 = no estimate)"),
      real_setting("confidence", 0.5, 0.999999, &S::confidence,
                   "complete, auto with --quantify: confidence of the estimate's interval"),
      choice_setting("frontier", kFrontierOrders, &S::order, "dual, concolic: which branch to negate next"),
      count_setting("max-seeds", 0, &S::max_seeds, "concolic: at most this many seeds (0 = all; random seeds: 1000)"),
      choice_setting("seed-order", kSeedOrders, &S::seed_order,
                     "concolic: seed order (kmeans: round-robin over clusters)"),
      count_setting("kmeans-k", 1, &S::kmeans_k, "concolic: clusters for --seed-order kmeans"),
      real_setting("query-time-limit", 0, 1.0e9, &S::query_time_limit,
                   "dual, concolic: seconds per solver call in the first round; calls that hit it are retried after "
                   "the rest with 4x the limit (0 = no own limit)"),
  };
  return options;
}

void set_engine_option(EngineSettings& settings, const std::string& name, const std::string& value) {
  set_setting(engine_options(), settings, name, value);
}

void check_engine_settings(const EngineSettings& settings) { check_settings(engine_options(), settings); }

namespace {

CompleteSearchOptions complete_options(const EngineSettings& s) {
  return {.max_witnesses = s.max_witnesses,
          .quantify = s.quantify,
          .check = s.check,
          .split = s.split,
          .max_regions = s.max_regions,
          .estimate_seconds = s.estimate_seconds,
          .confidence = s.confidence,
          .progress = s.progress,
          .checkpoint = s.checkpoint,
          .checkpoint_seconds = s.checkpoint_seconds,
          .resume = s.resume,
          .start = s.start,
          .answer_only = s.answer_only};
}

ConcolicSearchOptions concolic_options(const EngineSettings& s) {
  return {s.order, s.seeds, s.max_seeds, s.seed_order, s.kmeans_k, s.max_witnesses, s.query_time_limit};
}

// Every engine answers --max-witnesses N the same way: N distinct points x, or all there are, or
// fewer with the reason. What an engine found short of N is topped up by the exact solver, each
// query excluding the points known, until N or until it proves there are no more.
void settle_witnesses(FairnessResult& r, const FairnessProblem& problem, const EngineSettings& settings, Env& env) {
  const int asked = std::max(1, settings.max_witnesses);
  r.witnesses_asked = asked;
  std::vector<WitnessPair> distinct;
  for (WitnessPair& w : r.witnesses) {
    if (static_cast<int>(distinct.size()) == asked) break;
    if (std::none_of(distinct.begin(), distinct.end(), [&](const WitnessPair& o) { return o.raw == w.raw; }))
      distinct.push_back(std::move(w));
  }
  r.witnesses = std::move(distinct);
  if (r.verdict != Verdict::Witness || static_cast<int>(r.witnesses.size()) >= asked) {
    r.witnesses_note.clear();
    return;
  }
  if (!r.witnesses_note.empty()) return;  // the engine said why (smt)
  if (env.cancelled()) {
    r.witnesses_note = "the run was cancelled";
    return;
  }
  if (env.expired()) {
    r.witnesses_note = fmt::format("the {}", env.stop_reason());
    return;
  }
  // The solver gets the time left, and at most a minute when the run has no limit.
  Env more_env;
  more_env.options = env.options;
  const double limit = env.options.get_real("time-limit");
  more_env.options.set("time-limit",
                       fmt::format("{}", limit > 0 ? std::max(1e-3, limit - env.elapsed_seconds()) : 60.0));
  more_env.set_cancel(env.cancel_flag());
  more_env.start();
  try {
    FairnessResult more = smt_search(problem, more_env, asked - static_cast<int>(r.witnesses.size()), r.witnesses);
    for (WitnessPair& w : more.witnesses) r.witnesses.push_back(std::move(w));
    r.stats.tests += more.stats.tests;
    r.stats.rejected += more.stats.rejected;
    if (static_cast<int>(r.witnesses.size()) < asked)
      r.witnesses_note =
          more.witnesses_note.empty() ? std::string("the solver found no more in its time") : more.witnesses_note;
  } catch (const UnsupportedError& e) {
    r.witnesses_note = fmt::format("no exact search reads this model for more ({})", e.what());
  }
}

bool reads_by_z3(const Model& /*model*/) { return true; }
bool reads_by_bounds(const Model& /*model*/) { return false; }
// auto: the complete engine on ReLU networks and trees, else falsification then the dual engine.
bool auto_uses_z3(const Model& model) { return !relu_network_of(model, nullptr) && !is_tree_model(model); }

}  // namespace

const std::vector<EngineInfo>& fairness_engines() {
  static const std::vector<EngineInfo> engines = {
      {"auto", "falsification beside the complete engine (ReLU networks), else falsification then dual", true, true,
       auto_uses_z3,
       [](const FairnessProblem& p, const EngineSettings& s, Env& env) {
         return auto_search(p, complete_options(s), env);
       }},
      {"complete", "branch and bound with sound bounds; proves, finds witnesses, quantifies", true, true,
       reads_by_bounds,
       [](const FairnessProblem& p, const EngineSettings& s, Env& env) {
         return complete_search(p, complete_options(s), env);
       }},
      {"smt", "the whole question as one exact Z3 query", false, false, reads_by_z3,
       [](const FairnessProblem& p, const EngineSettings& s, Env& env) { return smt_search(p, env, s.max_witnesses); }},
      {"dual", "PyFair: concolic exploration of the dual model", false, false, reads_by_z3,
       [](const FairnessProblem& p, const EngineSettings& s, Env& env) {
         return dual_search(p, concolic_options(s), env);
       }},
      {"concolic", "PyCT: concolic search around seed rows", false, false, reads_by_z3,
       [](const FairnessProblem& p, const EngineSettings& s, Env& env) {
         return concolic_search(p, concolic_options(s), env);
       }},
  };
  return engines;
}

const EngineInfo& fairness_engine(const std::string& name) {
  const auto& all = fairness_engines();
  const auto it = std::find_if(all.begin(), all.end(), [&name](const EngineInfo& e) { return e.name == name; });
  if (it != all.end()) return *it;
  std::vector<std::string> names;
  names.reserve(all.size());
  for (const EngineInfo& e : all) names.push_back(e.name);
  throw InputError(fmt::format("--engine: unknown engine '{}' (known: {})", name, fmt::join(names, ", ")));
}

bool engine_uses_z3(const std::string& name, const Model& model) { return fairness_engine(name).uses_z3(model); }

std::vector<SearchState> split_fairness_search(const std::string& engine, const FairnessProblem& problem,
                                               const EngineSettings& settings, int parts, Env& env) {
  check_engine_settings(settings);
  const EngineInfo& info = fairness_engine(engine);
  if (!info.searches_regions)
    throw InputError(fmt::format("--split-into cuts the complete engine's search, not the {} engine's", info.name));
  return split_complete_search(problem, complete_options(settings), parts, env);
}

FairnessResult run_fairness_engine(const std::string& name, const FairnessProblem& problem,
                                   const EngineSettings& settings, Env& env) {
  check_engine_settings(settings);
  const EngineInfo& info = fairness_engine(name);
  const std::string& engine = info.name;
  if ((!settings.checkpoint.empty() || !settings.resume.empty() || settings.start) && !info.searches_regions)
    throw InputError(
        fmt::format("--checkpoint and --resume save and continue the complete engine's search, not the "
                    "{} engine's (use --engine complete or auto)",
                    engine));
  if (!(settings.checkpoint_seconds > 0.0)) throw InputError("--checkpoint-every: expected a number of seconds > 0");
  FairnessResult r;
  // No engine is asked a question that has no pair to compare: its "verified" would be vacuous.
  if (const Twins twins = problem.twins(); twins == Twins::NoPerson || twins == Twins::NoTwins) {
    r.verdict = Verdict::Verified;
    r.engine = engine;
    r.exhaustive = true;
    r.vacuous = true;
    r.reason = problem.vacuity_reason(twins);
    r.stats.seconds = env.elapsed_seconds();
    record_search_stats(r.stats, env.stats);
    return r;
  }
  r = info.run(problem, settings, env);
  settle_witnesses(r, problem, settings, env);
  record_search_stats(r.stats, env.stats);
  return r;
}

void record_search_stats(const SearchStats& s, Stats& stats) {
  for (const SearchStatsField& f : kSearchStatsFields)
    stats.set(std::string("search.") + f.name, static_cast<double>(s.*f.field));
  stats.set("search.seconds", s.seconds);
}

}  // namespace witness
