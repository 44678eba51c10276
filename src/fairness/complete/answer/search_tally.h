// What a branch-and-bound search knows when it stops, and the answer made of it: verdict, shares
// of the domain (sound at every moment), and for --quantify the regions and marginals.
//
//   #include "fairness/complete/network/network_regions.h"
//   witness::Model model = witness::load_model("benchmarks/fairify/models/german/GC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/german.toml");
//   const witness::FairnessProblem problem(model, schema, {"age"});
//   witness::CompleteSearchOptions o;  witness::SearchSignals signals(o.max_witnesses);
//   witness::NetworkRegions regions(problem, o, *witness::relu_network_of(model, nullptr), signals);
//   witness::SearchTally tally;  // filled by a scheduler as regions close
//   std::optional<witness::QuantifyAnswer> answer;  // none: no --quantify
//   witness::Env env;
//   witness::FairnessResult r = witness::search_result(std::move(tally), regions, schema, answer, o, env);
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/env.h"
#include "fairness/complete/answer/quantify_answer.h"
#include "fairness/complete/answer/share_estimate.h"
#include "fairness/complete/options.h"
#include "fairness/complete/region.h"
#include "fairness/verdict.h"

namespace witness {

struct SearchTally {
  long double certified = 0.0L, falsified = 0.0L;    // measures of closed regions
  long double open_fair = 0.0L, open_unfair = 0.0L;  // counted in regions still open (or evicted)
  long double invalid = 0.0L;                        // points found to be no person for any protected value
  long double scope = 0.0L;  // the measure this search covers: a sub-problem's part (0: the whole domain)
  bool inexact = false;      // some region closed without counting its valid points
  bool interrupted = false;  // stopped by the time limit or the cancel flag
  std::int64_t leaves = 0, evicted = 0, slivers = 0;
  // The evicted regions' measure, and what counting found in them (also in open_fair/open_unfair):
  // what a saved state's conservation check needs of the regions it no longer holds.
  long double evicted_measure = 0.0L, evicted_fair = 0.0L, evicted_unfair = 0.0L;
  SearchCounters counters;
  std::vector<WitnessPair> witnesses;
  std::vector<SearchRegion> left;  // open at the end
  EvictedSample evicted_sample;    // points drawn from the regions evicted (quantify)

  // The measure of the points that can be people, as far as known: all but those found not to be.
  [[nodiscard]] long double valid(long double domain_points) const {
    return (scope > 0.0L ? scope : domain_points) - invalid;
  }
};

// The answer of a search that stopped with `tally` (its open regions go into the report, and
// points drawn in them into the estimate of the undecided share).
FairnessResult search_result(SearchTally tally, const RegionEvaluator& regions, const Schema& schema,
                             std::optional<QuantifyAnswer>& answer, const CompleteSearchOptions& o, Env& env);

}  // namespace witness
