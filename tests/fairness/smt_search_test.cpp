#include "fairness/smt_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/env.h"
#include "core/error.h"
#include "domain/schema.h"
#include "fairness/transform.h"
#include "model/loaders.h"
#include "support/paths.h"
#include "support/tiny_networks.h"

namespace witness::test {
namespace {

// smt_search agrees with brute force: a replayed witness that brute force knows, or Verified.
void check_smt(const Tiny& t) {
  SCOPED_TRACE(t.name);
  const Truth truth = brute_force(t);
  Env env = make_env();
  const FairnessResult r = smt_search(test::problem_of(t), env);
  EXPECT_EQ(r.engine, "smt");
  EXPECT_EQ(r.stats.sat + r.stats.unsat + r.stats.unknown, 1);
  EXPECT_EQ(r.stats.unknown, 0);
  EXPECT_EQ(r.stats.rejected, 0);
  EXPECT_EQ(r.stats.tests, r.stats.sat);
  EXPECT_GE(r.stats.seconds, 0.0);
  ASSERT_NO_FATAL_FAILURE(expect_first_answer(t, truth, r));
  if (truth.pairs > 0) {
    EXPECT_FALSE(r.exhaustive);
  } else {
    EXPECT_EQ(r.stats.unsat, 1);
  }
}

// Like random_tiny, with three logits and an argmax rule behind a Softmax. Output k's bias
// carries (k + 1) * 2^-14, so no two logits ever tie.
Tiny argmax_tiny(int i) {
  Tiny t;
  t.schema = schema_of(kSchemas[i % 4]);
  t.prot = t.schema.protected_indices();
  t.name = "argmax" + std::to_string(i);
  std::mt19937_64 rng(5000 + static_cast<std::uint64_t>(i));
  std::uniform_int_distribution<int> eighths(-8, 8);
  auto draw = [&](int rows, int cols) {
    Eigen::MatrixXd w(rows, cols);
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < cols; ++c) w(r, c) = eighths(rng) / 8.0;
    }
    return w;
  };
  ModelBuilder b(t.name, t.schema.model_input_names());
  const int hidden = 3 + i % 2;
  const int h = b.relu(b.dense(b.input(), draw(hidden, t.schema.model_width()), draw(hidden, 1).col(0)));
  Eigen::VectorXd bias = draw(3, 1).col(0);
  for (int k = 0; k < 3; ++k) bias[k] += (k + 1) * kOffset;
  const int z = b.dense(h, draw(3, hidden), bias);
  t.model = b.finish(b.unary(OpKind::Softmax, z), DecisionRule::argmax_of(z));
  return t;
}

TEST(SmtSearch, AgreesWithBruteForceOnRandomNetworks) {
  for (int i = 0; i < 30; ++i) check_smt(random_tiny(i));
}

TEST(SmtSearch, AgreesWithBruteForceOnHandMadeNetworks) {
  for (const char* which : {"zero_weight", "small_weight", "label_is_p", "rare"}) check_smt(hand_made(which));
}

TEST(SmtSearch, AgreesWithBruteForceOnArgMaxNetworks) {
  int fair = 0;
  for (int i = 0; i < 12; ++i) {
    const Tiny t = argmax_tiny(i);
    fair += brute_force(t).pairs == 0 ? 1 : 0;
    check_smt(t);
  }
  EXPECT_LT(fair, 12);  // the family is not all fair
}

// ---------------------------------------------------------------------------------------------
// check_region against brute force: Sat iff some witness pair has protected values p / p' and its
// non-protected values inside [lo, hi].

bool region_has_witness(const Tiny& t, const Truth& truth, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi,
                        const Eigen::VectorXd& p, const Eigen::VectorXd& pp) {
  std::vector<bool> is_prot(static_cast<std::size_t>(t.schema.size()), false);
  for (int f : t.prot) is_prot[static_cast<std::size_t>(f)] = true;
  for (const auto& [a, b] : truth.witnesses) {
    bool inside = true;
    for (std::size_t k = 0; k < t.prot.size() && inside; ++k) {
      const auto f = static_cast<std::size_t>(t.prot[k]);
      inside = a[f] == p[static_cast<Eigen::Index>(k)] && b[f] == pp[static_cast<Eigen::Index>(k)];
    }
    for (int f = 0; f < t.schema.size() && inside; ++f) {
      if (!is_prot[static_cast<std::size_t>(f)])
        inside = a[static_cast<std::size_t>(f)] >= lo[f] && a[static_cast<std::size_t>(f)] <= hi[f];
    }
    if (inside) return true;
  }
  return false;
}

// Every combination of protected values, [protected][n].
Eigen::MatrixXd protected_values(const Tiny& t) {
  long long n = 1;
  for (int f : t.prot) n *= static_cast<long long>(t.schema.feature(f).max - t.schema.feature(f).min + 1);
  Eigen::MatrixXd out(static_cast<Eigen::Index>(t.prot.size()), n);
  for (long long j = 0; j < n; ++j) {
    long long rest = j;
    for (std::size_t k = 0; k < t.prot.size(); ++k) {
      const Feature& f = t.schema.feature(t.prot[k]);
      const auto count = static_cast<long long>(f.max - f.min + 1);
      out(static_cast<Eigen::Index>(k), j) = f.min + static_cast<double>(rest % count);
      rest /= count;
    }
  }
  return out;
}

// check_region on the whole domain and `boxes_per_pair` random boxes (bounds off the integers too)
// for each of at most `max_pairs` pairs (p, p') of protected values, p = p' included; 0: every pair.
void check_regions(const Tiny& t, std::uint64_t seed, int boxes_per_pair, std::size_t max_pairs, int& sat, int& unsat) {
  SCOPED_TRACE(t.name);
  const Truth truth = brute_force(t);
  const Eigen::MatrixXd pv = protected_values(t);
  std::mt19937_64 rng(seed);
  std::vector<std::pair<Eigen::Index, Eigen::Index>> pairs;
  for (Eigen::Index i = 0; i < pv.cols(); ++i) {
    for (Eigen::Index j = 0; j < pv.cols(); ++j) pairs.emplace_back(i, j);
  }
  std::shuffle(pairs.begin(), pairs.end(), rng);
  if (max_pairs > 0 && pairs.size() > max_pairs) pairs.resize(max_pairs);
  const int n = t.schema.size();
  Eigen::VectorXd full_lo(n);
  Eigen::VectorXd full_hi(n);
  for (int f = 0; f < n; ++f) {
    full_lo[f] = t.schema.feature(f).min;
    full_hi[f] = t.schema.feature(f).max;
  }
  for (const auto& [i, j] : pairs) {
    const Eigen::VectorXd p = pv.col(i);
    const Eigen::VectorXd pp = pv.col(j);
    for (int box = 0; box <= boxes_per_pair; ++box) {
      Eigen::VectorXd lo = full_lo;
      Eigen::VectorXd hi = full_hi;
      if (box > 0) {  // box 0: the whole domain
        for (int f = 0; f < n; ++f) {
          std::uniform_real_distribution<double> u(full_lo[f] - 0.5, full_hi[f] + 0.5);
          const double a = u(rng);
          const double b = u(rng);
          lo[f] = std::min(a, b);
          hi[f] = std::max(a, b);
        }
      }
      const bool expected = region_has_witness(t, truth, lo, hi, p, pp);
      if (i == j) {
        EXPECT_FALSE(expected);
      }
      const CheckResult r = check_region(t.model, t.schema, t.prot, lo, hi, p, pp, 30.0);
      ASSERT_NE(r, CheckResult::Unknown);
      EXPECT_EQ(r == CheckResult::Sat, expected) << "p " << p.transpose() << " p' " << pp.transpose() << " box ["
                                                 << lo.transpose() << "] .. [" << hi.transpose() << "]";
      (r == CheckResult::Sat ? sat : unsat) += 1;
    }
  }
}

// Each call builds a Z3 context (about 20 ms): the fast test samples pairs, the slow one takes all.
TEST(CheckRegion, AgreesWithBruteForce) {
  int sat = 0;
  int unsat = 0;
  for (int i : {0, 1, 2, 3, 6}) check_regions(random_tiny(i), 77 + static_cast<std::uint64_t>(i), 2, 5, sat, unsat);
  check_regions(argmax_tiny(1), 5, 2, 5, sat, unsat);
  EXPECT_GT(sat, 5);
  EXPECT_GT(unsat, 5);
}

TEST(CheckRegion, AgreesWithBruteForceEveryPairSlow) {
  int sat = 0;
  int unsat = 0;
  for (int i = 0; i < 30; ++i) check_regions(random_tiny(i), 77 + static_cast<std::uint64_t>(i), 2, 0, sat, unsat);
  for (int i = 0; i < 12; ++i) check_regions(argmax_tiny(i), 500 + static_cast<std::uint64_t>(i), 2, 0, sat, unsat);
  EXPECT_GT(sat, 100);
  EXPECT_GT(unsat, 100);
}

TEST(CheckRegion, HandMadeRare) {
  // label = [a + b + p > 6.5]: the only witnesses have a = b = 3 (any c).
  const Tiny t = hand_made("rare");
  Eigen::VectorXd p(1);
  Eigen::VectorXd pp(1);
  p << 0;
  pp << 1;
  Eigen::VectorXd lo(4);
  Eigen::VectorXd hi(4);
  lo << 0, 0, 0, 0;
  hi << 2, 3, 2, 1;  // a <= 2: fair
  EXPECT_EQ(check_region(t.model, t.schema, t.prot, lo, hi, p, pp, 10.0), CheckResult::Unsat);
  EXPECT_EQ(check_region(t.model, t.schema, t.prot, lo, hi, pp, p, 10.0), CheckResult::Unsat);
  hi << 2.9, 3, 2, 1;  // fractional bounds of an integer feature
  EXPECT_EQ(check_region(t.model, t.schema, t.prot, lo, hi, p, pp, 10.0), CheckResult::Unsat);
  lo << 3, 3, 1, -5;  // the protected entries are ignored
  hi << 3, 3, 1, -5;
  EXPECT_EQ(check_region(t.model, t.schema, t.prot, lo, hi, p, pp, 10.0), CheckResult::Sat);
  EXPECT_EQ(check_region(t.model, t.schema, t.prot, lo, hi, pp, p, 0.0), CheckResult::Sat);    // no time limit
  EXPECT_EQ(check_region(t.model, t.schema, t.prot, lo, hi, p, p, 10.0), CheckResult::Unsat);  // p = p'
  // A box reaching outside the domain is cut to it; infinite bounds are no bounds.
  lo << -100, 2.5, -std::numeric_limits<double>::infinity(), 0;
  hi << 100, std::numeric_limits<double>::infinity(), 100, 0;
  EXPECT_EQ(check_region(t.model, t.schema, t.prot, lo, hi, p, pp, 10.0), CheckResult::Sat);
  // An empty box, or a protected value outside the domain: nothing to find.
  lo << 3, 3, 2, 0;
  hi << 3, 3, 1, 0;
  EXPECT_EQ(check_region(t.model, t.schema, t.prot, lo, hi, p, pp, 10.0), CheckResult::Unsat);
  lo << 3, 3, 0, 0;
  hi << 3, 3, 2, 0;
  pp << 2;
  EXPECT_EQ(check_region(t.model, t.schema, t.prot, lo, hi, p, pp, 10.0), CheckResult::Unsat);
  // Wrong sizes are caller bugs.
  EXPECT_THROW((void)check_region(t.model, t.schema, t.prot, lo.head(3), hi, p, pp, 10.0), InternalError);
  EXPECT_THROW((void)check_region(t.model, t.schema, t.prot, lo, hi, Eigen::VectorXd(2), pp, 10.0), InternalError);
}

// ---------------------------------------------------------------------------------------------

TEST(SmtSearch, UnsupportedModelsAndBadArguments) {
  const Schema s = schema_of(kBoolLast);
  const std::vector<int> prot = s.protected_indices();
  {  // a Sigmoid below the rule's node
    ModelBuilder b("sigmoid_inside", s.model_input_names());
    const int h = b.sigmoid(b.dense(b.input(), Eigen::MatrixXd::Ones(2, 4), Eigen::VectorXd::Zero(2)), "squash");
    const int z = b.dense(h, Eigen::MatrixXd::Ones(1, 2), Eigen::VectorXd::Zero(1));
    const Model m = b.finish(z, DecisionRule::threshold_on(z, 0.0));
    Env env = make_env();
    try {
      (void)smt_search(FairnessProblem::of_features(m, s, prot), env);
      ADD_FAILURE() << "no UnsupportedError";
    } catch (const UnsupportedError& e) {
      EXPECT_NE(std::string(e.what()).find("node 'squash' is Sigmoid"), std::string::npos) << e.what();
    }
  }
  {  // a Direct rule
    ModelBuilder b("direct", s.model_input_names());
    const int z = b.dense(b.input(), Eigen::MatrixXd::Ones(1, 4), Eigen::VectorXd::Zero(1));
    const Model m = b.finish(z, DecisionRule::direct(z));
    Env env = make_env();
    EXPECT_THROW((void)smt_search(FairnessProblem::of_features(m, s, prot), env), UnsupportedError);
  }
  const Tiny t = hand_made("rare");
  Env env = make_env();
  const Schema other = schema_of(kOneHotFirst);  // 5 model inputs, the model reads 4
  EXPECT_THROW((void)smt_search(FairnessProblem::of_features(t.model, other, {0}), env), InputError);
}

TEST(SmtSearch, TimeLimitGivesInconclusive) {
  const Tiny t = hand_made("small_weight");
  Env env = make_env("0.000001");
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const FairnessResult r = smt_search(test::problem_of(t), env);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive);
  EXPECT_FALSE(r.exhaustive);
  EXPECT_NE(r.reason.find("time limit"), std::string::npos) << r.reason;
}

// A Fairify network with the protected input's first-layer weights zeroed is fair by construction;
// both copies then share every pre-activation, which Z3 sees at once.
TEST(SmtSearchFairify, ZeroedGC4AgeIsVerified) {
  const Model m = load_model(source_path("benchmarks/fairify/models/german/GC4.h5"));
  const Schema s = load_schema(source_path("benchmarks/fairify/german.toml"));
  const int f = s.feature_index("age");
  std::vector<int> inputs;
  inputs.reserve(static_cast<std::size_t>(s.feature(f).model_width));
  for (int k = 0; k < s.feature(f).model_width; ++k) inputs.push_back(s.feature(f).model_offset + k);
  const Model fair = zero_input_weights(m, inputs);
  Env env = make_env("120");
  const FairnessResult r = smt_search(FairnessProblem(fair, s, {"age"}), env);
  EXPECT_EQ(r.verdict, Verdict::Verified) << r.reason;
  EXPECT_TRUE(r.exhaustive);
  EXPECT_EQ(r.stats.unsat, 1);
}

}  // namespace
}  // namespace witness::test
