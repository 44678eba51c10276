// A part solved on its own thread: solved in slices (each continuing the last one's state), it ends
// with one uninterrupted run's exact count, its progress within the domain meanwhile; the progress
// message between ranks round-trips exactly and malformed text decides nothing.
#include "fairness/complete/search/part_solver.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "fairness/complete/complete_search.h"
#include "fairness/complete/network/network_regions.h"
#include "support/sanitized.h"
#include "support/tiny_networks.h"

namespace witness {
namespace {

TEST(PartProgress, MessageRoundTripsExactly) {
  PartProgress p;
  p.certified = 0x1.23456789abcdefp+60L / 3.0L, p.falsified = 1.0L / 7.0L, p.invalid = 12345.0L, p.leaves = 987654;
  const PartProgress q = PartProgress::parse(p.text());
  EXPECT_EQ(q.certified, p.certified);
  EXPECT_EQ(q.falsified, p.falsified);
  EXPECT_EQ(q.invalid, p.invalid);
  EXPECT_EQ(q.leaves, p.leaves);
  for (const std::string bad : {"", "x", "1 2", "-1 0 0 3", "nan 0 0 1", "inf 1 1 1"}) {
    const PartProgress z = PartProgress::parse(bad);
    EXPECT_EQ(z.certified + z.falsified + z.invalid, 0.0L) << bad;
  }
  PartProgress sum = p;
  sum += q;
  EXPECT_EQ(sum.certified, 2.0L * p.certified);
  EXPECT_EQ(sum.leaves, 2 * p.leaves);
}

TEST(PartSolver, SlicesOfAPartEndWithOneRunsCount) {
  for (std::uint64_t seed : {1, 2}) {
    SCOPED_TRACE(seed);
    const test::Tiny t = test::medium_tiny(seed);
    CompleteSearchOptions o = test::quantify_options(t);
    Env straight_env = test::make_env("60", 1);
    const FairnessResult straight = complete_search(test::problem_of(t), o, straight_env);
    ASSERT_TRUE(straight.share.exact) << straight.reason;

    SearchSignals signals(o.max_witnesses);
    std::string why;
    const FairnessProblem problem = test::problem_of(t);
    const NetworkRegions regions(problem, o, *relu_network_of(t.model, &why), signals);
    Env env = test::make_env("60", 1);
    PartSolver solver(regions, signals, o, env);
    SearchState state = split_search(regions, signals, o, 1, env).front();
    int slices = 0;
    // Each slice hands the whole state on: slices of 0.1 ms under the sanitizers made thousands of
    // them and half a minute of copying.
    const double slice_seconds = test::sized(1e-4, 2e-3);
    const long double domain = regions.domain_points();
    for (; slices < 10000 && (slices == 0 || !state.tally.left.empty()); ++slices) {
      solver.start(std::move(state), slice_seconds);
      while (!solver.done()) {  // counts of open regions may shrink as they split: no order here
        const PartProgress now = solver.progress();
        EXPECT_GE(now.certified, 0.0L);
        EXPECT_LE(now.certified + now.falsified + now.invalid, domain);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      state = solver.finish();
      EXPECT_FALSE(solver.busy());
    }
    ASSERT_TRUE(state.tally.left.empty()) << "not finished after " << slices << " slices";
    EXPECT_GT(slices, 2) << "the part was not stopped mid-way";
    const FairnessResult joined = RegionScheduler(regions, signals, o, env).answer(std::move(state));
    EXPECT_TRUE(joined.share.exact) << joined.reason;
    EXPECT_EQ(joined.share.falsified_points, straight.share.falsified_points);
    EXPECT_EQ(joined.stats.regions, straight.stats.regions) << "every region refined once";
  }
}

}  // namespace
}  // namespace witness
