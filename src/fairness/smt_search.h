// The monolithic SMT baseline: the whole fairness question as one exact Z3 query over the dual
// model, (p, n) and p' symbolic over the schema's domain, p != p', labels differ. Unsat proves the
// model fair on the domain; Sat gives a witness (replayed before it is reported).
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/german/GC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/german.toml");
//   std::vector<int> prot = {schema.feature_index("age")};
//   witness::Env env;  env.options.set("time-limit", "60");  env.start();
//   witness::FairnessResult r = witness::smt_search(witness::FairnessProblem(model, schema, {"age"}), env);
//   // r.verdict: Verified (exhaustive), Witness (r.witnesses[0]) or Inconclusive (r.reason)
//   Eigen::VectorXd lo = Eigen::VectorXd::Constant(schema.size(), -INFINITY), hi = -lo;   // no bounds
//   lo[schema.feature_index("month")] = 0;  hi[schema.feature_index("month")] = 12;      // but month 0..12
//   Eigen::VectorXd p(1), p_prime(1);  p << 0;  p_prime << 1;                            // age <26 vs >=26
//   witness::CheckResult leaf = witness::check_region(model, schema, prot, lo, hi, p, p_prime, 10.0);  // Unsat: fair
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "core/env.h"
#include "domain/schema.h"
#include "fairness/problem.h"
#include "fairness/verdict.h"
#include "model/model.h"
#include "solver/solver.h"

namespace witness {

// Engine "smt". Checks with the time left before env's --time-limit (0: none): one, then one more
// per further witness (each excluding the points found so far, and those in `known`), until
// `max_witnesses` or Unsat (then every unfair point has been found). Models that are not piecewise
// linear up to the decision rule's node, or with a Direct rule: UnsupportedError.
FairnessResult smt_search(const FairnessProblem& problem, Env& env, int max_witnesses = 1,
                          const std::vector<WitnessPair>& known = {});

// Re-proves one region independently of any bound propagation: Unsat iff no point n of the box
// [raw_lo, raw_hi] (raw values, inclusive, one entry per schema feature; protected entries are
// ignored) intersected with the schema's domain gets different labels from (n, p) and (n, p'), in
// exact arithmetic. p_raw and p_prime_raw hold raw values of the protected features, in the order
// of protected_features; a value outside the domain makes the region empty (Unsat). Infinite box
// bounds are no bounds. seconds <= 0: no time limit.
CheckResult check_region(const Model& model, const Schema& schema, const std::vector<int>& protected_features,
                         const Eigen::VectorXd& raw_lo, const Eigen::VectorXd& raw_hi, const Eigen::VectorXd& p_raw,
                         const Eigen::VectorXd& p_prime_raw, double seconds);

}  // namespace witness
