// The tree engine against brute force: random forests and boosted ensembles on tiny domains
// (booleans, categories, one-hot, normalised integers, two protected features), verdicts, exact
// counts and witnesses; threshold and argmax rules; a preprocessing chain in the model.
#include "fairness/complete/trees/tree_search.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "fairness/complete/complete_search.h"
#include "fairness/complete/trees/raw_trees.h"
#include "model/loaders.h"
#include "support/paths.h"
#include "support/sanitized.h"
#include "support/tiny_networks.h"

namespace witness {
namespace {

using test::source_path;
using test::Tiny;

struct Counted {
  long long points = 0, unfair = 0;
};

Counted count_unfair(const Tiny& t) {
  Counted c;
  for (const auto& [key, unfair] : test::unfair_points(t)) c.points += 1, c.unfair += unfair ? 1 : 0;
  return c;
}

void expect_exact(const Tiny& t, unsigned threads) {
  SCOPED_TRACE(t.name + " threads " + std::to_string(threads));
  const Counted truth = count_unfair(t);
  CompleteSearchOptions o;
  o.quantify = true;
  Env env = test::make_env("60", threads);
  const FairnessResult r = complete_search(test::problem_of(t), o, env);
  ASSERT_TRUE(r.share.measured);
  EXPECT_TRUE(r.share.exact) << r.reason;
  EXPECT_EQ(r.share.undecided, 0.0);
  EXPECT_EQ(static_cast<double>(r.share.points), static_cast<double>(truth.points));
  EXPECT_EQ(static_cast<long long>(r.share.falsified_points), truth.unfair);
  EXPECT_EQ(r.verdict, truth.unfair > 0 ? Verdict::Witness : Verdict::Verified) << r.reason;
  for (const WitnessPair& w : r.witnesses) EXPECT_NE(w.label, w.label_prime);
  // For whom: every marginal bin against brute force (boxes counted by cells spread their unfair
  // points over runs of values the trees cannot tell apart, which is exact).
  if (truth.unfair > 0) {
    const std::map<std::vector<double>, bool> points = test::unfair_points(t);
    for (const FeatureMarginal& m : r.marginals)
      for (std::size_t b = 0; b < m.lo.size(); ++b) {
        long double count = 0.0L;
        for (const auto& [key, u] : points) {
          const double v = key[static_cast<std::size_t>(m.feature)];
          count += u && v >= m.lo[b] && v <= m.hi[b] ? 1.0L : 0.0L;
        }
        EXPECT_NEAR(m.falsified[b], static_cast<double>(count / truth.unfair), 1e-12) << "feature " << m.feature;
      }
  }
  // Without quantify: the same verdict, a replayed witness when there is one.
  CompleteSearchOptions v = o;
  v.quantify = false;
  Env env2 = test::make_env("60", threads);
  const FairnessResult q = complete_search(test::problem_of(t), v, env2);
  EXPECT_EQ(q.verdict, truth.unfair > 0 ? Verdict::Witness : Verdict::Verified) << q.reason;
}

TEST(TreeSearch, ExactCountsEqualBruteForce) {
  const char* schemas[] = {test::kBoolLast, test::kCategoricalMiddle, test::kOneHotFirst, test::kTwoProtected,
                           test::kWideInteger};
  int unfair = 0, fair = 0;
  // Under the sanitizers half the seeds: 60 forests rather than 120.
  const std::uint64_t seeds = test::sized(6, 3);
  for (std::uint64_t seed = 1; seed <= seeds; ++seed)
    for (const char* s : schemas)
      for (bool argmax : {false, true})
        for (bool scaled : {false, true}) {
          const Tiny t = test::random_forest(s, seed, argmax, scaled);
          (count_unfair(t).unfair > 0 ? unfair : fair) += 1;
          expect_exact(t, seed % 2 == 0 ? 2 : 1);
        }
  // Both kinds occur, so both verdicts are tested.
  EXPECT_GT(unfair, test::sized(10, 5));
  EXPECT_GT(fair, test::sized(3, 1));
}

// Sums that equal the threshold exactly (leaf weights in eighths): the cell counts refuse such boxes
// and the engine settles them point by point, still exact.
TEST(TreeSearch, ExactCountsWithSumsAtTheThreshold) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed)
    for (const char* s : {test::kBoolLast, test::kTwoProtected, test::kWideInteger})
      expect_exact(test::random_forest(s, seed, false, seed % 2 == 0, true), 1);
}

// Without a time limit a queue past its cap is drained (smallest boxes first), not cut: the
// XGBoost 25 x 4 Adult fixture on a smaller box, with room for 64 open boxes per queue, ends with
// the count of a run that never fills its queue, nothing evicted. Under a time limit the smallest
// boxes are dropped instead (the count is then not exact).
TEST(TreeSearch, FullQueuesDrainAndStayExact) {
  const Model model = load_model(source_path("tests/fixtures/trees/adult_xgb_25x4.json"));
  std::ifstream in(source_path("benchmarks/fairify/adult.toml"));
  std::stringstream toml;
  // Under the sanitizers a box of a quarter the points: it still fills a queue of 128 regions.
  toml << in.rdbuf() << "\n[boxes.small]\nage = [25, " << test::sized(45, 35) << "]\nhours-per-week = [30, "
       << test::sized(50, 40) << "]\ncapital-gain = [0, 3]\n";
  const Schema schema = parse_schema(toml.str(), "adult.toml + small").with_box("small");
  auto run = [&](std::size_t cap, Env& env) {
    CompleteSearchOptions o;
    o.quantify = true;
    o.max_open_regions = cap;
    return complete_search(FairnessProblem(model, schema, {"sex"}), o, env);
  };
  Env roomy = test::make_env("0", 2), tight = test::make_env("0", 2), limited = test::make_env("600", 2);
  const FairnessResult a = run(std::size_t{1} << 21, roomy), b = run(128, tight), c = run(128, limited);
  ASSERT_TRUE(a.share.exact) << a.reason;
  EXPECT_EQ(roomy.stats.get("complete.drained_queues"), 0.0);
  EXPECT_TRUE(b.share.exact) << b.reason;
  EXPECT_GT(tight.stats.get("complete.drained_queues"), 0.0);
  EXPECT_EQ(tight.stats.get("complete.evicted_regions"), 0.0);
  EXPECT_GT(a.share.falsified_points, 0.0L);
  EXPECT_EQ(static_cast<double>(b.share.falsified_points), static_cast<double>(a.share.falsified_points));
  EXPECT_EQ(static_cast<double>(b.share.points), static_cast<double>(a.share.points));
  EXPECT_FALSE(c.share.exact);
  EXPECT_EQ(limited.stats.get("complete.drained_queues"), 0.0);
  EXPECT_GT(limited.stats.get("complete.evicted_regions"), 0.0);
}

}  // namespace
}  // namespace witness
