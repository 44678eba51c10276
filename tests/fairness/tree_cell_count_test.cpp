// TreeCellCount against brute force: random forests and boosted ensembles (threshold and one-score
// argmax rules, a scaler inside the model, one and two protected features) on small domains, whole
// boxes and random sub-boxes, every protected combination a copy; sums that tie with the threshold
// are refused, never miscounted.
#include "fairness/complete/trees/tree_cell_count.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "fairness/complete/trees/raw_trees.h"
#include "fairness/falsify.h"
#include "support/tiny_networks.h"

namespace witness {
namespace {

using test::Tiny;

struct Tally {
  int counted = 0, refused = 0;
};

// Brute force over the box: the non-protected points whose labels agree, and those where they
// differ, with the latter per feature value (unfair_by_cell[f][v - lo(f)]: cells of one value).
CellCounts brute_force(const Tiny& t, const std::map<std::vector<double>, bool>& points, const Eigen::VectorXd& lo,
                       const Eigen::VectorXd& hi) {
  CellCounts out;
  for (int f = 0; f < t.schema.size(); ++f)
    out.unfair_by_cell.emplace_back(static_cast<std::size_t>(hi(f) - lo(f) + 1.0), 0.0L);
  const std::vector<bool> is_protected = t.schema.feature_mask(t.prot);
  for (const auto& [key, unfair] : points) {
    bool inside = true;
    for (int f = 0; f < t.schema.size() && inside; ++f) {
      const double v = key[static_cast<std::size_t>(f)];
      inside = is_protected[static_cast<std::size_t>(f)] || (v >= lo(f) && v <= hi(f));
    }
    if (!inside) continue;
    (unfair ? out.unfair : out.fair) += 1.0L;
    for (int f = 0; f < t.schema.size() && unfair; ++f)
      if (!is_protected[static_cast<std::size_t>(f)])
        out.unfair_by_cell[static_cast<std::size_t>(f)]
                          [static_cast<std::size_t>(key[static_cast<std::size_t>(f)] - lo(f))] += 1.0L;
  }
  return out;
}

// The count's unfair points at value v of feature f: its cell's count over the cell's values (a
// feature without cells: all its values alike).
long double unfair_at(const CellCounts& c, int f, double v, double lo, double hi) {
  const auto k = static_cast<std::size_t>(f);
  if (c.cell_ends[k].empty()) return c.unfair / (hi - lo + 1.0);
  double start = lo;
  for (std::size_t j = 0; j < c.cell_ends[k].size(); ++j) {
    const double end = c.cell_ends[k][j];
    if (v <= end) return c.unfair_by_cell[k][j] / (end - start + 1.0);
    start = end + 1.0;
  }
  return -1.0L;  // beyond the cells: fails the comparison
}

void expect_brute_force_counts(const Tiny& t, std::uint64_t seed, Tally& tally) {
  SCOPED_TRACE(t.name);
  std::string why;
  const std::optional<RawTrees> trees = RawTrees::compile(t.model, t.schema, &why);
  ASSERT_TRUE(trees) << why;
  const TreeCellCount cells(*trees, t.schema);
  const std::vector<Eigen::VectorXd> combos = protected_combinations(t.schema, t.prot);
  const std::map<std::vector<double>, bool> points = test::unfair_points(t);
  std::mt19937 rng(static_cast<unsigned>(seed));
  for (int round = 0; round < 6; ++round) {
    Eigen::VectorXd lo(t.schema.size()), hi(t.schema.size());
    for (int f = 0; f < t.schema.size(); ++f) {
      const Feature& feat = t.schema.feature(f);
      lo(f) = feat.min, hi(f) = feat.max;
      if (round == 0) continue;  // the whole domain first, then sub-boxes
      std::uniform_int_distribution<int> at(static_cast<int>(feat.min), static_cast<int>(feat.max));
      const int a = at(rng), b = at(rng);
      lo(f) = std::min(a, b), hi(f) = std::max(a, b);
    }
    std::vector<Eigen::VectorXd> copy_lo, copy_hi;
    for (const Eigen::VectorXd& c : combos) {
      copy_lo.push_back(lo), copy_hi.push_back(hi);
      for (std::size_t k = 0; k < t.prot.size(); ++k)
        copy_lo.back()(t.prot[k]) = copy_hi.back()(t.prot[k]) = c(static_cast<Eigen::Index>(k));
    }
    const std::optional<CellCounts> c = cells.count(copy_lo, copy_hi);
    if (!c) {
      ++tally.refused;
      continue;
    }
    ++tally.counted;
    const CellCounts truth = brute_force(t, points, lo, hi);
    EXPECT_EQ(static_cast<double>(c->fair), static_cast<double>(truth.fair)) << "round " << round;
    EXPECT_EQ(static_cast<double>(c->unfair), static_cast<double>(truth.unfair)) << "round " << round;
    // The unfair point the count names is one: its copies' labels differ.
    if (c->unfair > 0.0L) {
      std::set<int> labels;
      for (const Eigen::VectorXd& combo : combos) {
        Eigen::VectorXd x = c->unfair_point;
        for (std::size_t k = 0; k < t.prot.size(); ++k) x(t.prot[k]) = combo(static_cast<Eigen::Index>(k));
        labels.insert(evaluate(t.model, t.schema.to_model_columns(x)).labels[0]);
      }
      EXPECT_GT(labels.size(), 1U) << "round " << round;
    }
    // For whom: every value of every non-protected feature (the shares of alike values are whole).
    ASSERT_EQ(c->cell_ends.size(), static_cast<std::size_t>(t.schema.size()));
    for (int f = 0; f < t.schema.size(); ++f) {
      if (std::find(t.prot.begin(), t.prot.end(), f) != t.prot.end()) continue;
      for (double v = lo(f); v <= hi(f); v += 1.0)
        EXPECT_EQ(
            static_cast<double>(unfair_at(*c, f, v, lo(f), hi(f))),
            static_cast<double>(truth.unfair_by_cell[static_cast<std::size_t>(f)][static_cast<std::size_t>(v - lo(f))]))
            << "round " << round << " feature " << f << " value " << v;
    }
  }
}

TEST(TreeCellCount, CountsEqualBruteForce) {
  const char* schemas[] = {test::kBoolLast, test::kCategoricalMiddle, test::kOneHotFirst, test::kTwoProtected,
                           test::kWideInteger};
  Tally tally;
  for (std::uint64_t seed = 1; seed <= 6; ++seed)
    for (const char* s : schemas)
      for (bool scaled : {false, true}) {
        expect_brute_force_counts(test::random_forest(s, seed, false, scaled), seed, tally);
        // Odd seeds with argmax: one score for a binary classifier (outputs [1 - s, s]).
        if (seed % 2 == 1) expect_brute_force_counts(test::random_forest(s, seed, true, scaled), seed, tally);
      }
  EXPECT_GT(tally.counted, 200);  // the counts ran, not only refusals
}

TEST(TreeCellCount, GridWalkEqualsATreeWalkPerCell) {
  // add_over_cells (one walk per tree, cells parted at the splits) against tree_value at every cell.
  int grids = 0;
  for (std::uint64_t seed = 1; seed <= 4; ++seed)
    for (const char* s : {test::kCategoricalMiddle, test::kTwoProtected, test::kWideInteger}) {
      const Tiny t = test::random_forest(s, seed, false, seed % 2 == 0);
      const RawTrees trees = RawTrees::compile(t.model, t.schema, nullptr).value();
      std::mt19937 rng(static_cast<unsigned>(seed));
      for (int round = 0; round < 5; ++round) {
        Eigen::VectorXd point(t.schema.size());
        std::vector<int> features;
        std::vector<std::vector<double>> starts;
        for (int f = 0; f < t.schema.size(); ++f) {
          const Feature& feat = t.schema.feature(f);
          std::uniform_int_distribution<int> at(static_cast<int>(feat.min), static_cast<int>(feat.max));
          point(f) = at(rng);
          if (feat.max > feat.min && rng() % 2 == 0) {  // an axis: a few distinct start values
            std::set<double> v{feat.min};
            for (int k = 0; k < 3; ++k) v.insert(at(rng));
            features.push_back(f);
            starts.emplace_back(v.begin(), v.end());
          }
        }
        std::size_t n = 1;
        for (const auto& a : starts) n *= a.size();
        for (std::size_t tree = 0; tree < trees.tree_count(); ++tree) {
          std::vector<double> values(2 * n, 0.0);
          trees.add_over_cells(tree, point, features, starts, values, 2, 1);
          for (std::size_t cell = 0, rest = 0; cell < n; ++cell) {
            Eigen::VectorXd p = point;
            rest = cell;
            for (std::size_t i = 0; i < features.size(); ++i) {
              p(features[i]) = starts[i][rest % starts[i].size()];
              rest /= starts[i].size();
            }
            EXPECT_EQ(values[2 * cell + 1], trees.tree_value(tree, p))
                << t.name << " tree " << tree << " cell " << cell;
            EXPECT_EQ(values[2 * cell], 0.0);
          }
        }
        ++grids;
      }
    }
  EXPECT_EQ(grids, 60);
}

TEST(TreeCellCount, SumsAtTheThresholdAreRefusedNotMiscounted) {
  Tally tally;
  for (std::uint64_t seed = 1; seed <= 8; ++seed)
    for (const char* s : {test::kBoolLast, test::kWideInteger})
      expect_brute_force_counts(test::random_forest(s, seed, false, false, true), seed, tally);
  EXPECT_GT(tally.refused, 0);
  EXPECT_GT(tally.counted, 0);
}

TEST(TreeCellCount, RefusesSeveralScores) {
  const Tiny t = test::random_forest(test::kBoolLast, 2, true, false);  // argmax over three targets
  std::string why;
  const std::optional<RawTrees> trees = RawTrees::compile(t.model, t.schema, &why);
  ASSERT_TRUE(trees) << why;
  Eigen::VectorXd lo = Eigen::VectorXd::Zero(t.schema.size()), hi = lo;
  EXPECT_FALSE(TreeCellCount(*trees, t.schema).count({lo, lo}, {hi, hi}));
}

}  // namespace
}  // namespace witness
