// A quick hunt for witnesses before any proof: random pairs, then a local search on the logit gap
// (the auto engine's first phase). Works on any model the evaluator runs.
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/adult.toml");
//   witness::Env env;
//   witness::FalsifyOptions o;
//   o.tests = 100000;
//   witness::SearchStats stats;
//   std::vector<witness::WitnessPair> found = witness::falsify(witness::FairnessProblem(model, schema, {"sex"}), o,
//   env, stats);
//   // every pair in `found` was replayed; an empty result proves nothing; the same call finds the
//   // same pairs (unless the run's time limit or `cancel` cut it short)
#pragma once

#include <Eigen/Dense>
#include <atomic>
#include <vector>

#include "core/env.h"
#include "domain/schema.h"
#include "fairness/problem.h"
#include "fairness/verdict.h"
#include "model/model.h"

namespace witness {

struct FalsifyOptions {
  // Budget in tests (model evaluations), not seconds, so that what is found depends on the model,
  // the budget and the seed only; 0: falsify_tests_for(model). The run's deadline still stops it.
  long long tests = 0;
  int max_witnesses = 1;                      // stop after this many
  const std::atomic<bool>* cancel = nullptr;  // stop early when it becomes true
};

// The default budget: about 2^29 of the model's arithmetic operations (about a second on one
// core), at least 2^12 and at most 2^22 tests.
long long falsify_tests_for(const Model& model);

// Random points with every protected combination; then, for threshold rules, hill climbing over
// the non-protected features that minimises max(t - max_c z_c, min_c z_c - t) (negative: some
// protected change crosses the threshold), and bisection along random lines through the domain for
// the integer points next to the decision boundary, where the witnesses of near-fair models lie.
// Adds its evaluations to stats.tests.
std::vector<WitnessPair> falsify(const FairnessProblem& problem, const FalsifyOptions& options, Env& env,
                                 SearchStats& stats);

}  // namespace witness
