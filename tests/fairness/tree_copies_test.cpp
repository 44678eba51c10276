// The tree engine's copies on their own, against brute force on tiny random forests: combinations
// that share a copy label every point alike, a box decided point by point counts what brute force
// counts, and a probe at an unfair point replays a witness (none at a fair one).
#include "fairness/complete/trees/tree_copies.h"

#include <gtest/gtest.h>

#include <map>

#include "fairness/complete/trees/raw_trees.h"
#include "support/tiny_networks.h"

namespace witness {
namespace {

SearchRegion whole_box(const Schema& schema) {
  SearchRegion b;
  b.lo.resize(schema.size());
  b.hi.resize(schema.size());
  for (int f = 0; f < schema.size(); ++f) b.lo(f) = schema.feature(f).min, b.hi(f) = schema.feature(f).max;
  return b;
}

TEST(TreeCopies, AgreeWithBruteForcePointByPoint) {
  int unfair_seen = 0, fair_seen = 0;
  for (const char* s : {test::kBoolLast, test::kCategoricalMiddle, test::kTwoProtected})
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      const test::Tiny t = test::random_forest(s, seed, seed % 2 == 0, false);
      SCOPED_TRACE(t.name + " seed " + std::to_string(seed));
      CompleteSearchOptions o;
      o.max_witnesses = 1000;  // a pair tried at every unfair point
      const RawTrees trees = RawTrees::compile(t.model, t.schema, nullptr).value();
      SearchSignals signals(1000);
      const FairnessProblem problem = test::problem_of(t);
      const TreeCopies copies(problem, o, trees, signals);
      ASSERT_GE(copies.copies(), 1U);
      ASSERT_LE(copies.copies(), copies.combinations());
      Evaluator<double> ev(t.model);
      const Eigen::MatrixXd raw = test::domain_points(t.schema);
      // Combinations that share a copy give the same label at every point.
      std::vector<std::vector<int>> by_combo;
      for (std::size_t c = 0; c < copies.combinations(); ++c) by_combo.push_back(copies.labels(raw, c, ev));
      for (std::size_t c = 0; c < copies.combinations(); ++c)
        EXPECT_EQ(by_combo[c], by_combo[copies.combination_of_copy(copies.copy_of(c))]);
      // The whole box decided point by point: every point once per non-protected point (the
      // protected entries are set by each combination), unfair exactly where brute force says.
      const std::map<std::vector<double>, bool> truth = test::unfair_points(t);
      TreeBoxOutcome out;
      copies.enumerate(whole_box(t.schema), out, ev);
      long long unfair = 0;
      for (const auto& [key, u] : truth) unfair += u ? 1 : 0;
      EXPECT_EQ(out.kind, TreeBoxOutcome::Kind::Mixed);
      EXPECT_EQ(static_cast<long long>(out.falsified), unfair);
      EXPECT_EQ(static_cast<long long>(out.certified + out.falsified), static_cast<long long>(truth.size()));
      EXPECT_EQ(out.unfair_points.size(), static_cast<std::size_t>(unfair));
      for (const Eigen::VectorXd& p : out.unfair_points) {
        std::vector<double> key(p.data(), p.data() + p.size());
        for (int f : t.prot) key[static_cast<std::size_t>(f)] = t.schema.feature(f).min;
        EXPECT_TRUE(truth.at(key));
      }
      EXPECT_EQ(out.witnesses.size() + static_cast<std::size_t>(out.rejected), static_cast<std::size_t>(unfair));
      for (const WitnessPair& w : out.witnesses) EXPECT_NE(w.label, w.label_prime);
      // A probe finds a witness exactly at unfair points.
      const std::vector<Truth> everywhere(copies.combinations(), Truth::Always);
      for (const auto& [key, u] : truth) {
        TreeBoxOutcome probed;
        copies.probe(Eigen::Map<const Eigen::VectorXd>(key.data(), static_cast<Eigen::Index>(key.size())), everywhere,
                     probed, ev);
        EXPECT_EQ(probed.witnesses.size() + static_cast<std::size_t>(probed.rejected), u ? 1U : 0U);
        (u ? unfair_seen : fair_seen) += 1;
      }
    }
  EXPECT_GT(unfair_seen, 0);
  EXPECT_GT(fair_seen, 0);
}

}  // namespace
}  // namespace witness
