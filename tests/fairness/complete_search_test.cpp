#include "fairness/complete/complete_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "core/env.h"
#include "core/error.h"
#include "domain/schema.h"
#include "fairness/auto_search.h"
#include "fairness/transform.h"
#include "fairness/verdict.h"
#include "model/evaluator.h"
#include "model/loaders.h"
#include "support/paths.h"
#include "support/tiny_networks.h"

namespace witness::test {
namespace {

constexpr int kRandomNets = 30;
const char* const kHandMade[] = {"zero_weight", "small_weight", "label_is_p", "rare"};

CompleteSearchOptions options_for(const Tiny& /*t*/) {
  CompleteSearchOptions o;
  return o;
}

// The invariants of every complete_search result.
void expect_consistent(const FairnessResult& r) {
  EXPECT_TRUE(r.share.measured);
  EXPECT_GE(r.share.certified, 0.0);
  EXPECT_GE(r.share.falsified, 0.0);
  EXPECT_GE(r.share.undecided, 0.0);
  EXPECT_NEAR(r.share.certified + r.share.falsified + r.share.undecided, 1.0, 1e-12);
  EXPECT_GE(r.stats.regions, 1);
  EXPECT_GE(r.stats.leaves, 0);  // 0 when a witness in the first region stops the search
  EXPECT_LE(r.stats.leaves, r.stats.regions);
  EXPECT_EQ(r.stats.rejected, 0);  // exact tiny networks: every candidate replays
  EXPECT_GE(r.stats.seconds, 0.0);
}

// complete_search agrees with brute force: a replayed witness that brute force knows, or Verified
// with the whole domain certified.
FairnessResult check_complete(const Tiny& t, const Truth& truth, unsigned threads, const CompleteSearchOptions& o) {
  SCOPED_TRACE(t.name + " threads " + std::to_string(threads) + (o.check ? " check" : "") +
               (o.split == SplitRule::Widest ? " widest" : ""));
  Env env = test::make_env("30", threads);
  FairnessResult r = complete_search(test::problem_of(t), o, env);
  EXPECT_EQ(r.engine, "complete");
  EXPECT_TRUE(r.phase.empty());
  expect_consistent(r);
  if (truth.pairs > 0) {
    EXPECT_EQ(r.verdict, Verdict::Witness) << r.reason;
    EXPECT_FALSE(r.witnesses.empty());
    EXPECT_LE(r.witnesses.size(), static_cast<std::size_t>(std::max(1, o.max_witnesses)));
    for (const WitnessPair& w : r.witnesses) {
      expect_real_witness(t, truth, w);
      const auto again = replay_witness(t.model, t.schema, t.prot, w.x, w.x_prime);
      EXPECT_TRUE(again.has_value());
      EXPECT_TRUE(w.float32_witness);
    }
    EXPECT_TRUE(r.reason.empty()) << r.reason;
  } else {
    EXPECT_EQ(r.verdict, Verdict::Verified) << r.reason;
    EXPECT_TRUE(r.exhaustive);
    EXPECT_TRUE(r.witnesses.empty());
    EXPECT_TRUE(r.reason.empty()) << r.reason;
    EXPECT_EQ(r.share.certified, 1.0);
    EXPECT_EQ(r.share.falsified, 0.0);
    EXPECT_EQ(r.share.undecided, 0.0);
    if (o.check) {
      EXPECT_GT(r.stats.checked, 0);
    }
  }
  if (!o.check) {
    EXPECT_EQ(r.stats.checked, 0);
  }
  return r;
}

// Threads 1 and 2 give the same verdict.
void check_both_thread_counts(const Tiny& t) {
  const Truth truth = brute_force(t);
  const FairnessResult one = check_complete(t, truth, 1, options_for(t));
  const FairnessResult two = check_complete(t, truth, 2, options_for(t));
  EXPECT_EQ(one.verdict, two.verdict) << t.name;
}

TEST(CompleteSearch, AgreesWithBruteForceOnRandomNetworks) {
  for (int i = 0; i < kRandomNets; ++i) check_both_thread_counts(random_tiny(i));
}

TEST(CompleteSearch, AgreesWithBruteForceOnHandMadeNetworks) {
  for (const char* which : kHandMade) check_both_thread_counts(hand_made(which));
}

TEST(CompleteSearch, WidestSplitAgreesWithBruteForce) {
  for (int i = 0; i < kRandomNets; i += 3) {
    const Tiny t = random_tiny(i);
    CompleteSearchOptions o = options_for(t);
    o.split = SplitRule::Widest;
    (void)check_complete(t, brute_force(t), 1, o);
  }
  EXPECT_EQ(parse_split_rule("score"), SplitRule::Score);
  EXPECT_EQ(parse_split_rule("widest"), SplitRule::Widest);
  EXPECT_THROW((void)parse_split_rule("bogus"), InputError);
  try {
    (void)parse_split_rule("bogus");
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bogus"), std::string::npos) << e.what();
  }
}

// --quantify: the search goes on after witnesses and measures the domain. On these exact networks
// nothing stays undecided: certified is the brute-force share of points where no protected change
// flips the label, and falsified is the rest. `strict` also checks the falsified share and that no
// witness is returned twice (a regression: the first version counted inner-region witnesses twice).
void check_quantify(const Tiny& t, unsigned threads, SplitRule split, bool strict) {
  SCOPED_TRACE(t.name + " quantify, threads " + std::to_string(threads) +
               (split == SplitRule::Widest ? " widest" : " score"));
  const Truth truth = brute_force(t);
  CompleteSearchOptions o = options_for(t);
  o.quantify = true;
  o.max_witnesses = 3;
  o.split = split;
  Env env = test::make_env("30", threads);
  const FairnessResult r = complete_search(test::problem_of(t), o, env);
  EXPECT_TRUE(r.share.measured);
  const double want = fair_share(t);
  EXPECT_NEAR(r.share.certified, want, 1e-12);
  EXPECT_EQ(r.verdict, truth.pairs > 0 ? Verdict::Witness : Verdict::Verified) << r.reason;
  EXPECT_TRUE(r.exhaustive);  // finished
  EXPECT_LE(r.witnesses.size(), 3U);
  EXPECT_EQ(r.witnesses.empty(), truth.pairs == 0);
  for (const WitnessPair& w : r.witnesses) expect_real_witness(t, truth, w);
  if (want < 1.0) {
    EXPECT_GT(r.share.falsified, 0.0);
  }
  if (!strict) return;
  expect_consistent(r);
  EXPECT_NEAR(r.share.falsified, 1.0 - want, 1e-12);
  EXPECT_NEAR(r.share.certified + r.share.falsified, 1.0, 1e-12);
  EXPECT_NEAR(r.share.undecided, 0.0, 1e-12);
  std::set<std::pair<std::vector<double>, std::vector<double>>> seen;
  for (const WitnessPair& w : r.witnesses) {
    EXPECT_TRUE(seen.emplace(row(w.raw), row(w.raw_prime)).second) << "a witness was returned twice";
  }
}

void quantify_all(SplitRule split, bool strict) {
  int partly_fair = 0;
  for (int i = 0; i < kRandomNets; ++i) {
    const Tiny t = random_tiny(i);
    const double share = fair_share(t);
    partly_fair += share > 0.0 && share < 1.0 ? 1 : 0;
    check_quantify(t, i % 2 == 0 ? 1 : 2, split, strict);
  }
  for (const char* which : kHandMade) check_quantify(hand_made(which), 1, split, strict);
  EXPECT_GE(partly_fair, 5);
}

TEST(CompleteSearch, QuantifyCertifiesTheFairShare) {
  quantify_all(SplitRule::Score, true);
  quantify_all(SplitRule::Widest, true);
  EXPECT_EQ(fair_share(hand_made("label_is_p")), 0.0);
  EXPECT_EQ(fair_share(hand_made("rare")), 1.0 - 3.0 / 48.0);  // a = b = 3, any c
}

// --check re-proves every region the bounds close with Z3 (a solver call each): a subset here,
// every network in the slow test.
TEST(CompleteSearch, CheckReprovesClosedRegions) {
  int checked_fair = 0;
  for (int i : {3, 5, 8, 13, 18}) {
    const Tiny t = random_tiny(i);
    const Truth truth = brute_force(t);
    CompleteSearchOptions o = options_for(t);
    o.check = true;
    const FairnessResult r = check_complete(t, truth, i % 2 == 0 ? 1 : 2, o);
    checked_fair += truth.pairs == 0 ? 1 : 0;
    if (truth.pairs == 0) {
      EXPECT_GT(r.stats.checked, 0);
    }
  }
  for (const char* which : {"zero_weight", "small_weight"}) {
    const Tiny t = hand_made(which);
    CompleteSearchOptions o = options_for(t);
    o.check = true;
    (void)check_complete(t, brute_force(t), 1, o);
  }
  EXPECT_GE(checked_fair, 1);
}

TEST(CompleteSearch, CheckReprovesClosedRegionsEveryNetworkSlow) {
  for (int i = 0; i < kRandomNets; ++i) {
    const Tiny t = random_tiny(i);
    CompleteSearchOptions o = options_for(t);
    o.check = true;
    (void)check_complete(t, brute_force(t), 2, o);
    o.quantify = true;
    Env env = test::make_env("30", 1);
    const FairnessResult q = complete_search(test::problem_of(t), o, env);
    EXPECT_NEAR(q.share.certified, fair_share(t), 1e-12) << t.name;
    EXPECT_EQ(q.verdict, brute_force(t).pairs > 0 ? Verdict::Witness : Verdict::Verified) << t.name;
  }
  for (const char* which : kHandMade) {
    const Tiny t = hand_made(which);
    CompleteSearchOptions o = options_for(t);
    o.check = true;
    (void)check_complete(t, brute_force(t), 1, o);
  }
}

// ---------------------------------------------------------------------------------------------
// Random schemas (label-coded and one-hot categoricals, booleans, integers with awkward scale/offset
// and mean/std normalisations that are not exact in double, one or two protected features anywhere)
// and ReLU networks with random real weights (some exact zeros): the verdict and the certified share
// agree with a brute force in double over the whole domain, and every witness replays. Knife edges
// (a logit within 1e-9 of the threshold somewhere) are skipped, since there exact and double
// semantics may differ.

std::string random_schema_toml(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> d(0, 99);
  const int plain = 2 + d(rng) % 3;
  const int prot = 1 + (d(rng) < 30 ? 1 : 0);
  std::vector<int> order(static_cast<std::size_t>(plain + prot));
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::shuffle(order.begin(), order.end(), rng);
  std::string features;
  std::string names;
  for (int i : order) {
    const bool is_prot = i >= plain;
    const std::string name = (is_prot ? "p" : "f") + std::to_string(i);
    if (is_prot) names += (names.empty() ? "\"" : ", \"") + name + "\"";
    features += "[[features]]\nname = \"" + name + "\"\n";
    const int kind = d(rng) % 4;
    if (kind == 0) {
      features += "kind = \"boolean\"\n";
    } else if (kind == 1) {
      const int n = 2 + d(rng) % 3;
      features += "kind = \"categorical\"\ncategories = [";
      for (int c = 0; c < n; ++c) features += (c > 0 ? ", \"c" : "\"c") + std::to_string(c) + "\"";
      features += "]\n";
      if (d(rng) < 50) {
        features += "encoding = \"one-hot\"\n";
      } else if (d(rng) < 40) {
        features += "scale = 0.3\noffset = -0.7\n";
      }
    } else {
      const int lo = -(d(rng) % 4);
      const int hi = lo + 1 + d(rng) % 4;
      features += "kind = \"integer\"\nmin = " + std::to_string(lo) + "\nmax = " + std::to_string(hi) + "\n";
      const int norm = d(rng) % 3;
      if (norm == 1) features += "mean = 0.7\nstd = 3\n";
      if (norm == 2) features += "scale = 0.1\noffset = 0.3\n";
    }
  }
  return "name = \"random\"\nprotected = [" + names + "]\n" + features;
}

Tiny random_schema_tiny(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Tiny t;
  t.name = "schema" + std::to_string(seed);
  t.schema = parse_schema(random_schema_toml(rng), t.name + ".toml");
  t.prot = t.schema.protected_indices();
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> d(0, 99);
  ModelBuilder b(t.name, t.schema.model_input_names());
  int x = b.input();
  int width = t.schema.model_width();
  const int depth = d(rng) % 3;
  for (int l = 0; l < depth; ++l) {
    const int out = 2 + d(rng) % 7;
    Eigen::MatrixXd w(out, width);
    Eigen::VectorXd bias(out);
    for (int r = 0; r < out; ++r) {
      for (int c = 0; c < width; ++c) w(r, c) = d(rng) < 10 ? 0.0 : u(rng);
      bias(r) = u(rng);
    }
    x = b.relu(b.dense(x, w, bias));
    width = out;
  }
  Eigen::MatrixXd w(1, width);
  for (int c = 0; c < width; ++c) w(0, c) = u(rng);
  const int z = b.dense(x, w, Eigen::VectorXd::Constant(1, u(rng) * 0.5));
  t.model = b.finish(b.sigmoid(z), DecisionRule::threshold_on(z, d(rng) < 20 ? 0.1 : 0.0));
  return t;
}

struct DoubleTruth {
  bool unfair = false;
  double fair_share = 0.0;
  double min_gap = 0.0;  // smallest |z - t| over the domain
};

DoubleTruth double_brute_force(const Tiny& t) {
  const Eigen::MatrixXd raw = domain_points(t.schema);
  const Evaluation e = evaluate(t.model, t.schema.to_model_columns(raw));
  std::vector<bool> is_prot(static_cast<std::size_t>(t.schema.size()), false);
  for (int f : t.prot) is_prot[static_cast<std::size_t>(f)] = true;
  std::map<std::vector<double>, std::set<int>> labels;
  DoubleTruth out;
  out.min_gap = std::numeric_limits<double>::infinity();
  for (Eigen::Index j = 0; j < raw.cols(); ++j) {
    std::vector<double> key;
    for (int f = 0; f < t.schema.size(); ++f) {
      if (!is_prot[static_cast<std::size_t>(f)]) key.push_back(raw(f, j));
    }
    labels[key].insert(e.labels[static_cast<std::size_t>(j)]);
    out.min_gap = std::min(out.min_gap, std::abs(e.decision(t.model.rule.index, j) - t.model.rule.threshold));
  }
  long long fair = 0;
  for (const auto& [key, seen] : labels) {
    out.unfair = out.unfair || seen.size() > 1;
    fair += seen.size() == 1 ? 1 : 0;
  }
  out.fair_share = static_cast<double>(fair) / static_cast<double>(labels.size());
  return out;
}

void random_schemas(std::uint64_t from, std::uint64_t to) {
  int unfair = 0;
  int compared = 0;
  for (std::uint64_t seed = from; seed < to; ++seed) {
    const Tiny t = random_schema_tiny(seed);
    const DoubleTruth truth = double_brute_force(t);
    if (truth.min_gap < 1e-9) continue;
    ++compared;
    unfair += truth.unfair ? 1 : 0;
    for (const SplitRule split : {SplitRule::Score, SplitRule::Widest}) {
      for (const unsigned threads : {1U, 2U}) {
        SCOPED_TRACE(t.name + (split == SplitRule::Widest ? " widest" : " score") + " threads " +
                     std::to_string(threads));
        CompleteSearchOptions o = options_for(t);
        o.split = split;
        o.quantify = threads == 1;
        Env env = test::make_env("30", threads);
        const FairnessResult r = complete_search(test::problem_of(t), o, env);
        ASSERT_EQ(r.verdict, truth.unfair ? Verdict::Witness : Verdict::Verified) << r.reason;
        if (o.quantify) {
          EXPECT_NEAR(r.share.certified, truth.fair_share, 1e-9);
          EXPECT_TRUE(r.exhaustive);
        }
        for (const WitnessPair& w : r.witnesses) {
          EXPECT_TRUE(replay_witness(t.model, t.schema, t.prot, w.x, w.x_prime).has_value());
          EXPECT_NE(w.label, w.label_prime);
        }
      }
    }
  }
  EXPECT_GE(compared, static_cast<int>(to - from) * 9 / 10);
  EXPECT_GE(unfair, compared / 4);
  EXPECT_LE(unfair, compared * 3 / 4);
}

TEST(CompleteSearch, AgreesWithBruteForceOnRandomSchemas) { random_schemas(0, 120); }
TEST(CompleteSearch, AgreesWithBruteForceOnRandomSchemasManySlow) { random_schemas(120, 3120); }

// ---------------------------------------------------------------------------------------------
// A protected input with weight exactly 0: the two copies share every other input exactly, so the
// difference bound is exactly 0 and the root region closes, whatever the other features are.

Tiny zero_protected_weight(const std::string& other, const std::string& norm) {
  Tiny t;
  t.name = other + (norm.empty() ? "" : " normalised");
  t.schema = parse_schema("name = \"z\"\nprotected = [\"p\"]\n[[features]]\nname = \"x\"\n" + other + norm +
                              "[[features]]\nname = \"y\"\nkind = \"integer\"\nmin = 0\nmax = 9\n" + norm +
                              "[[features]]\nname = \"p\"\nkind = \"boolean\"\n",
                          "z.toml");
  t.prot = t.schema.protected_indices();
  ModelBuilder b("zero_p", t.schema.model_input_names());
  Eigen::MatrixXd w1(2, 3);
  w1 << 1, 0.5, 0, -0.25, 1, 0;  // p: exactly 0
  Eigen::MatrixXd w2(1, 2);
  w2 << 1, -0.75;
  const int h = b.relu(b.dense(b.input(), w1, Eigen::Vector2d(0.1, -0.3)));
  const int z = b.dense(h, w2, Eigen::VectorXd::Constant(1, -0.2));
  t.model = b.finish(b.sigmoid(z), DecisionRule::threshold_on(z, 0.0));
  return t;
}

const char* const kRealX = "kind = \"real\"\nmin = -1\nmax = 2\n";
const char* const kIntX = "kind = \"integer\"\nmin = 0\nmax = 40\n";

void expect_closed_at_root(const Tiny& t) {
  SCOPED_TRACE(t.name);
  for (const SplitRule split : {SplitRule::Score, SplitRule::Widest}) {
    CompleteSearchOptions o = options_for(t);
    o.split = split;
    Env env = test::make_env("10", 1);
    const FairnessResult r = complete_search(test::problem_of(t), o, env);
    EXPECT_EQ(r.verdict, Verdict::Verified) << r.reason;
    EXPECT_EQ(r.stats.regions, 1);
  }
}

TEST(CompleteSearch, ZeroProtectedWeightClosesAtTheRoot) {
  expect_closed_at_root(zero_protected_weight(kRealX, ""));
  expect_closed_at_root(zero_protected_weight(kIntX, ""));
  // Normalised integer features (see also ZeroProtectedWeightWithNormalisedFeaturesClosesAtTheRoot).
  const Tiny t = zero_protected_weight(kIntX, "mean = 0.7\nstd = 3\n");
  Env env = test::make_env("10", 1);
  EXPECT_EQ(complete_search(test::problem_of(t), options_for(t), env).verdict, Verdict::Verified);
}

// Regression: the difference of a shared normalised input must be exactly 0, not the rounding
// allowance of its normalisation, or a fair model never closes along its decision boundary.
TEST(CompleteSearch, ZeroProtectedWeightWithNormalisedFeaturesClosesAtTheRoot) {
  expect_closed_at_root(zero_protected_weight(kRealX, "mean = 0.1\nstd = 0.7\n"));
  expect_closed_at_root(zero_protected_weight(kRealX, "scale = 0.5\noffset = 0.25\n"));
  expect_closed_at_root(zero_protected_weight(kIntX, "mean = 0.7\nstd = 3\n"));
}

// ---------------------------------------------------------------------------------------------
// auto_search: falsification, then the complete engine beside it.

void check_auto(const Tiny& t) {
  SCOPED_TRACE(t.name + " auto");
  const Truth truth = brute_force(t);
  CompleteSearchOptions o = options_for(t);
  o.falsify_tests = 1LL << 12;
  Env env = test::make_env("30", 2);
  const FairnessResult r = auto_search(test::problem_of(t), o, env);
  EXPECT_EQ(r.engine, "auto");
  EXPECT_TRUE(r.phase == "falsification" || r.phase == "complete") << r.phase;
  if (truth.pairs > 0) {
    ASSERT_EQ(r.verdict, Verdict::Witness) << r.reason;
    ASSERT_FALSE(r.witnesses.empty());
    for (const WitnessPair& w : r.witnesses) expect_real_witness(t, truth, w);
  } else {
    EXPECT_EQ(r.verdict, Verdict::Verified) << r.reason;
    EXPECT_EQ(r.phase, "complete");
    EXPECT_TRUE(r.exhaustive);
    EXPECT_TRUE(r.witnesses.empty());
    EXPECT_TRUE(r.share.measured);
    EXPECT_EQ(r.share.certified, 1.0);
  }
}

TEST(AutoSearch, AgreesWithBruteForce) {
  for (int i = 0; i < kRandomNets; ++i) check_auto(random_tiny(i));
  for (const char* which : kHandMade) check_auto(hand_made(which));
}

TEST(AutoSearch, QuantifySkipsFalsification) {
  const Tiny t = hand_made("label_is_p");
  CompleteSearchOptions o = options_for(t);
  o.quantify = true;
  o.falsify_tests = 1LL << 12;
  Env env = test::make_env("30", 1);
  const FairnessResult r = auto_search(test::problem_of(t), o, env);
  EXPECT_EQ(r.engine, "auto");
  EXPECT_EQ(r.phase, "complete");
  ASSERT_EQ(r.verdict, Verdict::Witness);
  EXPECT_NEAR(r.share.falsified, 1.0, 1e-12);
  expect_real_witness(t, brute_force(t), r.witnesses[0]);
}

// ---------------------------------------------------------------------------------------------
// The other exact engines give the same verdicts on the tiny networks (they all finish there).

// ---------------------------------------------------------------------------------------------

// Witnesses beyond the first: real and at most the quota. (label_is_p is closed as "every point
// flips" at the root, which yields one witness: the quota is an upper bound, not a promise.)
void many_witnesses(bool distinct) {
  for (const char* which : {"label_is_p", "rare"}) {
    const Tiny t = hand_made(which);
    const Truth truth = brute_force(t);
    for (unsigned threads : {1U, 2U}) {
      SCOPED_TRACE(std::string(which) + " threads " + std::to_string(threads));
      CompleteSearchOptions o = options_for(t);
      o.max_witnesses = 5;
      Env env = test::make_env("30", threads);
      const FairnessResult r = complete_search(test::problem_of(t), o, env);
      ASSERT_EQ(r.verdict, Verdict::Witness);
      EXPECT_GE(r.witnesses.size(), 1U);
      EXPECT_LE(r.witnesses.size(), 5U);
      std::set<std::pair<std::vector<double>, std::vector<double>>> seen;
      for (const WitnessPair& w : r.witnesses) {
        expect_real_witness(t, truth, w);
        if (distinct) {
          EXPECT_TRUE(seen.emplace(row(w.raw), row(w.raw_prime)).second) << "a witness was returned twice";
        }
      }
    }
  }
}

TEST(CompleteSearch, ManyWitnessesAreReal) { many_witnesses(false); }

// Regression: max_witnesses = 5 on "rare" (6 witness pairs) returns distinct pairs.
TEST(CompleteSearch, ManyWitnessesAreDistinct) { many_witnesses(true); }

// A fair model with a logit exactly on the threshold (see on_threshold).
TEST(CompleteSearch, PointOnTheThresholdWidestSplit) {
  const Tiny t = on_threshold();
  EXPECT_EQ(brute_force(t).pairs, 0);
  CompleteSearchOptions o = options_for(t);
  o.split = SplitRule::Widest;
  for (unsigned threads : {1U, 2U}) {
    Env env = test::make_env("10", threads);
    const FairnessResult r = complete_search(test::problem_of(t), o, env);
    EXPECT_EQ(r.verdict, Verdict::Verified) << r.reason;
    EXPECT_EQ(r.share.certified, 1.0);
  }
}

// A pair whose labels differ in double (and exactly) but not in float32 is still a witness (see
// below_float32).
TEST(CompleteSearch, WitnessBelowFloat32Resolution) {
  const Tiny t = below_float32();
  for (unsigned threads : {1U, 2U}) {
    Env env = test::make_env("30", threads);
    const FairnessResult r = complete_search(test::problem_of(t), options_for(t), env);
    ASSERT_EQ(r.verdict, Verdict::Witness) << r.reason;
    const WitnessPair& wp = r.witnesses[0];
    EXPECT_FALSE(wp.float32_witness);
    EXPECT_EQ(wp.raw(0), 1.0);
    EXPECT_NE(wp.label, wp.label_prime);
    EXPECT_TRUE(replay_witness(t.model, t.schema, t.prot, wp.x, wp.x_prime).has_value());
  }
  // Quantified with the widest split (see the disabled test below for the default split).
  CompleteSearchOptions o = options_for(t);
  o.quantify = true;
  o.split = SplitRule::Widest;
  Env env = test::make_env("30", 1);
  const FairnessResult q = complete_search(test::problem_of(t), o, env);
  EXPECT_EQ(q.verdict, Verdict::Witness);
  EXPECT_TRUE(q.exhaustive);
  EXPECT_NEAR(q.share.certified, 0.75, 1e-12);  // a != 1
}

// Regression: with SplitRule::Score, a region that is a single point is decided exactly (it was
// once split into itself forever).
TEST(CompleteSearch, ScoreSplitDecidesSinglePoints) {
  {
    const Tiny t = below_float32();
    CompleteSearchOptions o = options_for(t);
    o.quantify = true;
    Env env = test::make_env("5", 1);
    const FairnessResult q = complete_search(test::problem_of(t), o, env);
    EXPECT_EQ(q.verdict, Verdict::Witness);
    EXPECT_TRUE(q.exhaustive) << "did not finish";
    EXPECT_NEAR(q.share.certified, 0.75, 1e-12);
    EXPECT_NEAR(q.share.falsified, 0.25, 1e-12);
    EXPECT_LT(q.stats.regions, 1000);
  }
  const Tiny t = on_threshold();
  Env env = test::make_env("5", 1);
  const FairnessResult r = complete_search(test::problem_of(t), options_for(t), env);
  EXPECT_EQ(r.verdict, Verdict::Verified) << r.reason;
  EXPECT_LT(r.stats.regions, 1000);
}

TEST(CompleteSearch, TimeLimitAndCancelGiveInconclusive) {
  const Tiny t = random_tiny(4);  // needs more than one region (without enumeration)
  ASSERT_EQ(brute_force(t).pairs, 0);
  CompleteSearchOptions split_only = options_for(t);
  split_only.enumerate_factor = 0.0;
  {
    Env env = test::make_env("30", 1);
    const FairnessResult r = complete_search(test::problem_of(t), split_only, env);
    ASSERT_EQ(r.verdict, Verdict::Verified);
    ASSERT_GT(r.stats.regions, 1);
  }
  {
    Env env = test::make_env("0.000001", 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const FairnessResult r = complete_search(test::problem_of(t), options_for(t), env);
    EXPECT_EQ(r.verdict, Verdict::Inconclusive);
    EXPECT_FALSE(r.exhaustive);
    EXPECT_NE(r.reason.find("time limit"), std::string::npos) << r.reason;
    EXPECT_LT(r.share.certified, 1.0);
    EXPECT_GT(r.share.undecided, 0.0);
  }
  {
    std::atomic<bool> cancel{true};
    CompleteSearchOptions o = options_for(t);
    o.cancel = &cancel;
    Env env = test::make_env("30", 2);
    const FairnessResult r = complete_search(test::problem_of(t), o, env);
    EXPECT_EQ(r.verdict, Verdict::Inconclusive);
    EXPECT_FALSE(r.exhaustive);
  }
}

TEST(CompleteSearch, UnsupportedModelsAndBadArguments) {
  const Schema s = schema_of(kBoolLast);
  const std::vector<int> prot = s.protected_indices();
  // A fair Tanh network (p has no weight): the complete engine refuses it, auto goes to dual.
  const Model m = tanh_inside(0.0);
  const FairnessProblem problem = FairnessProblem::of_features(m, s, prot);
  CompleteSearchOptions o;
  o.falsify_tests = 1LL << 12;
  {
    Env env = make_env();
    try {
      (void)complete_search(problem, o, env);
      ADD_FAILURE() << "no UnsupportedError";
    } catch (const UnsupportedError& e) {
      EXPECT_NE(std::string(e.what()).find("squash"), std::string::npos) << e.what();
    }
  }
  {
    Env env = make_env();
    const FairnessResult r = auto_search(problem, o, env);
    EXPECT_EQ(r.engine, "auto(dual)");
    EXPECT_EQ(r.phase, "dual");
    EXPECT_NE(r.verdict, Verdict::Witness);
    EXPECT_FALSE(r.share.measured);
  }
  const Tiny t = hand_made("rare");
  Env env = make_env();
  EXPECT_THROW((void)FairnessProblem::of_features(t.model, t.schema, {}), InputError);
  EXPECT_THROW((void)FairnessProblem::of_features(t.model, t.schema, {9}), InputError);
  EXPECT_THROW((void)FairnessProblem::of_features(t.model, t.schema, {t.prot[0], t.prot[0]}), InputError);
  const Schema other = schema_of(kOneHotFirst);  // 5 model inputs, the model reads 4
  const FairnessProblem mismatched(t.model, other, {});
  EXPECT_THROW((void)complete_search(mismatched, CompleteSearchOptions{}, env), InputError);
}

// Regression: bad protected features are an InputError from auto_search too (the side thread's
// error once escaped the std::thread and aborted the process).
TEST(AutoSearch, BadProtectedFeaturesAreInputErrors) {
  const Tiny t = hand_made("rare");
  Env env = make_env();
  CompleteSearchOptions o;
  o.falsify_tests = 1LL << 12;
  // A protected feature with a single value in the domain: no pair to compare.
  std::string toml = kBoolLast;
  toml.replace(toml.find(R"(kind = "boolean")"), 16, R"(kind = "integer", min = 1, max = 1)");
  const Schema single = parse_schema(toml, "single.toml");
  EXPECT_THROW((void)auto_search(FairnessProblem(t.model, single, {"p"}), o, env), InputError);
}

// ---------------------------------------------------------------------------------------------
// Fairify networks. Zeroing the protected inputs' first-layer weights makes a network fair by
// construction; the difference bound is then exactly 0 and the root region closes at once (and
// --check re-proves it with Z3).

Model zeroed(const Model& m, const Schema& s, const std::vector<int>& features) {
  std::vector<int> inputs;
  for (int f : features) {
    for (int k = 0; k < s.feature(f).model_width; ++k) inputs.push_back(s.feature(f).model_offset + k);
  }
  return zero_input_weights(m, inputs);
}

void check_zeroed_german(const std::string& name) {
  SCOPED_TRACE(name);
  const Model m = load_model(source_path("benchmarks/fairify/models/german/" + name + ".h5"));
  const Schema s = load_schema(source_path("benchmarks/fairify/german.toml"));
  const std::vector<int> prot = {s.feature_index("age"), s.feature_index("sex")};
  const Model fair = zeroed(m, s, prot);
  for (const std::vector<int>& p : {std::vector<int>{prot[0]}, std::vector<int>{prot[1]}, prot}) {
    CompleteSearchOptions o;
    o.check = true;
    Env env = test::make_env("120", 2);
    const FairnessResult r = complete_search(FairnessProblem::of_features(fair, s, p), o, env);
    EXPECT_EQ(r.verdict, Verdict::Verified) << r.reason;
    EXPECT_TRUE(r.exhaustive);
    EXPECT_EQ(r.share.certified, 1.0);
    EXPECT_GT(r.stats.checked, 0);
    EXPECT_EQ(r.stats.regions, 1);
  }
}

TEST(CompleteSearchFairify, ZeroedGC3IsVerifiedAndChecked) { check_zeroed_german("GC3"); }
TEST(CompleteSearchFairify, ZeroedGC5IsVerifiedAndChecked) { check_zeroed_german("GC5"); }

TEST(CompleteSearchFairify, AC1SexHasAWitnessThatReplays) {
  const Model m = load_model(source_path("benchmarks/fairify/models/adult/AC1.h5"));
  const Schema s = load_schema(source_path("benchmarks/fairify/adult.toml"));
  const std::vector<int> prot = {s.feature_index("sex")};
  const FairnessProblem problem(m, s, {"sex"});
  CompleteSearchOptions o;
  Env env = test::make_env("60", 2);
  const FairnessResult r = complete_search(problem, o, env);
  ASSERT_EQ(r.verdict, Verdict::Witness) << r.reason;
  const WitnessPair& w = r.witnesses[0];
  const auto again = replay_witness(m, s, prot, w.x, w.x_prime);
  ASSERT_TRUE(again.has_value());
  EXPECT_TRUE(again->raw == w.raw);
  EXPECT_TRUE(again->raw_prime == w.raw_prime);
  EXPECT_NE(w.label, w.label_prime);
  EXPECT_TRUE(s.contains(w.raw));
  EXPECT_TRUE(s.contains(w.raw_prime));
  for (int f = 0; f < s.size(); ++f) {
    if (f != prot[0]) {
      EXPECT_EQ(w.raw(f), w.raw_prime(f)) << s.feature(f).name;
    }
  }
  EXPECT_NE(w.raw(prot[0]), w.raw_prime(prot[0]));
  Env env2 = test::make_env("60", 2);
  o.falsify_tests = 1LL << 12;
  const FairnessResult a = auto_search(problem, o, env2);
  ASSERT_EQ(a.verdict, Verdict::Witness) << a.reason;
  EXPECT_EQ(a.engine, "auto");
  EXPECT_TRUE(replay_witness(m, s, prot, a.witnesses[0].x, a.witnesses[0].x_prime).has_value());
}

// The same command shows the same person: falsification's outcome within its test budget, not
// which thread ends first, decides the answer (AC4 sex and GC5 sex once changed phase and witness
// from run to run), and the complete engine's threads hunt in rounds (GC5 sex: its phase).
TEST(AutoSearch, TheSameRunShowsTheSameWitness) {
  for (const auto& [file, schema_file, attribute] :
       {std::tuple{"adult/AC4.h5", "adult.toml", "sex"}, std::tuple{"german/GC5.h5", "german.toml", "sex"}}) {
    const Model m = load_model(source_path(std::string("benchmarks/fairify/models/") + file));
    const Schema s = load_schema(source_path(std::string("benchmarks/fairify/") + schema_file));
    const FairnessProblem problem(m, s, {attribute});
    CompleteSearchOptions o;
    o.max_witnesses = 2;
    for (unsigned threads : {1U, 2U, 3U}) {
      SCOPED_TRACE(std::string(file) + " threads " + std::to_string(threads));
      std::vector<FairnessResult> runs;
      for (int k = 0; k < 3; ++k) {
        Env env = test::make_env("60", threads);
        runs.push_back(auto_search(problem, o, env));
        ASSERT_EQ(runs.back().verdict, Verdict::Witness) << runs.back().reason;
      }
      for (const FairnessResult& r : runs) {
        EXPECT_EQ(r.phase, runs[0].phase);
        // (Falsification cancels the complete engine wherever it has got to.)
        if (r.phase == "complete") {
          EXPECT_EQ(r.stats.leaves, runs[0].stats.leaves);
        }
        ASSERT_EQ(r.witnesses.size(), runs[0].witnesses.size());
        for (std::size_t i = 0; i < r.witnesses.size(); ++i) {
          EXPECT_TRUE(r.witnesses[i].raw == runs[0].witnesses[i].raw);
          EXPECT_TRUE(r.witnesses[i].raw_prime == runs[0].witnesses[i].raw_prime);
        }
      }
    }
  }
}

}  // namespace
}  // namespace witness::test
