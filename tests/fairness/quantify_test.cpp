// Quantified fairness (complete_search with quantify): exact counts against brute force, the
// regions that say for whom, sound shares when a run stops early, data rows, and the defects that a
// new user found (shares over 100% with --max-witnesses, float32 wording).
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <map>
#include <random>
#include <set>

#include "fairness/complete/complete_search.h"
#include "fairness/row_audit.h"
#include "support/sanitized.h"
#include "support/tiny_networks.h"

namespace witness {
namespace {

using test::Tiny;

Tiny medium(std::uint64_t seed) { return test::medium_tiny(seed); }

using PointTruth = std::map<std::vector<double>, bool>;  // test::unfair_points: point (protected at min) -> unfair

void expect_exact(const Tiny& t, const PointTruth& truth, const CompleteSearchOptions& o, unsigned threads) {
  SCOPED_TRACE(t.name + " threads " + std::to_string(threads) + " enumerate " + std::to_string(o.enumerate_factor));
  long long unfair = 0;
  for (const auto& [key, u] : truth) unfair += u ? 1 : 0;
  Env env = test::make_env("60", threads);
  const FairnessResult r = complete_search(test::problem_of(t), o, env);
  ASSERT_TRUE(r.share.measured);
  EXPECT_TRUE(r.share.exact) << r.reason;
  EXPECT_EQ(r.share.undecided, 0.0);
  EXPECT_EQ(static_cast<double>(r.share.points), static_cast<double>(truth.size()));
  EXPECT_EQ(static_cast<long long>(r.share.falsified_points), unfair);
  EXPECT_EQ(r.share.falsified, static_cast<double>(unfair) / static_cast<double>(truth.size()));
  EXPECT_EQ(r.share.certified + r.share.falsified, 1.0);
  EXPECT_EQ(r.verdict, unfair > 0 ? Verdict::Witness : Verdict::Verified);
  // The regions: all-falsified boxes hold only unfair points, and together with the partly
  // falsified ones they account for the whole falsified share (nothing is truncated here).
  double reported = 0.0;
  std::vector<const RegionReport*> all_falsified;
  for (const RegionReport& g : r.regions) {
    reported += g.falsified;
    EXPECT_EQ(g.undecided, 0.0);
    if (g.all_falsified) all_falsified.push_back(&g);
  }
  const auto inside = [&](const std::vector<double>& key, const RegionReport& g) {
    for (int f = 0; f < t.schema.size(); ++f) {
      const double v = key[static_cast<std::size_t>(f)];
      const bool is_protected = std::find(t.prot.begin(), t.prot.end(), f) != t.prot.end();
      if (!is_protected && (v < g.lo(f) || v > g.hi(f))) return false;
    }
    return true;
  };
  for (const auto& [key, u] : truth) {
    if (u) continue;
    for (const RegionReport* g : all_falsified) {
      EXPECT_FALSE(inside(key, *g)) << "a fair point inside a falsified box: " << region_rule(t.schema, *g, t.prot);
    }
  }
  EXPECT_NEAR(reported, r.share.falsified, 1e-12);
  // marginals are exact: the unfair points per value of each feature, summed over each bin.
  if (unfair == 0) return;
  std::vector<std::map<double, long double>> unfair_at(static_cast<std::size_t>(t.schema.size()));
  for (const auto& [key, u] : truth) {
    if (!u) continue;
    for (std::size_t f = 0; f < unfair_at.size(); ++f) unfair_at[f][key[f]] += 1.0L;
  }
  ASSERT_EQ(r.marginals.size(), static_cast<std::size_t>(t.schema.size()) - t.prot.size());
  for (const FeatureMarginal& m : r.marginals) {
    const auto& at = unfair_at[static_cast<std::size_t>(m.feature)];
    double total = 0.0, domain = 0.0;
    for (std::size_t b = 0; b < m.lo.size(); ++b) {
      long double count = 0.0L;
      for (auto v = at.lower_bound(m.lo[b]); v != at.end() && v->first <= m.hi[b]; ++v) count += v->second;
      EXPECT_NEAR(m.falsified[b], static_cast<double>(count / unfair), 1e-12) << "feature " << m.feature;
      total += m.falsified[b];
      domain += m.domain[b];
    }
    EXPECT_NEAR(total, 1.0, 1e-12);
    EXPECT_NEAR(domain, 1.0, 1e-12);
  }
}

void expect_exact(const Tiny& t, const CompleteSearchOptions& o, unsigned threads) {
  expect_exact(t, test::unfair_points(t), o, threads);
}

// A linear model (a logistic regression's logit) on 1.3 million integer points: the engine's count
// is exact and equals brute force (met in the middle, ties decided in exact arithmetic), and so do
// its marginals (the unfair points per value of each feature: for whom).
TEST(Quantify, LinearModelOnAMillionPointDomainIsCountedExactly) {
  const Schema s = parse_schema(R"(
name = "linear"
protected = ["p"]
features = [
  { name = "a", kind = "integer", min = 0, max = 100 },
  { name = "b", kind = "integer", min = -50, max = 50 },
  { name = "c", kind = "integer", min = 0, max = 30 },
  { name = "k", kind = "categorical", categories = ["u", "v", "w", "x"], encoding = "one-hot" },
  { name = "p", kind = "boolean" },
]
)",
                                "linear.toml");
  // Model inputs: a, b, c, k as four one-hot columns, p. Seed 0: weights in eighths with no offset,
  // so that the logit is exactly 0 at many points (ties, decided in exact arithmetic: class 0).
  for (std::uint64_t seed : test::sampled(std::vector<std::uint64_t>{0, 8, 3}, 2)) {  // 0 and 3 under the sanitizers
    Model m;
    if (seed == 0) {
      ModelBuilder mb("ties", s.model_input_names());
      Eigen::MatrixXd w(1, s.model_width());
      w << 0.125, -0.125, 0.25, 0.0, 0.5, -0.25, 0.375, 0.625;
      const int z = mb.dense(mb.input(), w, Eigen::VectorXd::Constant(1, -1.0));
      m = mb.finish(z, DecisionRule::threshold_on(z, 0.0));
    } else {
      m = test::random_net("linear" + std::to_string(seed), s, s.protected_indices(), {}, seed, 1.0, 0.0);
    }
    // Brute force, a million points at a time: unfair where the two values of p disagree.
    long long unfair = 0, points = 0;
    std::vector<std::vector<long long>> by_value(4);  // per feature a, b, c, k: unfair points at min + v
    for (int f = 0; f < 4; ++f)
      by_value[static_cast<std::size_t>(f)].assign(static_cast<std::size_t>(s.feature(f).max - s.feature(f).min + 1.0),
                                                   0);
    const int p = s.feature_index("p");
    Eigen::MatrixXd raw(s.size(), 1 << 20);
    Eigen::Index n = 0;
    auto flush = [&] {
      Eigen::MatrixXd r0 = raw.leftCols(n), r1 = r0;
      r0.row(p).setZero();
      r1.row(p).setOnes();
      const Evaluation e0 = evaluate(m, s.to_model_columns(r0)), e1 = evaluate(m, s.to_model_columns(r1));
      for (Eigen::Index j = 0; j < n; ++j) {
        if (e0.labels[static_cast<std::size_t>(j)] == e1.labels[static_cast<std::size_t>(j)]) continue;
        ++unfair;
        for (int f = 0; f < 4; ++f)
          ++by_value[static_cast<std::size_t>(f)][static_cast<std::size_t>(r0(f, j) - s.feature(f).min)];
      }
      points += n;
      n = 0;
    };
    for (int a = 0; a <= 100; ++a)
      for (int b = -50; b <= 50; ++b)
        for (int c = 0; c <= 30; ++c)
          for (int k = 0; k < 4; ++k) {
            raw.col(n++) << a, b, c, k, 0.0;
            if (n == raw.cols()) flush();
          }
    flush();
    // The whole box in two halves; and halves of 256 sums, the rest (31 x 4 values) swept outer.
    for (const std::size_t half : {std::size_t{1} << 23, std::size_t{256}}) {
      CompleteSearchOptions o;
      o.quantify = true;
      o.lattice_half_sums = half;
      Env env = test::make_env("60");
      const FairnessResult r = complete_search(FairnessProblem(m, s, {}), o, env);
      EXPECT_TRUE(r.share.exact) << seed << ": " << r.reason;
      EXPECT_EQ(static_cast<long long>(r.share.points), points);
      EXPECT_EQ(static_cast<long long>(r.share.falsified_points), unfair) << seed << ", halves of " << half;
      EXPECT_GT(unfair, 0) << seed;
      EXPECT_EQ(r.witnesses.size(), 1U) << seed;  // a surely unfair point of the count, replayed
      ASSERT_EQ(r.marginals.size(), 4U);
      for (const FeatureMarginal& fm : r.marginals)
        for (std::size_t bin = 0; bin < fm.lo.size(); ++bin) {
          long long count = 0;
          for (auto v = static_cast<long long>(fm.lo[bin]); v <= static_cast<long long>(fm.hi[bin]); ++v)
            count += by_value[static_cast<std::size_t>(fm.feature)]
                             [static_cast<std::size_t>(v - static_cast<long long>(s.feature(fm.feature).min))];
          EXPECT_NEAR(fm.falsified[bin], static_cast<double>(count) / static_cast<double>(unfair), 1e-12)
              << seed << ", halves of " << half << ", feature " << fm.feature << " bin " << bin;
        }
      std::cout << "seed " << seed << ", halves of " << half << ": " << unfair << " unfair of " << points
                << " points, exact in " << r.stats.seconds << " s, " << r.stats.regions << " regions\n";
    }
  }
}

TEST(Quantify, ExactCountsMatchBruteForce) {
  for (int i = 0; i < 16; ++i) {
    const Tiny t = test::random_tiny(i);
    CompleteSearchOptions o;
    o.quantify = true;
    o.max_regions = 100000;
    expect_exact(t, o, 1 + static_cast<unsigned>(i % 2));
    o.enumerate_factor = 0.0;  // bounds, counting and single points only
    expect_exact(t, o, 2 - static_cast<unsigned>(i % 2));
    o.hidden_bounds = CompleteSearchOptions::HiddenBounds::Forward;  // the wide networks' bounds
    expect_exact(t, o, 1);
  }
}

TEST(Quantify, ExactCountsOnAMediumDomain) {
  const Tiny t = medium(7);
  const PointTruth truth = test::unfair_points(t);
  CompleteSearchOptions o;
  o.quantify = true;
  o.max_regions = 1000000;
  // Under the sanitizers only the bounds-and-counting run (ExactCountsMatchBruteForce enumerates).
  if (!test::kSanitized) expect_exact(t, truth, o, 2);
  o.enumerate_factor = 0.0;
  o.hidden_bounds = CompleteSearchOptions::HiddenBounds::Forward;
  expect_exact(t, truth, o, 2);
}

// However a run is cut short, the certified and falsified shares are lower bounds of the truth and
// the three shares add up to 1: here the queue holds at most 64 regions and the rest stay open, so
// the shares come from regions closed by bounds, enumerated, and counted in open regions.
TEST(Quantify, SharesOfAnUnfinishedRunAreSound) {
  for (std::uint64_t seed : test::sampled(std::vector<std::uint64_t>{3, 7, 11}, 2)) {
    const Tiny t = medium(seed);
    const auto truth = test::unfair_points(t);
    double unfair = 0.0;
    for (const auto& [key, u] : truth) unfair += u ? 1.0 : 0.0;
    unfair /= static_cast<double>(truth.size());
    for (double factor : {0.0, 16.0}) {
      SCOPED_TRACE(t.name + " enumerate " + std::to_string(factor));
      CompleteSearchOptions o;
      o.quantify = true;
      o.enumerate_factor = factor;
      o.max_open_regions = 64;
      Env env = test::make_env("60", 1);
      const FairnessResult r = complete_search(test::problem_of(t), o, env);
      EXPECT_LE(r.share.certified, 1.0 - unfair + 1e-12);
      EXPECT_LE(r.share.falsified, unfair + 1e-12);
      EXPECT_NEAR(r.share.certified + r.share.falsified + r.share.undecided, 1.0, 1e-12);
      EXPECT_GE(r.share.undecided, 0.0);
      double reported_falsified = 0.0;
      for (const RegionReport& g : r.regions) reported_falsified += g.falsified;
      EXPECT_LE(reported_falsified, r.share.falsified + 1e-12);
    }
  }
}

// Counting alone (no enumeration, a queue of a few regions) on many networks: whatever decides a
// share (each copy's own linear bounds, their differences, both as one linear function), the
// certified and falsified shares stay below the brute-force truth.
TEST(Quantify, CountedSharesAreSoundOnManyNetworks) {
  int counted = 0;
  const std::uint64_t networks = test::sized(24, 5);
  for (std::uint64_t seed = 20; seed < 20 + networks; ++seed) {
    const Tiny t = medium(seed);
    const auto truth = test::unfair_points(t);
    double unfair = 0.0;
    for (const auto& [key, u] : truth) unfair += u ? 1.0 : 0.0;
    unfair /= static_cast<double>(truth.size());
    for (const std::size_t open : {std::size_t{4}, std::size_t{32}}) {
      SCOPED_TRACE(t.name + " open " + std::to_string(open));
      CompleteSearchOptions o;
      o.quantify = true;
      o.enumerate_factor = 0.0;
      o.max_open_regions = open;
      Env env = test::make_env("60", 1);
      const FairnessResult r = complete_search(test::problem_of(t), o, env);
      EXPECT_LE(r.share.certified, 1.0 - unfair + 1e-12);
      EXPECT_LE(r.share.falsified, unfair + 1e-12);
      EXPECT_NEAR(r.share.certified + r.share.falsified + r.share.undecided, 1.0, 1e-12);
      counted += env.stats.get("complete.counted_regions") > 0 ? 1 : 0;
    }
  }
  EXPECT_GT(counted, static_cast<int>(networks));  // the counts decided something in most runs
}

TEST(Quantify, TimeLimitLeavesSoundShares) {
  const Tiny t = medium(5);
  const auto truth = test::unfair_points(t);
  double unfair = 0.0;
  for (const auto& [key, u] : truth) unfair += u ? 1.0 : 0.0;
  unfair /= static_cast<double>(truth.size());
  CompleteSearchOptions o;
  o.quantify = true;
  o.enumerate_factor = 0.0;
  Env env = test::make_env("0.02", 2);
  const auto start = std::chrono::steady_clock::now();
  const FairnessResult r = complete_search(test::problem_of(t), o, env);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  EXPECT_LE(r.share.certified, 1.0 - unfair + 1e-12);
  EXPECT_LE(r.share.falsified, unfair + 1e-12);
  EXPECT_NEAR(r.share.certified + r.share.falsified + r.share.undecided, 1.0, 1e-12);
  if (r.share.undecided > 0.0) {
    EXPECT_FALSE(r.exhaustive);
    EXPECT_NE(r.reason.find("time limit"), std::string::npos) << r.reason;
  }
}

TEST(Quantify, DataRowsAgainstBruteForce) {
  for (int i = 0; i < 8; ++i) {
    const Tiny t = test::random_tiny(i);
    const Eigen::MatrixXd raw = test::domain_points(t.schema);
    const auto truth = test::unfair_points(t);
    long long unfair = 0;
    for (Eigen::Index j = 0; j < raw.cols(); ++j) {
      Eigen::VectorXd key = raw.col(j);
      for (int f : t.prot) key(f) = t.schema.feature(f).min;
      unfair += truth.at(test::row(key)) ? 1 : 0;
    }
    const DataShare d =
        data_share(audit_rows(test::problem_of(t), raw, resolve_outcome(t.model, t.schema, ""), "all.csv"));
    EXPECT_TRUE(d.measured);
    EXPECT_EQ(d.rows, raw.cols());
    EXPECT_EQ(d.unfair, unfair) << t.name;
  }
}

// --max-witnesses without --quantify: as many witnesses as asked for, on distinct individuals,
// when there are that many, and shares that stay within [0, 1] and add up to 1.
TEST(Quantify, ManyWitnessesKeepSharesWithinTheDomain) {
  int checked = 0;
  for (int i = 0; i < 19; ++i) {
    const Tiny t = i < 16 ? test::random_tiny(i) : medium(static_cast<std::uint64_t>(i));
    const auto truth = test::unfair_points(t);
    std::size_t unfair = 0;
    for (const auto& [key, u] : truth) unfair += u ? 1 : 0;
    if (unfair < 2) continue;
    ++checked;
    CompleteSearchOptions o;
    o.max_witnesses = 5;
    Env env = test::make_env("60", 1);
    const FairnessResult r = complete_search(test::problem_of(t), o, env);
    ASSERT_EQ(r.verdict, Verdict::Witness);
    std::set<std::vector<double>> individuals;
    for (const WitnessPair& w : r.witnesses) {
      Eigen::VectorXd key = w.raw;
      for (int f : t.prot) key(f) = t.schema.feature(f).min;
      individuals.insert(test::row(key));
    }
    EXPECT_EQ(individuals.size(), r.witnesses.size()) << t.name;
    EXPECT_EQ(r.witnesses.size(), std::min<std::size_t>(5, unfair)) << t.name;
    EXPECT_LE(r.share.certified + r.share.falsified, 1.0);
    EXPECT_NEAR(r.share.certified + r.share.falsified + r.share.undecided, 1.0, 1e-12);
  }
  EXPECT_GE(checked, 3);
}

// A witness whose logits sit below float32's resolution of the threshold says so.
TEST(Quantify, Float32WithinRoundingIsReported) {
  const Tiny t = test::below_float32();
  CompleteSearchOptions o;
  Env env = test::make_env("60", 1);
  const FairnessResult r = complete_search(test::problem_of(t), o, env);
  ASSERT_EQ(r.verdict, Verdict::Witness);
  EXPECT_TRUE(r.witnesses[0].float32_within_rounding);
  EXPECT_FALSE(r.witnesses[0].float32_witness);
  Tiny clear = test::linear_bool_last("clear", 0.5);  // label = [a + p/2 - 5/4 > 0]: margins of 1/4
  {
    ModelBuilder b("clear", clear.schema.model_input_names());
    Eigen::MatrixXd w(1, 4);
    w << 1, 0, 0, 0.5;
    const int z = b.dense(b.input(), w, Eigen::VectorXd::Constant(1, -1.25));
    clear.model = b.finish(b.sigmoid(z), DecisionRule::threshold_on(z, 0.0));
  }
  const FairnessResult c = complete_search(test::problem_of(clear), o, env);
  ASSERT_EQ(c.verdict, Verdict::Witness);
  EXPECT_FALSE(c.witnesses[0].float32_within_rounding);
  EXPECT_TRUE(c.witnesses[0].float32_witness);
}

TEST(Quantify, RegionRulesNameTheRestrictedFeatures) {
  const Schema s = parse_schema(R"(
name = "rules"
features = [
  { name = "age", kind = "integer", min = 0, max = 99 },
  { name = "job", kind = "categorical", categories = ["a b", "c", "d", "e", "f", "g"] },
  { name = "sex", kind = "categorical", categories = ["F", "M"] },
  { name = "x", kind = "real", min = 0, max = 1 },
]
)",
                                "rules.toml");
  RegionReport g;
  g.lo = Eigen::Vector4d(20, 0, 0, 0);
  g.hi = Eigen::Vector4d(29, 1, 1, 1);
  EXPECT_EQ(region_rule(s, g, {2}), "age 20..29, job in {\"a b\", c}");
  g.lo = Eigen::Vector4d(0, 1, 0, 0.25);
  g.hi = Eigen::Vector4d(99, 5, 1, 0.5);
  EXPECT_EQ(region_rule(s, g, {2}), "job in {c, d, e, f, g}, x in [0.25, 0.5]");
  // Real bounds are rounded outward to 4 significant digits: the rule still covers the region.
  g.lo(3) = 0.123456789;
  g.hi(3) = 0.987654321;
  EXPECT_EQ(region_rule(s, g, {2}), "job in {c, d, e, f, g}, x in [0.1234, 0.9877]");
  g.lo(3) = 0.25;
  g.hi(3) = 0.5;
  g.lo = Eigen::Vector4d(0, 0, 0, 0);
  g.hi = Eigen::Vector4d(99, 5, 1, 1);
  EXPECT_EQ(region_rule(s, g, {2}), "the whole domain");
  g.lo(0) = g.hi(0) = 42;
  EXPECT_EQ(region_rule(s, g, {2}), "age=42");
}

}  // namespace
}  // namespace witness
