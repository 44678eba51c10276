#include "fairness/falsify.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/env.h"
#include "core/error.h"
#include "domain/schema.h"
#include "fairness/transform.h"
#include "fairness/verdict.h"
#include "model/loaders.h"
#include "support/paths.h"
#include "support/tiny_networks.h"

namespace witness::test {
namespace {

// ---------------------------------------------------------------------------------------------
// protected_combinations

TEST(ProtectedCombinations, EveryCombinationInOrder) {
  {
    const Schema s = schema_of(kBoolLast);
    const std::vector<Eigen::VectorXd> c = protected_combinations(s, s.protected_indices());
    ASSERT_EQ(c.size(), 2U);
    EXPECT_EQ(c[0], Eigen::VectorXd::Constant(1, 0.0));
    EXPECT_EQ(c[1], Eigen::VectorXd::Constant(1, 1.0));
  }
  {
    const Schema s = schema_of(kCategoricalMiddle);  // g: 3 categories
    const std::vector<Eigen::VectorXd> c = protected_combinations(s, s.protected_indices());
    ASSERT_EQ(c.size(), 3U);
    for (std::size_t k = 0; k < c.size(); ++k) {
      ASSERT_EQ(c[k].size(), 1);
      EXPECT_EQ(c[k](0), static_cast<double>(k));
    }
  }
  {
    const Schema s = schema_of(kOneHotFirst);  // one-hot: raw codes, not model inputs
    EXPECT_EQ(protected_combinations(s, s.protected_indices()).size(), 3U);
  }
  {
    const Schema s = schema_of(kTwoProtected);  // s (boolean) x r (3 categories), s first
    const std::vector<int> prot = s.protected_indices();
    const std::vector<Eigen::VectorXd> c = protected_combinations(s, prot);
    ASSERT_EQ(c.size(), 6U);
    std::set<std::vector<double>> distinct;
    for (const Eigen::VectorXd& v : c) {
      ASSERT_EQ(v.size(), 2);
      EXPECT_TRUE(v(0) == 0.0 || v(0) == 1.0);
      EXPECT_TRUE(v(1) >= 0.0 && v(1) <= 2.0);
      distinct.insert(row(v));
    }
    EXPECT_EQ(distinct.size(), 6U);
    EXPECT_EQ(c.front(), Eigen::Vector2d(0.0, 0.0));
    EXPECT_EQ(c[1], Eigen::Vector2d(0.0, 1.0));  // the last feature varies fastest
    EXPECT_EQ(c.back(), Eigen::Vector2d(1.0, 2.0));
    // The order of the protected features is the order of the values.
    const std::vector<Eigen::VectorXd> swapped = protected_combinations(s, {prot[1], prot[0]});
    ASSERT_EQ(swapped.size(), 6U);
    EXPECT_EQ(swapped[1], Eigen::Vector2d(0.0, 1.0));
    EXPECT_EQ(swapped.back(), Eigen::Vector2d(2.0, 1.0));
  }
  {  // a non-protected integer feature may be used as a protected one: every value in its bounds
    const Schema s = schema_of(kCategoricalMiddle);
    const std::vector<Eigen::VectorXd> c = protected_combinations(s, {s.feature_index("b")});  // -2 .. 2
    ASSERT_EQ(c.size(), 5U);
    EXPECT_EQ(c.front()(0), -2.0);
    EXPECT_EQ(c.back()(0), 2.0);
  }
}

constexpr const char* kAwkward = R"(
name = "awkward"
protected = ["flag"]
[[features]]
name = "flag"
kind = "boolean"
[[features]]
name = "income"
kind = "real"
min = 0
max = 1
[[features]]
name = "only"
kind = "integer"
min = 4
max = 4
[[features]]
name = "id"
kind = "integer"
min = 0
max = 99999
)";

void expect_input_error(const Schema& s, const std::vector<int>& prot, const std::string& needle) {
  try {
    (void)protected_combinations(s, prot);
    ADD_FAILURE() << "no InputError (wanted '" << needle << "')";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(ProtectedCombinations, Errors) {
  const Schema s = schema_of(kAwkward);
  EXPECT_EQ(protected_combinations(s, {s.feature_index("flag")}).size(), 2U);
  expect_input_error(s, {s.feature_index("income")}, "real");
  expect_input_error(s, {s.feature_index("flag"), s.feature_index("income")}, "income");
  expect_input_error(s, {s.feature_index("only")}, "single value");
  expect_input_error(s, {}, "single value");
  expect_input_error(s, {s.feature_index("id")}, "65536");
  // 2 x 1 = 2 combinations are fine; 100000 of one feature or 2 x 100000 are not.
  EXPECT_EQ(protected_combinations(s, {s.feature_index("flag"), s.feature_index("only")}).size(), 2U);
  expect_input_error(s, {s.feature_index("flag"), s.feature_index("id")}, "65536");
}

// ---------------------------------------------------------------------------------------------
// falsify

FalsifyOptions options_for(const Tiny& /*t*/, long long tests, int max_witnesses = 1) {
  FalsifyOptions o;
  o.tests = tests;
  o.max_witnesses = max_witnesses;
  return o;
}

// Every pair falsify returns replays on the original model and is one brute force knows.
void expect_all_real(const Tiny& t, const Truth& truth, const std::vector<WitnessPair>& found) {
  std::set<std::pair<std::vector<double>, std::vector<double>>> seen;
  for (const WitnessPair& w : found) {
    expect_real_witness(t, truth, w);
    EXPECT_TRUE(replay_witness(t.model, t.schema, t.prot, w.x, w.x_prime).has_value());
    EXPECT_TRUE(seen.emplace(row(w.raw), row(w.raw_prime)).second) << "a pair was returned twice";
  }
}

TEST(Falsify, FindsAWitnessOnAnObviouslyUnfairModel) {
  const Tiny t = hand_made("label_is_p");
  const Truth truth = brute_force(t);
  Env env = make_env();
  SearchStats stats;
  const std::vector<WitnessPair> found = falsify(test::problem_of(t), options_for(t, 1LL << 24), env, stats);
  ASSERT_EQ(found.size(), 1U);
  expect_all_real(t, truth, found);
  EXPECT_GT(stats.tests, 0);
  EXPECT_EQ(stats.rejected, 0);
  EXPECT_LT(stats.tests, 1LL << 20);  // it stops at the first witness, long before its budget
}

TEST(Falsify, ManyWitnessesAreDistinctAndReal) {
  const Tiny t = hand_made("label_is_p");
  const Truth truth = brute_force(t);
  Env env = make_env();
  SearchStats stats;
  const std::vector<WitnessPair> found = falsify(test::problem_of(t), options_for(t, 1LL << 20, 6), env, stats);
  EXPECT_EQ(found.size(), 6U);
  expect_all_real(t, truth, found);
  // One pair per point: no x is used twice.
  std::set<std::vector<double>> xs;
  for (const WitnessPair& w : found) EXPECT_TRUE(xs.insert(row(w.raw)).second);
}

// The rare witnesses (a = b = 3 of a 96-point domain) are found too.
TEST(Falsify, FindsTheRareWitness) {
  const Tiny t = hand_made("rare");
  const Truth truth = brute_force(t);
  Env env = make_env();
  SearchStats stats;
  const std::vector<WitnessPair> found = falsify(test::problem_of(t), options_for(t, 1LL << 20), env, stats);
  ASSERT_EQ(found.size(), 1U);
  expect_all_real(t, truth, found);
  EXPECT_EQ(found[0].raw(0), 3.0);
  EXPECT_EQ(found[0].raw(1), 3.0);
}

// On every random network: what it returns is real, and it finds a witness whenever there is one
// (the domains are tiny); nothing on the fair ones.
TEST(Falsify, AgreesWithBruteForceOnRandomNetworks) {
  int unfair = 0;
  for (int i = 0; i < 30; ++i) {
    const Tiny t = random_tiny(i);
    SCOPED_TRACE(t.name);
    const Truth truth = brute_force(t);
    Env env = make_env();
    SearchStats stats;
    const std::vector<WitnessPair> found = falsify(test::problem_of(t), options_for(t, 1LL << 16, 2), env, stats);
    expect_all_real(t, truth, found);
    EXPECT_EQ(stats.rejected, 0);
    EXPECT_GT(stats.tests, 0);
    if (truth.pairs == 0) {
      EXPECT_TRUE(found.empty());
    } else {
      ++unfair;
      EXPECT_FALSE(found.empty());
    }
  }
  EXPECT_GE(unfair, 10);
}

TEST(Falsify, FindsNothingOnFairModels) {
  for (const char* which : {"zero_weight", "small_weight"}) {
    const Tiny t = hand_made(which);
    ASSERT_EQ(brute_force(t).pairs, 0);
    Env env = make_env();
    SearchStats stats;
    const std::vector<WitnessPair> found = falsify(test::problem_of(t), options_for(t, 1LL << 16), env, stats);
    EXPECT_TRUE(found.empty()) << which;
    EXPECT_GT(stats.tests, 100) << which;  // it used its budget
    EXPECT_EQ(stats.rejected, 0);
  }
  // label_is_p with p's weight zeroed: label = [2 * 0 - 1 > 0], constant.
  const Tiny t = hand_made("label_is_p");
  const Model fair = zero_input_weights(t.model, {t.schema.feature(t.prot[0]).model_offset});
  Env env = make_env();
  SearchStats stats;
  EXPECT_TRUE(
      falsify(FairnessProblem::of_features(fair, t.schema, t.prot), options_for(t, 1LL << 16), env, stats).empty());
}

// Pairs that differ in double but not in float32 are witnesses (float32_witness says so); a pair
// whose labels agree in double is never returned, however close its logits are.
TEST(Falsify, NeverReportsANonReplayingPair) {
  {  // label = [a + p * 2^-30 > 1]: witnesses at a = 1, in double only
    const Tiny t = below_float32();
    Env env = make_env();
    SearchStats stats;
    const std::vector<WitnessPair> found = falsify(test::problem_of(t), options_for(t, 1LL << 18), env, stats);
    ASSERT_EQ(found.size(), 1U);
    EXPECT_FALSE(found[0].float32_witness);
    EXPECT_EQ(found[0].raw(0), 1.0);
    EXPECT_TRUE(replay_witness(t.model, t.schema, t.prot, found[0].x, found[0].x_prime).has_value());
  }
  {  // label = [a - 1 - p / 2 > 0]: z = 0 exactly at (a = 1, p = 0), but no label ever flips
    const Tiny t = on_threshold();
    Env env = make_env();
    SearchStats stats;
    EXPECT_TRUE(falsify(test::problem_of(t), options_for(t, 1LL << 16), env, stats).empty());
    EXPECT_EQ(stats.rejected, 0);
  }
}

TEST(Falsify, StopsOnCancelAndDeadline) {
  const Tiny t = hand_made("small_weight");  // fair: nothing ends the search early
  {
    std::atomic<bool> cancel{true};
    FalsifyOptions o = options_for(t, 1LL << 40);
    o.cancel = &cancel;
    Env env = make_env();
    SearchStats stats;
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(falsify(test::problem_of(t), o, env, stats).empty());
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
  }
  {
    Env env = make_env("0.2");
    SearchStats stats;
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(falsify(test::problem_of(t), options_for(t, 1LL << 40), env, stats).empty());
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
  }
}

// Argmax rules get the random phase only; it still finds label_is_p-like witnesses.
TEST(Falsify, ArgMaxRule) {
  const Schema s = schema_of(kBoolLast);
  const std::vector<int> prot = s.protected_indices();
  ModelBuilder b("argmax_p", s.model_input_names());
  Eigen::MatrixXd w(2, 4);
  w << 0, 0, 0, 0, 0, 0, 0, 1;  // logits: [0.5, p]: label 1 iff p = 1
  const int z = b.dense(b.input(), w, Eigen::Vector2d(0.5, 0.0));
  const Model m = b.finish(b.unary(OpKind::Softmax, z), DecisionRule::argmax_of(z));
  FalsifyOptions o;
  o.tests = 1LL << 18;
  Env env = make_env();
  SearchStats stats;
  const std::vector<WitnessPair> found = falsify(FairnessProblem::of_features(m, s, prot), o, env, stats);
  ASSERT_EQ(found.size(), 1U);
  EXPECT_NE(found[0].label, found[0].label_prime);
  EXPECT_TRUE(replay_witness(m, s, prot, found[0].x, found[0].x_prime).has_value());
}

// A Fairify network: AC1 is unfair for sex, and falsify finds a pair within its default budget.
TEST(Falsify, FairifyAC1Sex) {
  const Model m = load_model(source_path("benchmarks/fairify/models/adult/AC1.h5"));
  const Schema s = load_schema(source_path("benchmarks/fairify/adult.toml"));
  const std::vector<int> prot = {s.feature_index("sex")};
  Env env = make_env();
  SearchStats stats;
  const std::vector<WitnessPair> found = falsify(FairnessProblem(m, s, {"sex"}), FalsifyOptions{}, env, stats);
  ASSERT_EQ(found.size(), 1U);
  const WitnessPair& w = found[0];
  EXPECT_TRUE(replay_witness(m, s, prot, w.x, w.x_prime).has_value());
  for (int f = 0; f < s.size(); ++f) {
    if (f != prot[0]) {
      EXPECT_EQ(w.raw(f), w.raw_prime(f)) << s.feature(f).name;
    }
  }
}

}  // namespace
}  // namespace witness::test
