// The complete verifier: branch and bound over (a box of the non-protected features, the pairs of
// protected values still open), closed by sound bounds on each copy and on the difference between
// the copies, decided exactly at single points, with candidates replayed on the original model.
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/german/GC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/german.toml");
//   const witness::FairnessProblem problem(model, schema, {"age"});
//   witness::Env env;  env.options.set("time-limit", "10");  env.start();
//   witness::FairnessResult r = witness::complete_search(problem, witness::CompleteSearchOptions{}, env);
//   // r.verdict: Verified (every region closed soundly), Witness (replayed), or Inconclusive;
//   // r.share: the certified / falsified / undecided shares of the domain.
#pragma once

#include <vector>

#include "core/env.h"
#include "domain/schema.h"
#include "fairness/complete/options.h"
#include "fairness/problem.h"
#include "fairness/verdict.h"
#include "model/model.h"

namespace witness {

// Throws UnsupportedError when the model is not a Dense/ReLU network under a threshold rule.
// With quantify, the result's share, regions and (for integer domains that finished) exact point
// counts say how many individuals a protected change treats differently, and which.
FairnessResult complete_search(const FairnessProblem& problem, const CompleteSearchOptions& options, Env& env);

// The question cut into `parts` sub-problems (saved states, search_state.h), each to be continued
// on its own and their results joined: the domain is refined until a few regions per part are
// open, and these are dealt out largest first; part 0 also holds what was closed on the way.
std::vector<SearchState> split_complete_search(const FairnessProblem& problem, const CompleteSearchOptions& options,
                                               int parts, Env& env);

}  // namespace witness
