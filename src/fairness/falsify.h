// A quick hunt for witnesses before any proof: random pairs, then a local search on the logit gap
// (the auto engine's first phase). Works on any model the evaluator runs.
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/adult.toml");
//   witness::Env env;
//   witness::FalsifyOptions o;
//   o.protected_features = {schema.feature_index("sex")};
//   o.tests = 100000;
//   witness::SearchStats stats;
//   std::vector<witness::WitnessPair> found = witness::falsify(model, schema, o, env, stats);
//   // every pair in `found` was replayed; an empty result proves nothing; the same call finds the
//   // same pairs (unless the run's time limit or `cancel` cut it short)
#pragma once

#include <Eigen/Dense>
#include <atomic>
#include <vector>

#include "core/env.h"
#include "domain/schema.h"
#include "fairness/verdict.h"
#include "model/model.h"

namespace witness {

// Every in-domain combination of raw values of the protected features (in their order), e.g.
// {0}, {1} for one boolean. InputError when a protected feature is real, when there are more than
// 65536 combinations, or fewer than two.
std::vector<Eigen::VectorXd> protected_combinations(const Schema& schema, const std::vector<int>& protected_features);

// Raw columns ([features][n]) with the protected features set to one combination (in the order of
// protected_features).
Eigen::MatrixXd with_protected(Eigen::MatrixXd raw, const std::vector<int>& protected_features,
                               const Eigen::VectorXd& combo);

struct FalsifyOptions {
  std::vector<int> protected_features;
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
std::vector<WitnessPair> falsify(const Model& model, const Schema& schema, const FalsifyOptions& options, Env& env,
                                 SearchStats& stats);

}  // namespace witness
