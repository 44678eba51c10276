#include "fairness/local_explanation.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

#include "domain/sampler.h"
#include "solver/solver.h"
#include "support/sanitized.h"
#include "support/tiny_networks.h"

namespace witness::test {
namespace {

constexpr const char* kMixed = R"(
name = "mixed"
protected = ["p"]
features = [
  { name = "a", kind = "integer", min = 0, max = 9 },
  { name = "r", kind = "real", min = -1.5, max = 2.5 },
  { name = "c", kind = "categorical", categories = ["u", "v", "w"] },
  { name = "p", kind = "boolean" },
]
)";

bool holds(const PathPredicate& p, const Eigen::VectorXd& x) {
  return p.greater ? x(p.feature) > p.threshold : x(p.feature) <= p.threshold;
}

// solve_path against Z3 on random predicate sets: the same feasibility, and a solution that is in
// the domain, satisfies every predicate and keeps the unconstrained features.
TEST(SolvePath, AgreesWithZ3AndSatisfiesEveryPredicate) {
  const Schema s = schema_of(kMixed);
  std::mt19937_64 rng(3);
  Sampler sampler(s, 5);
  int feasible = 0;
  // 50 rounds under the sanitizers, where each round's Z3 context costs 0.1 s.
  for (int round = 0; round < sized(150, 50); ++round) {
    std::vector<PathPredicate> path;
    const int n = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < n; ++k) {
      PathPredicate p;
      p.feature = static_cast<int>(rng() % 3);
      const Feature& f = s.feature(p.feature);
      p.threshold = std::uniform_real_distribution<double>(f.min - 1, f.max + 1)(rng);
      if (rng() % 3 == 0) p.threshold = std::round(p.threshold);  // integral thresholds too
      p.greater = rng() % 2 == 0;
      path.push_back(p);
    }
    const Eigen::VectorXd near = sampler.point();
    std::mt19937_64 draw(round);
    const std::optional<Eigen::VectorXd> nearest = solve_path(s, path, near, nullptr);
    const std::optional<Eigen::VectorXd> random = solve_path(s, path, near, &draw);

    auto z3 = make_solver("z3");
    std::vector<int> vars;
    for (int f = 0; f < s.size(); ++f) {
      const Feature& feat = s.feature(f);
      vars.push_back(feat.integral()
                         ? z3->int_var(feat.name, static_cast<long long>(feat.min), static_cast<long long>(feat.max))
                         : z3->real_var(feat.name, Rational::from_double(feat.min), Rational::from_double(feat.max)));
    }
    for (const PathPredicate& p : path) {
      const Term v = Term::var(vars[static_cast<std::size_t>(p.feature)]);
      const Term t = Rational::from_double(p.threshold);
      z3->assert_(p.greater ? gt(v, t) : le(v, t));
    }
    const bool sat = z3->check(5.0) == CheckResult::Sat;
    ASSERT_EQ(sat, nearest.has_value()) << "round " << round;
    ASSERT_EQ(sat, random.has_value()) << "round " << round;
    if (!sat) continue;
    ++feasible;
    for (const Eigen::VectorXd& x : {*nearest, *random}) {
      EXPECT_TRUE(s.contains(x)) << s.display_row(x);
      for (const PathPredicate& p : path) EXPECT_TRUE(holds(p, x)) << "round " << round;
      EXPECT_EQ(x(3), near(3));  // p is never constrained
    }
    // The nearest solution keeps every feature whose value already qualifies.
    for (int f = 0; f < 3; ++f) {
      bool ok = true;
      for (const PathPredicate& p : path)
        if (p.feature == f) ok = ok && holds(p, near);
      if (ok) {
        EXPECT_EQ((*nearest)(f), near(f)) << "round " << round << " feature " << f;
      }
    }
  }
  EXPECT_GT(feasible, sized(30, 10));
}

TEST(LocalExplainer, PerturbationsComeFromTheDataAndStartWithTheInput) {
  const Schema s = schema_of(kMixed);
  const Eigen::MatrixXd data = Sampler(s, 1).points(200);
  const LocalExplainer lime(s, data, 100);
  std::mt19937_64 rng(2);
  const Eigen::VectorXd x = Sampler(s, 9).point();
  const Eigen::MatrixXd around = lime.perturb(x, rng);
  ASSERT_EQ(around.cols(), 100);
  EXPECT_EQ(around.col(0), x);
  for (int f = 0; f < s.size(); ++f) {
    const std::set<double> values(data.row(f).begin(), data.row(f).end());
    for (Eigen::Index j = 1; j < around.cols(); ++j) EXPECT_EQ(values.count(around(f, j)), 1U);
  }
}

TEST(LocalExplainer, PathFindsTheDecidingFeatureWithFullConfidence) {
  const Schema s = schema_of(kMixed);
  const Eigen::MatrixXd data = Sampler(s, 1).points(500);
  const LocalExplainer lime(s, data, 400);
  std::mt19937_64 rng(4);
  for (const double a : {2.0, 7.0}) {
    Eigen::VectorXd x = data.col(0);
    x(0) = a;
    const Eigen::MatrixXd around = lime.perturb(x, rng);
    std::vector<int> labels;
    for (Eigen::Index j = 0; j < around.cols(); ++j) labels.push_back(around(0, j) > 4 ? 1 : 0);  // label: a > 4
    const std::vector<PathPredicate> path = lime.explain(around, labels, 5);
    ASSERT_EQ(path.size(), 1U);  // one split separates the labels
    EXPECT_EQ(path[0].feature, 0);
    EXPECT_EQ(path[0].threshold, 4.5);
    EXPECT_EQ(path[0].greater, a > 4);
    EXPECT_DOUBLE_EQ(path[0].confidence, 1.0);
  }
}

TEST(LocalExplainer, PathHoldsForTheInputAndRespectsTheDepth) {
  const Schema s = schema_of(kMixed);
  const Eigen::MatrixXd data = Sampler(s, 1).points(500);
  const LocalExplainer lime(s, data, 300);
  std::mt19937_64 rng(5);
  for (int round = 0; round < 30; ++round) {
    const Eigen::VectorXd x = data.col(round);
    const Eigen::MatrixXd around = lime.perturb(x, rng);
    std::vector<int> labels;
    for (Eigen::Index j = 0; j < around.cols(); ++j)  // a noisy mix of features
      labels.push_back(around(0, j) + 2 * around(1, j) - around(2, j) + (j % 7 == 0 ? 3 : 0) > 4 ? 1 : 0);
    for (const int depth : {1, 3, 8}) {
      const std::vector<PathPredicate> path = lime.explain(around, labels, depth);
      EXPECT_LE(static_cast<int>(path.size()), depth);
      for (const PathPredicate& p : path) {
        EXPECT_TRUE(holds(p, x));
        EXPECT_GE(p.confidence, 0.0);
        EXPECT_LE(p.confidence, 1.0);
      }
    }
  }
}

TEST(LocalExplainer, PureLabelsGiveAnEmptyPath) {
  const Schema s = schema_of(kMixed);
  const Eigen::MatrixXd data = Sampler(s, 1).points(100);
  const LocalExplainer lime(s, data, 50);
  std::mt19937_64 rng(6);
  const Eigen::MatrixXd around = lime.perturb(data.col(0), rng);
  EXPECT_TRUE(lime.explain(around, std::vector<int>(50, 1), 8).empty());
}

}  // namespace
}  // namespace witness::test
