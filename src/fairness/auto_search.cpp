#include "fairness/auto_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "bounds/relu_network.h"
#include "core/error.h"
#include "fairness/complete/complete_search.h"
#include "fairness/complete/trees/tree_search.h"
#include "fairness/concolic_search.h"
#include "fairness/falsify.h"

namespace witness {
namespace {

// Adds falsification's witnesses to the complete engine's, up to `max` in all, without repeating a
// pair already there.
void pool_witnesses(std::vector<WitnessPair>& into, std::vector<WitnessPair> more, int max) {
  for (WitnessPair& w : more) {
    if (static_cast<int>(into.size()) >= std::max(1, max)) return;
    const bool known = std::any_of(into.begin(), into.end(), [&](const WitnessPair& v) { return same_people(v, w); });
    if (!known) into.push_back(std::move(w));
  }
}

}  // namespace

FairnessResult auto_search(const FairnessProblem& problem, const CompleteSearchOptions& options, Env& env) {
  const Model& model = problem.model();
  const Schema& schema = problem.schema();
  SearchStats stats;
  FalsifyOptions f;
  f.tests = options.falsify_tests;
  f.max_witnesses = options.max_witnesses;
  auto found_by_falsification = [&](std::vector<WitnessPair> found) {
    FairnessResult r;
    r.engine = "auto";
    r.phase = "falsification";
    r.verdict = Verdict::Witness;
    r.witnesses = std::move(found);
    r.stats = stats;
    r.stats.seconds = env.elapsed_seconds();
    return r;
  };
  (void)problem.combinations();  // input errors here, not in a thread
  std::string why;
  if (!relu_network_of(model, &why) && !tree_engine_reads(model, schema, &why)) {
    if (!options.checkpoint.empty() || !options.resume.empty() || options.start)
      throw InputError(
          fmt::format("--checkpoint and --resume need the complete engine, which does not read this model: {}", why));
    if (!options.quantify) {
      std::vector<WitnessPair> found = falsify(problem, f, env, stats);
      if (!found.empty()) return found_by_falsification(std::move(found));
    }
    ConcolicSearchOptions d;
    d.max_witnesses = options.max_witnesses;
    d.query_time_limit = 1.0;
    FairnessResult r;
    try {
      r = dual_search(problem, d, env);
    } catch (const UnsupportedError& e) {
      // No exact engine reads this model (tree ensembles, lookups): what falsification found is the answer.
      r.verdict = Verdict::Inconclusive;
      r.reason = fmt::format(
          "falsification found no witness in {} tests, and no exact engine reads this model ({}); "
          "witness test searches longer",
          stats.tests, e.what());
      r.stats = stats;
      r.stats.seconds = env.elapsed_seconds();
      r.engine = "auto";
      r.phase = "falsification";
      return r;
    }
    r.engine = "auto(dual)";
    r.phase = "dual";
    return r;
  }
  // Falsification runs beside the branch and bound from the start (a fair model is often closed at
  // the root in milliseconds, which a falsification phase first would delay). It stops early only
  // when the model is verified (it can find nothing) or on an error; a witness of the complete
  // engine waits for the rest of falsification's budget, whose outcome decides what is shown.
  std::atomic<bool> stop_falsify{false}, falsify_found{false};
  f.cancel = &stop_falsify;
  SearchStats side_stats;
  std::vector<WitnessPair> side_found;
  std::exception_ptr side_error;
  std::thread side;
  const int quota = std::max(1, options.max_witnesses);
  if (!options.quantify) {
    side = std::thread([&] {
      try {
        side_found = falsify(problem, f, env, side_stats);
        // Fewer witnesses than asked: the branch and bound goes on (it may find the rest at once).
        if (static_cast<int>(side_found.size()) >= quota) falsify_found = true;
      } catch (...) {
        side_error = std::current_exception();
      }
    });
  }
  CompleteSearchOptions co = options;
  co.cancel = &falsify_found;
  FairnessResult r;
  try {
    r = complete_search(problem, co, env);
  } catch (...) {
    stop_falsify = true;
    if (side.joinable()) side.join();
    throw;
  }
  if (r.verdict == Verdict::Verified) stop_falsify = true;
  if (side.joinable()) side.join();
  if (side_error) std::rethrow_exception(side_error);
  stats.tests += side_stats.tests;
  stats.rejected += side_stats.rejected;
  const bool falsification_answers =
      static_cast<int>(side_found.size()) >= quota || (r.verdict != Verdict::Witness && !side_found.empty());
  if (falsification_answers) {
    FairnessResult w = found_by_falsification(std::move(side_found));
    w.stats.regions = r.stats.regions;
    w.stats.leaves = r.stats.leaves;
    return w;  // the complete engine's shares were cut short: not reported
  }
  if (r.verdict == Verdict::Witness) pool_witnesses(r.witnesses, std::move(side_found), options.max_witnesses);
  r.engine = "auto";
  r.phase = "complete";
  r.stats.tests += stats.tests;
  r.stats.rejected += stats.rejected;
  return r;
}

}  // namespace witness
