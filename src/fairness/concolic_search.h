// PyFair's two concolic engines (seeds/000, Algorithms 1 and 2):
//   concolic_search: PyCT's single-instance search. For each seed row, the protected inputs are
//     symbolic and the rest fixed; paths are explored until the label changes (a witness), the
//     seed's path tree is exhausted (that seed is not discriminatory) or the time limit.
//   dual_search: PyFair. All of (p, n, p') of the dual model are symbolic, with p != p'; every path
//     ends with both copies' decision predicates. An exhausted tree proves that no witness exists
//     in the encoded domain (Corollary 4.2): verdict `verified`, exhaustive = true.
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/adult.toml");
//   witness::Dataset data = witness::load_csv("benchmarks/fairify/data/adult.csv", schema);
//   const witness::FairnessProblem problem(model, schema, {"sex"});
//   witness::ConcolicSearchOptions o;
//   o.seeds = &data.raw;                                  // raw rows, [features][n]
//   witness::Env env;  env.options.set("time-limit", "60");  env.start();
//   witness::FairnessResult r = witness::dual_search(problem, o, env);
//   if (r.verdict == witness::Verdict::Witness) { /* r.witnesses[0] was replayed */ }
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "core/choice.h"
#include "core/env.h"
#include "domain/schema.h"
#include "fairness/problem.h"
#include "fairness/verdict.h"
#include "model/model.h"
#include "symbolic/path_tree.h"

namespace witness {

enum class SeedOrder : std::uint8_t { InOrder, KMeans };
inline constexpr Choices<SeedOrder, 2> kSeedOrders{{{{SeedOrder::InOrder, "in-order"}, {SeedOrder::KMeans, "kmeans"}}},
                                                   "seed order"};
SeedOrder parse_seed_order(const std::string& name);  // kSeedOrders, InputError naming --seed-order

struct ConcolicSearchOptions {
  FrontierOrder order = FrontierOrder::DecisionFirst;
  // Raw rows ([features][n]) to start from. concolic_search: the seeds, taken in `seed_order`;
  // dual_search: the first row is the start point. nullptr: random in-domain points (env's seed).
  const Eigen::MatrixXd* seeds = nullptr;
  long long max_seeds = 0;  // 0: every row (concolic_search; random seeds: 1000)
  SeedOrder seed_order = SeedOrder::InOrder;
  int kmeans_k = 4;
  int max_witnesses = 1;  // stop after this many replayed witnesses (one per seed at most)
  // Per solver call, seconds (0: only the global deadline). Calls that hit it are retried after
  // the rest of the frontier with four times the limit, and so on.
  double query_time_limit = 0.0;
};

FairnessResult concolic_search(const FairnessProblem& problem, const ConcolicSearchOptions& options, Env& env);
FairnessResult dual_search(const FairnessProblem& problem, const ConcolicSearchOptions& options, Env& env);

}  // namespace witness
