// The estimate of the undecided share: points decided one by one agree with the exact counts, the
// Clopper-Pearson bounds are the textbook values, and over many seeds the interval holds the true
// share at least at its stated rate (the coverage the estimate promises), on domains small enough
// to count exactly.
#include "fairness/share_estimate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <iostream>
#include <vector>

#include "fairness/complete_search.h"
#include "fairness/network_regions.h"
#include "tiny_networks.h"

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
  for (const std::string rules : {"", R"(constraints = ['c <= a', 'k in {w} -> p in {true}'])"}) {
    const test::Tiny t = test::medium_tiny(3, rules);
    CompleteSearchOptions o;
    o.protected_features = t.prot;
    o.quantify = true;
    SearchSignals signals(o.max_witnesses);
    const NetworkRegions regions(t.model, t.schema, o, *relu_network_of(t.model, nullptr), signals);
    Env env = test::make_env("60");
    const FairnessResult exact = complete_search(t.model, t.schema, o, env);
    ASSERT_TRUE(exact.share.exact) << t.name;
    EXPECT_EQ(static_cast<long double>(unfair_points_one_by_one(t, regions)), exact.share.falsified_points) << t.name;
  }
}

TEST(ShareEstimate, IntervalHoldsTheTrueShareAtLeastAtItsConfidence) {
  const test::Tiny t = test::medium_tiny(5);
  CompleteSearchOptions o;
  o.protected_features = t.prot;
  o.quantify = true;
  SearchSignals signals(o.max_witnesses);
  const NetworkRegions regions(t.model, t.schema, o, *relu_network_of(t.model, nullptr), signals);
  const auto truth =
      static_cast<double>(unfair_points_one_by_one(t, regions)) / static_cast<double>(regions.domain_points());
  // A frontier as a search leaves it: a few regions refined, the rest open with their counts.
  SoundMass mass;
  mass.valid = regions.domain_points();
  std::deque<SearchRegion> open;
  auto absorb = [&](RegionOutcome out) {
    for (const ClosedRegion& c : out.closed) mass.falsified += c.falsified;
    for (SearchRegion& r : out.open) open.push_back(std::move(r));
  };
  absorb(regions.begin(regions.whole(), nullptr));
  for (int step = 0; step < 6 && !open.empty(); ++step) {
    const SearchRegion r = open.front();
    open.pop_front();
    absorb(regions.refine(r, nullptr));
  }
  ASSERT_FALSE(open.empty());
  long double certified = mass.valid - mass.falsified;
  for (const SearchRegion& r : open) {
    mass.falsified += r.unfair;
    certified -= r.measure - r.fair;
  }
  mass.undecided = mass.valid - certified - mass.falsified;
  ASSERT_GT(mass.undecided, 0.0L);
  const std::vector<SearchRegion> frontier(open.begin(), open.end());
  Env env = test::make_env("0");
  constexpr int kRuns = 400;
  int covered = 0;
  double width = 0.0;
  for (int seed = 0; seed < kRuns; ++seed) {
    EstimateOptions eo;
    eo.seed = static_cast<std::uint64_t>(seed);
    eo.min_samples = eo.max_samples = 512;  // a fixed sample size: the interval's stated coverage
    eo.target_half_width = 0.0;
    const std::optional<ShareEstimate> e = estimate_falsified_share(regions, t.schema, frontier, mass, eo, env);
    ASSERT_TRUE(e);
    ASSERT_EQ(e->samples, 512);
    ASSERT_LE(e->lo, e->share);
    ASSERT_LE(e->share, e->hi);
    EXPECT_GE(e->lo, static_cast<double>(mass.falsified / mass.valid) - 1e-15);
    EXPECT_LE(e->hi, static_cast<double>((mass.falsified + mass.undecided) / mass.valid) + 1e-15);
    covered += e->lo <= truth && truth <= e->hi ? 1 : 0;
    width += e->hi - e->lo;
  }
  std::cout << "covered " << covered << " of " << kRuns << ", truth " << truth << ", mean width " << width / kRuns
            << ", sound width " << static_cast<double>(mass.undecided / mass.valid) << "\n";
  // Clopper-Pearson covers at least 95% of the time; 400 runs at a true 95% fall below 92% with
  // probability under 0.5%.
  EXPECT_GE(covered, kRuns * 92 / 100) << "truth " << truth;
  // And it says something: narrower than the sound interval.
  EXPECT_LT(width / kRuns, static_cast<double>(mass.undecided / mass.valid)) << "truth " << truth;
}

TEST(ShareEstimate, NothingUndecidedGivesNoEstimate) {
  const test::Tiny t = test::medium_tiny(3);
  CompleteSearchOptions o;
  o.protected_features = t.prot;
  SearchSignals signals(o.max_witnesses);
  const NetworkRegions regions(t.model, t.schema, o, *relu_network_of(t.model, nullptr), signals);
  Env env = test::make_env("0");
  const SoundMass mass{10.0L, 0.0L, 100.0L};
  EXPECT_FALSE(estimate_falsified_share(regions, t.schema, {}, mass, EstimateOptions{}, env));
}

}  // namespace
}  // namespace witness
