// The network evaluator on its own, without threads: a plain loop refining its regions closes the
// domain of every random tiny network with the brute-force fair share, through the same regions as
// the scheduler visits.
#include "fairness/complete/network/network_regions.h"

#include <gtest/gtest.h>

#include <vector>

#include "fairness/complete/complete_search.h"
#include "support/tiny_networks.h"

namespace witness {
namespace {

TEST(NetworkRegions, AloneClosesTheDomainWithTheBruteForceShare) {
  for (int i = 0; i < 40; ++i) {
    const test::Tiny t = test::random_tiny(i);
    CompleteSearchOptions o;
    o.quantify = true;
    SearchSignals signals(o.max_witnesses);
    std::string why;
    const FairnessProblem problem = test::problem_of(t);
    const NetworkRegions regions(problem, o, *relu_network_of(t.model, &why), signals);
    std::vector<SearchRegion> open;
    long double certified = 0.0L, falsified = 0.0L, invalid = 0.0L;
    std::int64_t evaluated = 0;
    auto absorb = [&](RegionOutcome out) {
      ASSERT_FALSE(out.stuck) << t.name;
      evaluated += out.counters.regions;
      invalid += out.invalid;
      for (const ClosedRegion& c : out.closed) certified += c.certified, falsified += c.falsified;
      for (SearchRegion& r : out.open) open.push_back(std::move(r));
    };
    absorb(regions.begin(regions.whole(), nullptr));
    while (!open.empty()) {
      const SearchRegion r = std::move(open.back());
      open.pop_back();
      absorb(regions.refine(r, nullptr));
      ASSERT_LT(evaluated, 100000) << t.name;
    }
    EXPECT_EQ(invalid, 0.0L) << t.name;
    EXPECT_EQ(certified + falsified, regions.domain_points()) << t.name;
    EXPECT_NEAR(static_cast<double>(certified / regions.domain_points()), test::fair_share(t), 1e-12) << t.name;
    Env env = test::make_env("30", 1);
    const FairnessResult r = complete_search(test::problem_of(t), o, env);
    EXPECT_EQ(r.share.falsified_points, falsified) << t.name;
    EXPECT_EQ(r.stats.regions, evaluated) << t.name << ": the scheduler refines the same regions";
  }
}

}  // namespace
}  // namespace witness
