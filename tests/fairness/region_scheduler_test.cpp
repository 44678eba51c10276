// The scheduler on its own, driving a line of integer points whose unfair points are known: exact
// counts for any number of threads, the first witness stopping the run, the queue cap, the time
// limit and errors.
#include "fairness/complete/search/region_scheduler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "fairness/complete/answer/search_tally.h"
#include "support/tiny_networks.h"

namespace witness {
namespace {

bool unfair_at(double x) { return static_cast<long long>(x) % 7 == 3; }

// Points 0..n-1 of one integer feature (a boolean protected feature beside it): a region is halved
// until it holds at most `leaf` points, which are then counted one by one. With witnesses wanted,
// the first unfair point of a closed region comes back as a (made-up) pair.
class LineRegions final : public RegionEvaluator {
 public:
  LineRegions(const Schema& schema, const CompleteSearchOptions& o, const SearchSignals& signals, double n)
      : problem_(model_, schema, {"p"}), o_(o), signals_(signals), n_(n) {}
  std::size_t cap = std::size_t{1} << 20;
  double leaf = 16.0;
  double split_share = 0.5;  // of a region in its first part: below 0.5, the second part is deeper
  int sleep_ms = 0;          // per refinement, to test the time limit
  double fail_at = -1.0;     // a region starting here throws an InputError
  bool interruptible = false;

  [[nodiscard]] const FairnessProblem& problem() const override { return problem_; }
  [[nodiscard]] long double domain_points() const override { return n_; }
  [[nodiscard]] bool real_domain() const override { return false; }
  [[nodiscard]] std::size_t max_open() const override { return cap; }
  [[nodiscard]] SearchRegion whole() const override {
    SearchRegion r;
    r.lo = Eigen::Vector2d(0.0, 0.0);
    r.hi = Eigen::Vector2d(n_ - 1.0, 1.0);
    r.measure = n_;
    return r;
  }
  [[nodiscard]] RegionOutcome begin(SearchRegion whole, RegionScratch* /*scratch*/) const override {
    RegionOutcome out;
    out.counters.regions = 1;
    out.open.push_back(std::move(whole));
    return out;
  }
  [[nodiscard]] RegionOutcome refine(const SearchRegion& r, RegionScratch* /*scratch*/) const override {
    if (sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    if (interruptible && signals_.stop.load()) throw Interrupted{};
    if (r.lo(0) == fail_at) throw InputError("line.toml", "", "a region that cannot be evaluated");
    RegionOutcome out;
    const double mid = r.lo(0) + std::floor((r.hi(0) - r.lo(0)) * split_share);
    for (auto [lo, hi] : {std::pair{r.lo(0), mid}, std::pair{mid + 1.0, r.hi(0)}}) {
      ++out.counters.regions;
      SearchRegion c = r;
      c.lo(0) = lo, c.hi(0) = hi, c.measure = hi - lo + 1.0;
      if (hi - lo + 1.0 > leaf) {
        c.key = o_.quantify ? static_cast<double>(c.measure) : signals_.next_sequence();
        out.open.push_back(std::move(c));
        continue;
      }
      ClosedRegion closed{c.lo, c.hi, c.measure, 0.0L, 0.0L, false, false, {}, {}, {}};
      for (double x = lo; x <= hi; ++x) {
        if (!unfair_at(x)) {
          closed.certified += 1.0L;
          continue;
        }
        closed.falsified += 1.0L;
        closed.unfair_points.push_back(Eigen::Vector2d(x, 0.0));
        if (signals_.wants_witnesses() && out.witnesses.empty()) {
          WitnessPair w;
          w.raw = Eigen::Vector2d(x, 0.0);
          w.raw_prime = Eigen::Vector2d(x, 1.0);
          out.witnesses.push_back(w);
        }
      }
      out.closed.push_back(std::move(closed));
    }
    return out;
  }
  [[nodiscard]] std::vector<PointVerdict> decide_points(const Eigen::MatrixXd& raw,
                                                        RegionScratch* /*scratch*/) const override {
    std::vector<PointVerdict> out;
    for (Eigen::Index j = 0; j < raw.cols(); ++j)
      out.push_back(unfair_at(raw(0, j)) ? PointVerdict::Unfair : PointVerdict::Fair);
    return out;
  }
  [[nodiscard]] std::string unreplayed(long double falsified) const override {
    return std::to_string(static_cast<long long>(falsified)) + " points flip";
  }
  void record_stats(Env& env, const SearchTally& tally) const override {
    env.stats.set("line.left", static_cast<double>(tally.left.size()));
  }

 private:
  Model model_;  // never evaluated: the points are decided by unfair_at
  FairnessProblem problem_;
  const CompleteSearchOptions& o_;
  const SearchSignals& signals_;
  double n_;
};

Schema line_schema(long long n) {
  const std::string toml =
      "name = \"line\"\nprotected = [\"p\"]\nfeatures = [\n  { name = \"x\", kind = \"integer\", "
      "min = 0, max = " +
      std::to_string(n - 1) + " },\n  { name = \"p\", kind = \"boolean\" },\n]\n";
  return parse_schema(toml, "line.toml");
}

double unfair_count(long long n) {
  double c = 0.0;
  for (long long x = 0; x < n; ++x) c += unfair_at(static_cast<double>(x)) ? 1.0 : 0.0;
  return c;
}

CompleteSearchOptions quantify_options() {
  CompleteSearchOptions o;
  o.quantify = true;
  o.max_witnesses = 3;
  return o;
}

TEST(RegionScheduler, ExactCountsForAnyThreadCount) {
  const long long n = 100003;
  const Schema schema = line_schema(n);
  const CompleteSearchOptions o = quantify_options();
  std::int64_t regions = -1;
  for (unsigned threads : {1U, 2U, 4U}) {
    SearchSignals signals(o.max_witnesses);
    const LineRegions line(schema, o, signals, static_cast<double>(n));
    Env env = test::make_env("60", threads);
    const FairnessResult r = RegionScheduler(line, signals, o, env).run();
    EXPECT_EQ(r.verdict, Verdict::Witness) << threads;
    EXPECT_EQ(r.witnesses.size(), 3U);
    EXPECT_TRUE(r.share.exact);
    EXPECT_EQ(r.share.undecided, 0.0);
    EXPECT_EQ(static_cast<double>(r.share.falsified_points), unfair_count(n)) << threads;
    EXPECT_DOUBLE_EQ(r.share.falsified, unfair_count(n) / static_cast<double>(n));
    EXPECT_EQ(env.stats.get("line.left"), 0.0);
    if (regions < 0) regions = r.stats.regions;
    EXPECT_EQ(r.stats.regions, regions) << threads;  // the same tree of regions, whatever the order
    EXPECT_FALSE(r.regions.empty());
  }
}

TEST(RegionScheduler, FirstWitnessStopsTheRun) {
  const long long n = 1 << 20;
  const Schema schema = line_schema(n);
  CompleteSearchOptions o;
  for (unsigned threads : {1U, 2U}) {
    SearchSignals signals(o.max_witnesses);
    const LineRegions line(schema, o, signals, static_cast<double>(n));
    Env env = test::make_env("60", threads);
    const FairnessResult r = RegionScheduler(line, signals, o, env).run();
    ASSERT_EQ(r.verdict, Verdict::Witness);
    EXPECT_EQ(r.witnesses.size(), 1U);
    EXPECT_TRUE(unfair_at(r.witnesses[0].raw(0)));
    EXPECT_LT(r.stats.regions, 1000) << "witness hunting goes depth first and stops at the first one";
  }
}

// Rounds on several threads refine regions ahead of the depth-first order; on an unbalanced tree
// they meet witnesses there first. The answer is still a single thread's: the same person for any
// thread count.
TEST(RegionScheduler, WitnessesDoNotDependOnTheThreadCount) {
  const long long n = 1 << 16;
  const Schema schema = line_schema(n);
  for (int wanted : {1, 3}) {
    CompleteSearchOptions o;
    o.max_witnesses = wanted;
    std::vector<double> first;
    for (unsigned threads : {1U, 2U, 3U, 5U}) {
      SearchSignals signals(o.max_witnesses);
      LineRegions line(schema, o, signals, static_cast<double>(n));
      line.split_share = 0.2;
      Env env = test::make_env("60", threads);
      const FairnessResult r = RegionScheduler(line, signals, o, env).run();
      ASSERT_EQ(r.verdict, Verdict::Witness);
      std::vector<double> found;
      for (const WitnessPair& w : r.witnesses) found.push_back(w.raw(0));
      EXPECT_EQ(found.size(), static_cast<std::size_t>(wanted));
      if (threads == 1) first = found;
      EXPECT_EQ(found, first) << threads << " threads, " << wanted << " witnesses";
    }
  }
}

TEST(RegionScheduler, QueueCapLeavesRegionsUndecidedAndSaysSo) {
  const long long n = 1 << 18;
  const Schema schema = line_schema(n);
  CompleteSearchOptions o = quantify_options();
  o.max_witnesses = 1;
  SearchSignals signals(o.max_witnesses);
  LineRegions line(schema, o, signals, static_cast<double>(n));
  line.cap = 64;
  Env env = test::make_env("60", 1);
  const FairnessResult r = RegionScheduler(line, signals, o, env).run();
  EXPECT_GT(r.share.undecided, 0.0);
  EXPECT_FALSE(r.share.exact);
  EXPECT_LE(r.share.falsified * static_cast<double>(n), unfair_count(n));
  EXPECT_LE(r.share.certified * static_cast<double>(n), static_cast<double>(n) - unfair_count(n));
  EXPECT_NE(r.reason.find("exceeded the queue's capacity"), std::string::npos) << r.reason;
  EXPECT_GT(env.stats.get("complete.evicted_regions"), 0.0);
}

TEST(RegionScheduler, TimeLimitInterruptsAndLeavesSoundShares) {
  const long long n = 1 << 20;
  const Schema schema = line_schema(n);
  CompleteSearchOptions o = quantify_options();
  SearchSignals signals(o.max_witnesses);
  LineRegions line(schema, o, signals, static_cast<double>(n));
  line.sleep_ms = 2;
  line.interruptible = true;
  Env env = test::make_env("0.3", 2);
  const auto start = std::chrono::steady_clock::now();
  const FairnessResult r = RegionScheduler(line, signals, o, env).run();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  EXPECT_GT(r.share.undecided, 0.0);
  EXPECT_LE(r.share.falsified * static_cast<double>(n), unfair_count(n));
  EXPECT_LE(r.share.certified * static_cast<double>(n), static_cast<double>(n) - unfair_count(n));
  EXPECT_NE(r.reason.find("regions open"), std::string::npos) << r.reason;
}

TEST(RegionScheduler, EvaluatorErrorsReachTheCaller) {
  const long long n = 4096;
  const Schema schema = line_schema(n);
  const CompleteSearchOptions o = quantify_options();
  SearchSignals signals(o.max_witnesses);
  LineRegions line(schema, o, signals, static_cast<double>(n));
  line.fail_at = 2048.0;
  Env env = test::make_env("60", 2);
  EXPECT_THROW((void)RegionScheduler(line, signals, o, env).run(), InputError);
}

}  // namespace
}  // namespace witness
