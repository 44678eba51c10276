// Who flips, in which direction, and the group table: against brute force (every row evaluated with
// every protected value by the evaluator, counted by hand) on random networks, with one favourable
// class and the other.
#include "fairness/row_audit.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "domain/dataset.h"
#include "fairness/falsify.h"
#include "fairness/group_metrics.h"
#include "model/evaluator.h"
#include "support/tiny_networks.h"

namespace witness {
namespace {

// Random rows of the schema's domain (a few hundred, with repeats).
Eigen::MatrixXd random_rows(const Schema& s, int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Eigen::MatrixXd raw(s.size(), n);
  for (int j = 0; j < n; ++j)
    for (int f = 0; f < s.size(); ++f) {
      const Feature& feat = s.feature(f);
      std::uniform_int_distribution<int> pick(static_cast<int>(feat.min), static_cast<int>(feat.max));
      raw(f, j) = pick(rng);
    }
  return raw;
}

TEST(RowAudit, FlipsByGroupAndDirectionAgreeWithBruteForce) {
  int flips_seen = 0;
  for (int i = 0; i < 16; ++i) {
    const test::Tiny t = test::random_tiny(i);
    SCOPED_TRACE(t.name);
    const Eigen::MatrixXd raw = random_rows(t.schema, 300, 7 + static_cast<std::uint64_t>(i));
    const std::vector<Eigen::VectorXd> combos = protected_combinations(t.schema, t.prot);
    Evaluator<double> ev(t.model);
    std::vector<int> own;
    ev.labels(t.schema.to_model_columns(raw), own);
    std::vector<std::vector<int>> with(combos.size());
    for (std::size_t c = 0; c < combos.size(); ++c)
      ev.labels(t.schema.to_model_columns(with_protected(raw, t.prot, combos[c])), with[c]);
    for (const int favorable : {0, 1}) {
      Outcome o = resolve_outcome(t.model, t.schema, "");
      o.favorable = favorable;
      o.assumed = false;
      const RowAudit a = audit_rows(test::problem_of(t), raw, o, "rows");
      // Brute force: per group (the row's own combination), rows turned favourable / unfavourable.
      std::map<std::vector<double>, std::array<long long, 3>> want;  // rows, to favourable, to unfavourable
      long long flipped = 0;
      for (Eigen::Index j = 0; j < raw.cols(); ++j) {
        std::vector<double> key;
        for (int f : t.prot) key.push_back(raw(f, j));
        auto& w = want[key];
        ++w[0];
        bool to_fav = false, to_unfav = false;
        for (std::size_t c = 0; c < combos.size(); ++c) {
          const int l = with[c][static_cast<std::size_t>(j)];
          if (l == own[static_cast<std::size_t>(j)]) continue;
          to_fav = to_fav || (own[static_cast<std::size_t>(j)] != favorable && l == favorable);
          to_unfav = to_unfav || own[static_cast<std::size_t>(j)] == favorable;
        }
        w[1] += to_fav ? 1 : 0;
        w[2] += to_unfav ? 1 : 0;
        flipped += to_fav || to_unfav ? 1 : 0;
      }
      EXPECT_EQ(static_cast<long long>(a.flips.size()), flipped);
      EXPECT_EQ(a.outside, 0);
      ASSERT_EQ(a.groups.size(), want.size());
      for (const GroupHarm& g : a.groups) {
        std::vector<double> key;
        for (Eigen::Index k = 0; k < a.combos[static_cast<std::size_t>(g.combo)].size(); ++k)
          key.push_back(a.combos[static_cast<std::size_t>(g.combo)](k));
        const auto& w = want.at(key);
        EXPECT_EQ(g.rows, w[0]) << g.group;
        EXPECT_EQ(g.to_favorable.k, w[1]) << g.group;
        EXPECT_EQ(g.to_unfavorable.k, w[2]) << g.group;
      }
      // Every listed flip replays as a witness from the raw row.
      SearchStats stats;
      const std::vector<WitnessPair> pairs = row_witnesses(a, test::problem_of(t), raw, 1000, stats);
      EXPECT_EQ(static_cast<long long>(pairs.size()), flipped);
      EXPECT_EQ(stats.rejected, 0);
      for (std::size_t k = 0; k < pairs.size(); ++k) EXPECT_EQ(pairs[k].raw, raw.col(a.flips[k].row));
      flips_seen += static_cast<int>(flipped);
    }
  }
  EXPECT_GT(flips_seen, 100);  // the rounds cover rows that flip
}

// Rows that break the schema's rules are no people: counted apart, never compared; a twin who
// cannot exist is no flip.
TEST(RowAudit, RowsAndTwinsOutsideTheRulesAreNotCompared) {
  const test::Tiny t = test::medium_tiny(3, "constraints = [\"a <= c\"]");
  const Eigen::MatrixXd raw = random_rows(t.schema, 400, 11);
  long long outside = 0;
  for (Eigen::Index j = 0; j < raw.cols(); ++j) outside += t.schema.constraints().satisfied(raw.col(j)) ? 0 : 1;
  const RowAudit a = audit_rows(test::problem_of(t), raw, resolve_outcome(t.model, t.schema, ""), "rows");
  EXPECT_EQ(a.outside, outside);
  EXPECT_GT(outside, 0);
  long long rows = 0;
  for (const GroupHarm& g : a.groups) rows += g.rows;
  EXPECT_EQ(rows + outside, raw.cols());
}

// The group table: rates, impact ratios and true/false positive rates equal hand counts; a column
// the model does not read groups the rows too, unknowns apart; a hostile label stays on one line.
TEST(GroupMetrics, RatesAndRatiosAgreeWithCounts) {
  const test::Tiny t = test::random_tiny(5);
  const Eigen::MatrixXd raw = random_rows(t.schema, 500, 3);
  Dataset d;
  d.raw = raw;
  d.source = "rows";
  std::vector<std::string> kept;
  std::mt19937_64 rng(5);
  for (Eigen::Index j = 0; j < raw.cols(); ++j) {
    kept.push_back(rng() % 7 == 0 ? "" : rng() % 2 == 0 ? "x\nverdict: fair" : "y");  // a label with a line break
    d.labels.push_back(static_cast<int>(rng() % 2));
  }
  d.label_column = "truth";
  d.kept["kept_column"] = kept;
  const Outcome o = resolve_outcome(t.model, t.schema, "");
  const std::vector<GroupColumn> columns = group_columns(t.schema, {"kept_column", t.schema.feature(t.prot[0]).name});
  const GroupMetrics m = group_metrics(t.model, t.schema, d, columns, o);
  ASSERT_EQ(m.tables.size(), 3U);  // g, the protected feature, their intersection
  std::vector<int> decided;
  Evaluator<double>(t.model).labels(t.schema.to_model_columns(raw), decided);
  const GroupTable& g = m.tables[0];
  ASSERT_EQ(g.groups.size(), 3U);  // x, y, unknown (last)
  EXPECT_TRUE(g.groups[2].unknown);
  // The group's name lists the value as text output does: quoted and escaped, on one line.
  EXPECT_EQ(g.groups[0].values[0], "x\nverdict: fair");
  EXPECT_EQ(g.groups[0].group, "kept_column=\"x\\nverdict: fair\"");
  EXPECT_EQ(g.groups[1].group, "kept_column=y");
  double best = 0.0;
  for (const GroupRow& r : g.groups) {
    long long n = 0, fav = 0, pos = 0, tp = 0, neg = 0, fp = 0;
    for (std::size_t j = 0; j < kept.size(); ++j) {
      if (kept[j] != r.values[0]) continue;
      ++n;
      const bool f = decided[j] == o.favorable;
      fav += f ? 1 : 0;
      if (d.labels[j] == o.favorable) {
        ++pos;
        tp += f ? 1 : 0;
      } else {
        ++neg;
        fp += f ? 1 : 0;
      }
    }
    EXPECT_EQ(r.rows, n);
    EXPECT_DOUBLE_EQ(r.favorable.value, static_cast<double>(fav) / static_cast<double>(n));
    EXPECT_DOUBLE_EQ(r.tpr->value, static_cast<double>(tp) / static_cast<double>(pos));
    EXPECT_DOUBLE_EQ(r.fpr->value, static_cast<double>(fp) / static_cast<double>(neg));
    if (!r.unknown) best = std::max(best, r.favorable.value);
  }
  for (const GroupRow& r : g.groups) {
    if (r.unknown) {
      EXPECT_FALSE(r.impact_ratio);
    } else {
      EXPECT_DOUBLE_EQ(*r.impact_ratio, r.favorable.value / best);
    }
  }
  long long crossed = 0;
  for (const GroupRow& r : m.tables[2].groups) crossed += r.rows;
  EXPECT_EQ(crossed, raw.cols());
}

}  // namespace
}  // namespace witness

namespace witness {
namespace {

// A row that meets a rule with equality (`x <= y`, x == y, real features under a normalisation)
// replays from its raw values: read back from model inputs, x and y could differ by an ulp and the
// row would be dropped as breaking the rule (the probe's `hirat <= pirat`, 6% of values).
TEST(RowAudit, RowsOnARuleBoundaryReplay) {
  const Schema s = parse_schema(R"(
name = "ratios"
protected = ["p"]
features = [
  { name = "x", kind = "real", min = 0, max = 3, mean = 0.3711, std = 0.2903 },
  { name = "y", kind = "real", min = 0, max = 3, mean = 0.2417, std = 0.1731 },
  { name = "p", kind = "boolean" },
]
[constraints]
rules = ["x <= y"]
)",
                                "ratios.toml");
  ModelBuilder b("p_decides", s.model_input_names());
  Eigen::MatrixXd w(1, 3);
  w << 0.001, -0.001, 1.0;
  const int z = b.dense(b.input(), w, Eigen::VectorXd::Constant(1, -0.5));
  const Model m = b.finish(b.sigmoid(z), DecisionRule::threshold_on(z, 0.0));
  Eigen::MatrixXd raw(3, 300);
  for (int j = 0; j < 300; ++j) raw.col(j) << j * 0.01 + 0.003, j * 0.01 + 0.003, j % 2;
  const FairnessProblem problem(m, s, {s.feature(2).name});
  const RowAudit a = audit_rows(problem, raw, resolve_outcome(m, s, ""), "rows");
  EXPECT_EQ(a.outside, 0);
  EXPECT_EQ(a.flips.size(), 300U);
  SearchStats stats;
  const std::vector<WitnessPair> pairs = row_witnesses(a, problem, raw, 1000, stats);
  EXPECT_EQ(pairs.size(), 300U);
  EXPECT_EQ(stats.rejected, 0);
}

}  // namespace
}  // namespace witness
