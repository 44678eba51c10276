// The estimate of the undecided share: points decided one by one agree with the exact counts, the
// Clopper-Pearson bounds are the textbook values, and over many seeds the interval holds the true
// share at least at its stated rate (the coverage the estimate promises), on domains small enough
// to count exactly.
#include "fairness/complete/answer/share_estimate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "fairness/complete/complete_search.h"
#include "fairness/complete/network/network_regions.h"
#include "support/sanitized.h"
#include "support/tiny_networks.h"

namespace witness {
namespace {

TEST(ShareEstimate, ClopperPearsonBoundsAreTheTextbookValues) {
  double lo = 0.0, hi = 0.0;
  clopper_pearson(0, 10, 0.95, lo, hi);  // no success: hi solves (1 - hi)^10 = 0.025
  EXPECT_EQ(lo, 0.0);
  EXPECT_NEAR(hi, 1.0 - std::pow(0.025, 0.1), 1e-12);
  clopper_pearson(10, 10, 0.95, lo, hi);
  EXPECT_NEAR(lo, std::pow(0.025, 0.1), 1e-12);
  EXPECT_EQ(hi, 1.0);
  clopper_pearson(50, 100, 0.95, lo, hi);  // symmetric around 1/2, about +-0.10
  EXPECT_NEAR(lo + hi, 1.0, 1e-12);
  EXPECT_NEAR(hi - lo, 0.2034, 0.002);
}

// The unfair points of t's domain, counted by deciding every point on its own.
std::int64_t unfair_points_one_by_one(const test::Tiny& t, const NetworkRegions& regions) {
  const Eigen::MatrixXd all = test::domain_points(t.schema);
  std::int64_t unfair = 0;
  const int p = t.prot.front();
  for (Eigen::Index j = 0; j < all.cols(); ++j) {
    if (all(p, j) != t.schema.feature(p).min) continue;  // each non-protected point once
    for (PointVerdict v : regions.decide_points(all.col(j), nullptr)) unfair += v == PointVerdict::Unfair ? 1 : 0;
  }
  return unfair;
}

TEST(ShareEstimate, PointsDecidedOneByOneAgreeWithTheExactCount) {
  // Under the sanitizers the constrained domain only (its valid points are the harder count).
  const std::vector<std::string> domains = {R"(constraints = ['c <= a', 'k in {w} -> p in {true}'])", ""};
  for (const std::string& rules : test::sampled(domains, 2)) {
    const test::Tiny t = test::medium_tiny(3, rules);
    CompleteSearchOptions o;
    o.quantify = true;
    SearchSignals signals(o.max_witnesses);
    const FairnessProblem problem = test::problem_of(t);
    const NetworkRegions regions(problem, o, *relu_network_of(t.model, nullptr), signals);
    Env env = test::make_env("60");
    const FairnessResult exact = complete_search(test::problem_of(t), o, env);
    ASSERT_TRUE(exact.share.exact) << t.name;
    EXPECT_EQ(static_cast<long double>(unfair_points_one_by_one(t, regions)), exact.share.falsified_points) << t.name;
  }
}

// A frontier as a search leaves it: `steps` regions refined, the rest open with their counts.
struct Frontier {
  SoundMass mass;
  std::vector<SearchRegion> open;
};

Frontier frontier_of(const NetworkRegions& regions, int steps) {
  Frontier f;
  f.mass.valid = regions.domain_points();
  std::deque<SearchRegion> open;
  auto absorb = [&](RegionOutcome out) {
    for (const ClosedRegion& c : out.closed) f.mass.falsified += c.falsified;
    for (SearchRegion& r : out.open) open.push_back(std::move(r));
  };
  absorb(regions.begin(regions.whole(), nullptr));
  for (int step = 0; step < steps && !open.empty(); ++step) {
    const SearchRegion r = open.front();
    open.pop_front();
    absorb(regions.refine(r, nullptr));
  }
  long double certified = f.mass.valid - f.mass.falsified;
  for (const SearchRegion& r : open) {
    f.mass.falsified += r.unfair;
    certified -= r.measure - r.fair;
  }
  f.mass.undecided = f.mass.valid - certified - f.mass.falsified;
  f.open.assign(open.begin(), open.end());
  return f;
}

// Over 400 seeds with a fixed sample size, the share of intervals holding the truth; the mean width.
struct Coverage {
  int covered = 0, runs = 400;
  double width = 0.0;
};

template <typename Estimate>
Coverage coverage_of(const Frontier& f, double truth, Estimate estimate) {
  Coverage c;
  for (int seed = 0; seed < c.runs; ++seed) {
    const std::optional<ShareEstimate> e = estimate(static_cast<std::uint64_t>(seed));
    EXPECT_TRUE(e);
    if (!e) continue;
    EXPECT_LE(e->lo, e->share);
    EXPECT_LE(e->share, e->hi);
    EXPECT_GE(e->lo, static_cast<double>(f.mass.falsified / f.mass.valid) - 1e-15);
    EXPECT_LE(e->hi, static_cast<double>((f.mass.falsified + f.mass.undecided) / f.mass.valid) + 1e-15);
    c.covered += e->lo <= truth && truth <= e->hi ? 1 : 0;
    c.width += e->hi - e->lo;
  }
  std::cout << "covered " << c.covered << " of " << c.runs << ", truth " << truth << ", mean width " << c.width / c.runs
            << ", sound width " << static_cast<double>(f.mass.undecided / f.mass.valid) << "\n";
  return c;
}

// Clopper-Pearson covers at least 95% of the time; 400 runs at a true 95% fall below 92% with
// probability under 0.5%. And the interval says something: it is narrower than the sound one.
void expect_covers(const Coverage& c, const Frontier& f, double truth) {
  EXPECT_GE(c.covered, c.runs * 92 / 100) << "truth " << truth;
  EXPECT_LT(c.width / c.runs, static_cast<double>(f.mass.undecided / f.mass.valid)) << "truth " << truth;
}

// The true share of the unfair points of medium_tiny(5), counted point by point once for the
// tests that need it (the count is most of their time).
double counted_truth(const test::Tiny& t, const NetworkRegions& regions) {
  static const double truth =
      static_cast<double>(unfair_points_one_by_one(t, regions)) / static_cast<double>(regions.domain_points());
  return truth;
}

// A 161,000-point network, its regions, and the true share of its unfair points.
struct CountedNetwork {
  test::Tiny t = test::medium_tiny(5);
  CompleteSearchOptions o = test::quantify_options(t);
  SearchSignals signals{o.max_witnesses};
  const FairnessProblem problem = test::problem_of(t);
  NetworkRegions regions{problem, o, *relu_network_of(t.model, nullptr), signals};
  double truth = counted_truth(t, regions);
};

TEST(ShareEstimate, IntervalHoldsTheTrueShareAtLeastAtItsConfidence) {
  const CountedNetwork counted;
  const test::Tiny& t = counted.t;
  const NetworkRegions& regions = counted.regions;
  const double truth = counted.truth;
  const Frontier f = frontier_of(regions, 6);
  ASSERT_FALSE(f.open.empty());
  ASSERT_GT(f.mass.undecided, 0.0L);
  Env env = test::make_env("0");
  const Coverage c = coverage_of(f, truth, [&](std::uint64_t seed) {
    EstimateOptions eo;
    eo.seed = seed;
    eo.min_samples = eo.max_samples = 512;  // a fixed sample size: the interval's stated coverage
    eo.target_half_width = 0.0;
    std::optional<ShareEstimate> e = estimate_falsified_share(regions, t.schema, f.open, {}, f.mass, eo, env);
    EXPECT_TRUE(!e || e->samples == 512);
    return e;
  });
  expect_covers(c, f, truth);
}

// Half the frontier evicted as a search's full queue would drop it, in batches, its sample thinned
// as it goes (a small cap); the other half sampled at the end: the two strata's interval still
// covers at its stated rate.
TEST(ShareEstimate, IntervalWithEvictedRegionsHoldsTheTrueShare) {
  const CountedNetwork counted;
  const test::Tiny& t = counted.t;
  const NetworkRegions& regions = counted.regions;
  const double truth = counted.truth;
  const Frontier f = frontier_of(regions, 60);
  ASSERT_GE(f.open.size(), 12U);
  std::vector<SearchRegion> open, evicted;
  for (std::size_t k = 0; k < f.open.size(); ++k) (k % 2 == 0 ? open : evicted).push_back(f.open[k]);
  Env env = test::make_env("0");
  int thinned = 0;
  const Coverage c = coverage_of(f, truth, [&](std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    EvictedSample sample;
    sample.cap = 256;
    for (std::size_t k = 0; k < evicted.size(); k += 3) {
      const std::vector<SearchRegion> batch(
          evicted.begin() + static_cast<std::ptrdiff_t>(k),
          evicted.begin() + static_cast<std::ptrdiff_t>(std::min(k + 3, evicted.size())));
      const std::int64_t n = sample.plan(batch, rng);
      const long double rate = sample.rate;
      sample.add(rate, n, unfair_among_drawn(regions, t.schema, batch, n, rng(), nullptr), rng);
    }
    EXPECT_LE(sample.unfair_samples, sample.samples);
    long double measure = 0.0L;
    for (const SearchRegion& r : evicted) measure += r.measure;
    EXPECT_EQ(sample.measure, measure);
    thinned += sample.rate < 256.0L / (2.0L * evicted.front().measure) ? 1 : 0;
    EstimateOptions eo;
    eo.seed = seed;
    eo.min_samples = eo.max_samples = 512;
    eo.target_half_width = 0.0;
    return estimate_falsified_share(regions, t.schema, open, sample, f.mass, eo, env);
  });
  EXPECT_GT(thinned, 0);  // the cap was reached: the thinning is part of what is covered
  expect_covers(c, f, truth);
}

// Two sub-problems' samples join at the lower rate, their counts thinned to it.
TEST(ShareEstimate, EvictedSamplesMergeAtTheLowerRate) {
  std::mt19937_64 rng(7);
  EvictedSample a, b;
  a.measure = 100.0L, a.rate = 4.0L, a.samples = 400, a.unfair_samples = 100;
  b.measure = 300.0L, b.rate = 1.0L, b.samples = 300, b.unfair_samples = 30;
  a.merge(b, rng);
  EXPECT_EQ(a.rate, 1.0L);
  EXPECT_EQ(a.measure, 400.0L);
  EXPECT_GT(a.samples, 300 + 60);  // about 300 + 100
  EXPECT_LT(a.samples, 300 + 140);
  EXPECT_LE(a.unfair_samples, 30 + 100);
  EXPECT_GE(a.unfair_samples, 30);
  EvictedSample none;
  none.merge(a, rng);
  EXPECT_EQ(none.rate, 1.0L);
  EXPECT_EQ(none.samples, a.samples);
}

TEST(ShareEstimate, NothingUndecidedGivesNoEstimate) {
  const test::Tiny t = test::medium_tiny(3);
  CompleteSearchOptions o;
  SearchSignals signals(o.max_witnesses);
  const FairnessProblem problem = test::problem_of(t);
  const NetworkRegions regions(problem, o, *relu_network_of(t.model, nullptr), signals);
  Env env = test::make_env("0");
  const SoundMass mass{10.0L, 0.0L, 100.0L};
  EXPECT_FALSE(estimate_falsified_share(regions, t.schema, {}, {}, mass, EstimateOptions{}, env));
}

}  // namespace
}  // namespace witness
