#include "fairness/concolic_search.h"

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/env.h"
#include "core/error.h"
#include "domain/schema.h"
#include "fairness/transform.h"
#include "model/evaluator.h"
#include "model/loaders.h"
#include "support/paths.h"
#include "support/sanitized.h"
#include "support/tiny_networks.h"

namespace witness::test {
namespace {

// Relations that hold for every search of these exact networks (no rounding, no time-outs).
void expect_exact_stats(const FairnessResult& r) {
  const SearchStats& st = r.stats;
  EXPECT_EQ(st.unknown, 0);
  EXPECT_EQ(st.rejected, 0);
  EXPECT_EQ(st.divergences, 0);
  EXPECT_FALSE(st.concretised);
  // Each exploration runs its start point once and then once per Sat answer.
  EXPECT_EQ(st.tests, st.seeds + st.sat);
  // Without divergences every run takes a path no earlier run of its tree took.
  EXPECT_LE(st.paths, st.tests);
  EXPECT_EQ(st.paths, st.tests);
  // Items handed out are solved (sat, unsat) or still queued when the search stopped.
  EXPECT_GE(st.queued, st.sat + st.unsat + st.unknown);
  // The LP shortcut answers some checks; it is counted inside sat and unsat.
  EXPECT_LE(st.guessed, st.sat);
  EXPECT_LE(st.refuted, st.unsat);
  EXPECT_GE(st.guessed, 0);
  EXPECT_GE(st.refuted, 0);
  EXPECT_GE(st.seconds, 0.0);
}

const FrontierOrder kOrders[] = {FrontierOrder::Bfs, FrontierOrder::Dfs, FrontierOrder::DecisionFirst};
const char* order_name(FrontierOrder o) {
  switch (o) {
    case FrontierOrder::Bfs: return "bfs";
    case FrontierOrder::Dfs: return "dfs";
    case FrontierOrder::DecisionFirst: return "decision-first";
  }
  return "?";
}

// dual_search, every frontier order: Witness iff brute force finds a pair, else Verified and exhaustive.
void check_dual(const Tiny& t, const Eigen::MatrixXd* seeds, const std::vector<FrontierOrder>& orders) {
  const Truth truth = brute_force(t);
  for (FrontierOrder order : orders) {
    SCOPED_TRACE(t.name + " dual " + order_name(order));
    ConcolicSearchOptions o;
    o.order = order;
    o.seeds = seeds;
    Env env = make_env();
    const FairnessResult r = dual_search(test::problem_of(t), o, env);
    EXPECT_EQ(r.engine, "dual");
    expect_exact_stats(r);
    EXPECT_EQ(r.stats.seeds, 1);
    EXPECT_GT(r.stats.frontier, 0);  // every input is symbolic in the dual
    ASSERT_NO_FATAL_FAILURE(expect_first_answer(t, truth, r));
    if (truth.pairs == 0) {
      EXPECT_EQ(r.stats.queued, r.stats.sat + r.stats.unsat);  // the queue was emptied
      if (protected_weight_nonzero(t)) {
        EXPECT_GT(r.stats.unsat, 0);
      }
    }
  }
}

// concolic_search from every domain point: Witness iff brute force finds a pair; never Verified.
void check_concolic(const Tiny& t, const std::vector<FrontierOrder>& orders) {
  const Truth truth = brute_force(t);
  const Eigen::MatrixXd seeds = domain_points(t.schema);
  for (FrontierOrder order : orders) {
    SCOPED_TRACE(t.name + " concolic " + order_name(order));
    ConcolicSearchOptions o;
    o.order = order;
    o.seeds = &seeds;
    Env env = make_env();
    const FairnessResult r = concolic_search(test::problem_of(t), o, env);
    EXPECT_EQ(r.engine, "concolic");
    EXPECT_NE(r.verdict, Verdict::Verified);
    EXPECT_FALSE(r.exhaustive);
    expect_exact_stats(r);
    // The first seed's frontier: one item per branch that reads a protected input.
    EXPECT_EQ(r.stats.frontier > 0, protected_weight_nonzero(t));
    if (!protected_weight_nonzero(t)) {
      EXPECT_EQ(r.stats.sat + r.stats.unsat, 0);
      EXPECT_EQ(r.stats.tests, r.stats.seeds);
    }
    if (truth.pairs > 0) {
      ASSERT_EQ(r.verdict, Verdict::Witness) << r.reason;
      ASSERT_EQ(r.witnesses.size(), 1U);
      expect_real_witness(t, truth, r.witnesses[0]);
      // In order: the witness starts from the first discriminated seed, and the search stops there.
      const std::vector<double> first = row(r.witnesses[0].raw);
      EXPECT_EQ(r.stats.seeds - 1, r.stats.seeds_exhausted);
      Eigen::Index pos = 0;
      while (pos < seeds.cols() && row(seeds.col(pos)) != first) ++pos;
      EXPECT_EQ(pos + 1, r.stats.seeds);
      for (Eigen::Index j = 0; j < pos; ++j) EXPECT_FALSE(truth.discriminated.contains(row(seeds.col(j))));
      EXPECT_TRUE(truth.discriminated.contains(first));
    } else {
      ASSERT_EQ(r.verdict, Verdict::Inconclusive);
      EXPECT_TRUE(r.witnesses.empty());
      EXPECT_EQ(r.stats.seeds, seeds.cols());
      EXPECT_EQ(r.stats.seeds_exhausted, r.stats.seeds);
      EXPECT_FALSE(r.reason.empty());
    }
  }
}

constexpr int kRandomDualNets = 30;
const std::vector<FrontierOrder> kAllOrders(std::begin(kOrders), std::end(kOrders));

// Dual search on random networks [from, to). Fast: one frontier order per network (rotating), from
// a random start point, and every other network also from an explicit start row (the last domain
// point) in the next order; under the sanitizers every third network. Slow: every order from both
// start points.
void dual_on_random(int from, int to, bool all) {
  for (int i = from; i < to; i += all ? 1 : sized(1, 3)) {
    const Tiny t = random_tiny(i);
    const Eigen::MatrixXd last = domain_points(t.schema).rightCols(1);
    if (all) {
      check_dual(t, nullptr, kAllOrders);
      check_dual(t, &last, kAllOrders);
    } else {
      check_dual(t, nullptr, {kOrders[i % 3]});
      if (i % 2 == 0) check_dual(t, &last, {kOrders[(i + 1) % 3]});
    }
  }
}

TEST(ConcolicSearch, DualSearchAgreesWithBruteForceOnRandomNetworks0To14) { dual_on_random(0, 15, false); }
TEST(ConcolicSearch, DualSearchAgreesWithBruteForceOnRandomNetworks15To29) { dual_on_random(15, 30, false); }
TEST(ConcolicSearch, DualSearchEveryOrderOnRandomNetworksSlow) { dual_on_random(0, kRandomDualNets, true); }

// The single-instance search from every domain point (about 100 seeds) builds a solver per seed:
// the fast test takes every fifth network in one order (under the sanitizers every fifteenth), the
// slow one every network in every order.
TEST(ConcolicSearch, ConcolicSearchAgreesWithBruteForceOnRandomNetworks) {
  for (int i = 0; i < kRandomDualNets; i += sized(5, 15)) check_concolic(random_tiny(i), {kOrders[(i / 5) % 3]});
}
TEST(ConcolicSearch, ConcolicSearchEveryOrderOnRandomNetworksSlow) {
  for (int i = 0; i < kRandomDualNets; ++i) check_concolic(random_tiny(i), kAllOrders);
}

// The random family covers every kind of case: fair and unfair, each schema.
TEST(ConcolicSearch, RandomFamilyHasFairAndUnfairNetworks) {
  int fair = 0;
  int unfair = 0;
  int fair_with_weight = 0;
  for (int i = 0; i < kRandomDualNets; ++i) {
    const Tiny t = random_tiny(i);
    const bool w = brute_force(t).pairs > 0;
    (w ? unfair : fair) += 1;
    if (!w && protected_weight_nonzero(t)) ++fair_with_weight;
  }
  EXPECT_GE(fair, 5);
  EXPECT_GE(unfair, 10);
  EXPECT_GE(fair_with_weight, 1);
}

TEST(ConcolicSearch, DualSearchAgreesWithBruteForceOnHandMadeNetworks) {
  for (const char* which : {"zero_weight", "small_weight", "label_is_p", "rare"}) {
    check_dual(hand_made(which), nullptr, kAllOrders);
  }
}
TEST(ConcolicSearch, ConcolicSearchAgreesWithBruteForceOnHandMadeFairNetworks) {
  for (const char* which : {"zero_weight", "small_weight"}) check_concolic(hand_made(which), {FrontierOrder::Dfs});
}
TEST(ConcolicSearch, ConcolicSearchAgreesWithBruteForceOnHandMadeUnfairNetworks) {
  for (const char* which : {"label_is_p", "rare"}) check_concolic(hand_made(which), {FrontierOrder::DecisionFirst});
}

TEST(ConcolicSearch, HandMadeNetworksAreWhatTheySay) {
  EXPECT_EQ(brute_force(hand_made("zero_weight")).pairs, 0);
  EXPECT_EQ(brute_force(hand_made("small_weight")).pairs, 0);
  EXPECT_TRUE(protected_weight_nonzero(hand_made("small_weight")));
  EXPECT_EQ(brute_force(hand_made("label_is_p")).pairs, 2 * 4 * 4 * 3);
  EXPECT_EQ(brute_force(hand_made("rare")).pairs, 2 * 3);  // a = b = 3, any c, both directions
}

// With a quota above one, the dual search keeps going: every witness is real and distinct, and
// with a quota it cannot reach, the tree is exhausted.
TEST(ConcolicSearch, DualSearchManyWitnessesAreDistinctAndReal) {
  for (const char* which : {"label_is_p", "rare"}) {
    const Tiny t = hand_made(which);
    const Truth truth = brute_force(t);
    for (int quota : {3, 1000000}) {
      for (FrontierOrder order : kOrders) {
        SCOPED_TRACE(std::string(which) + " quota " + std::to_string(quota) + " " + order_name(order));
        ConcolicSearchOptions o;
        o.order = order;
        o.max_witnesses = quota;
        Env env = make_env();
        const FairnessResult r = dual_search(test::problem_of(t), o, env);
        ASSERT_EQ(r.verdict, Verdict::Witness);
        expect_exact_stats(r);
        std::set<std::pair<std::vector<double>, std::vector<double>>> seen;
        for (const WitnessPair& w : r.witnesses) {
          expect_real_witness(t, truth, w);
          EXPECT_TRUE(seen.emplace(row(w.raw), row(w.raw_prime)).second) << "a witness was returned twice";
        }
        EXPECT_LE(static_cast<long long>(r.witnesses.size()), truth.pairs);
        if (quota == 3) {
          if (std::string(which) == "label_is_p") {
            EXPECT_EQ(r.witnesses.size(), 3U);
          }
          EXPECT_LE(r.witnesses.size(), 3U);
        } else {
          EXPECT_TRUE(r.exhaustive);
          EXPECT_GE(r.witnesses.size(), 1U);
          EXPECT_EQ(r.stats.queued, r.stats.sat + r.stats.unsat);
        }
      }
    }
  }
}

// The same for the single-instance search: at most one witness per seed, so distinct x.
TEST(ConcolicSearch, ConcolicSearchManyWitnessesComeFromDistinctSeeds) {
  const Tiny t = hand_made("label_is_p");
  const Truth truth = brute_force(t);
  const Eigen::MatrixXd seeds = domain_points(t.schema);
  ConcolicSearchOptions o;
  o.seeds = &seeds;
  o.max_witnesses = 7;
  Env env = make_env();
  const FairnessResult r = concolic_search(test::problem_of(t), o, env);
  ASSERT_EQ(r.verdict, Verdict::Witness);
  ASSERT_EQ(r.witnesses.size(), 7U);
  EXPECT_EQ(r.stats.seeds, 7);
  std::set<std::vector<double>> xs;
  for (const WitnessPair& w : r.witnesses) {
    expect_real_witness(t, truth, w);
    EXPECT_TRUE(xs.insert(row(w.raw)).second);
  }
  expect_exact_stats(r);
}

TEST(ConcolicSearch, SeedOrderAndLimits) {
  const Tiny t = hand_made("rare");
  const Truth truth = brute_force(t);
  const Eigen::MatrixXd seeds = domain_points(t.schema);
  {  // max_seeds stops before the only discriminated seeds (a = b = 3 come last in the enumeration)
    ConcolicSearchOptions o;
    o.seeds = &seeds;
    o.max_seeds = 20;
    Env env = make_env();
    const FairnessResult r = concolic_search(test::problem_of(t), o, env);
    EXPECT_EQ(r.verdict, Verdict::Inconclusive);
    EXPECT_EQ(r.stats.seeds, 20);
    EXPECT_EQ(r.stats.seeds_exhausted, 20);
  }
  {  // k-means order still visits every seed, so it finds the witness (seeds with c = 0 only)
    Eigen::MatrixXd some(seeds.rows(), seeds.cols() / 3);
    Eigen::Index n = 0;
    for (Eigen::Index j = 0; j < seeds.cols(); ++j) {
      if (seeds(2, j) == 0) some.col(n++) = seeds.col(j);
    }
    ASSERT_EQ(n, some.cols());
    ConcolicSearchOptions o;
    o.seeds = &some;
    o.seed_order = SeedOrder::KMeans;
    o.kmeans_k = 3;
    Env env = make_env();
    const FairnessResult r = concolic_search(test::problem_of(t), o, env);
    ASSERT_EQ(r.verdict, Verdict::Witness);
    expect_real_witness(t, truth, r.witnesses[0]);
  }
  {  // random seeds (no matrix): label_is_p is discriminated everywhere, so the first seed does it
    const Tiny u = hand_made("label_is_p");
    ConcolicSearchOptions o;
    o.max_seeds = 5;
    Env env = make_env();
    const FairnessResult r = concolic_search(test::problem_of(u), o, env);
    ASSERT_EQ(r.verdict, Verdict::Witness);
    EXPECT_EQ(r.stats.seeds, 1);
    expect_real_witness(u, brute_force(u), r.witnesses[0]);
  }
  {  // rows outside the domain are skipped, not searched
    Eigen::MatrixXd bad = seeds.leftCols(3);
    bad(0, 0) = 99;   // a > max
    bad(0, 2) = 0.5;  // not an integer
    ConcolicSearchOptions o;
    o.seeds = &bad;
    Env env = make_env();
    const FairnessResult r = concolic_search(test::problem_of(t), o, env);
    EXPECT_EQ(r.verdict, Verdict::Inconclusive);
    EXPECT_EQ(r.stats.seeds, 1);
  }
  EXPECT_EQ(parse_seed_order("in-order"), SeedOrder::InOrder);
  EXPECT_EQ(parse_seed_order("kmeans"), SeedOrder::KMeans);
  EXPECT_THROW((void)parse_seed_order("bogus"), InputError);
}

TEST(ConcolicSearch, DualSearchSkipsStartRowsOutsideTheDomain) {
  const Tiny t = hand_made("small_weight");
  Eigen::MatrixXd seeds = domain_points(t.schema).leftCols(2);
  seeds(1, 0) = 17;  // b > max: the second row is the start
  ConcolicSearchOptions o;
  o.seeds = &seeds;
  Env env = make_env();
  const FairnessResult r = dual_search(test::problem_of(t), o, env);
  EXPECT_EQ(r.verdict, Verdict::Verified);
  EXPECT_TRUE(r.exhaustive);
}

TEST(ConcolicSearch, TimeLimitGivesInconclusive) {
  const Tiny t = hand_made("small_weight");  // fair, so the first run cannot end the search
  ConcolicSearchOptions o;
  Env env = make_env("0.000001");
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const FairnessResult r = dual_search(test::problem_of(t), o, env);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive);
  EXPECT_FALSE(r.exhaustive);
  EXPECT_NE(r.reason.find("time limit"), std::string::npos) << r.reason;
  EXPECT_EQ(r.stats.tests, 1);

  const Eigen::MatrixXd seeds = domain_points(t.schema);
  o.seeds = &seeds;
  Env env2 = make_env("0.000001");
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const FairnessResult c = concolic_search(test::problem_of(t), o, env2);
  EXPECT_EQ(c.verdict, Verdict::Inconclusive);
  EXPECT_LT(c.stats.seeds, seeds.cols());
  EXPECT_NE(c.reason.find("time limit"), std::string::npos) << c.reason;
}

TEST(ConcolicSearch, BadOptionsAreInputErrors) {
  const Tiny t = hand_made("rare");
  ConcolicSearchOptions o;
  Env env = make_env();
  o.max_witnesses = 0;
  EXPECT_THROW((void)dual_search(test::problem_of(t), o, env), InputError);
  o.max_witnesses = 1;
  const Schema other = schema_of(kOneHotFirst);  // 5 model inputs, the model reads 4
  const FairnessProblem mismatched(t.model, other, {});
  EXPECT_THROW((void)dual_search(mismatched, o, env), InputError);
  EXPECT_THROW((void)concolic_search(mismatched, o, env), InputError);
}

// ---------------------------------------------------------------------------------------------
// Fairify networks with the protected input's first-layer weights zeroed: no label can depend on
// it, so the dual search must prove that (never a witness). Release, 2 cores (CPU seconds): AC9 sex
// 1.6 s; AC9 age 1.8 s; GC4 age 2.1 s. Within 60 s none of GC1, GC2, GC3 (age), AC1, AC3, AC6, AC8,
// AC10 (sex), AC1 race or AC9 race finishes.

FairnessResult zeroed_dual(const std::string& model_rel, const std::string& schema_rel, const std::string& feature) {
  const Model m = load_model(source_path(model_rel));
  const Schema s = load_schema(source_path(schema_rel));
  const int f = s.feature_index(feature);
  std::vector<int> inputs(static_cast<std::size_t>(s.feature(f).model_width));
  for (std::size_t k = 0; k < inputs.size(); ++k) inputs[k] = s.feature(f).model_offset + static_cast<int>(k);
  const Model fair = zero_input_weights(m, inputs);
  ConcolicSearchOptions o;
  Env env = make_env("120");
  FairnessResult r = dual_search(FairnessProblem(fair, s, {feature}), o, env);
  SCOPED_TRACE(model_rel + " zeroed " + feature);
  EXPECT_NE(r.verdict, Verdict::Witness);
  EXPECT_TRUE(r.witnesses.empty());
  EXPECT_EQ(r.verdict, Verdict::Verified) << r.reason;
  EXPECT_TRUE(r.exhaustive);
  EXPECT_EQ(r.stats.unknown, 0);
  EXPECT_EQ(r.stats.tests, 1 + r.stats.sat);
  EXPECT_EQ(r.stats.queued, r.stats.sat + r.stats.unsat);
  EXPECT_LE(r.stats.paths, r.stats.tests);
  EXPECT_GT(r.stats.frontier, 0);
  EXPECT_GT(r.stats.unsat, 0);
  return r;
}

TEST(DualSearchFairify, ZeroedAC9SexIsVerified) {
  (void)zeroed_dual("benchmarks/fairify/models/adult/AC9.h5", "benchmarks/fairify/adult.toml", "sex");
}
TEST(DualSearchFairify, ZeroedAC9AgeIsVerifiedSlow) {
  (void)zeroed_dual("benchmarks/fairify/models/adult/AC9.h5", "benchmarks/fairify/adult.toml", "age");
}
TEST(DualSearchFairify, ZeroedGC4AgeIsVerifiedSlow) {
  (void)zeroed_dual("benchmarks/fairify/models/german/GC4.h5", "benchmarks/fairify/german.toml", "age");
}

}  // namespace
}  // namespace witness::test
