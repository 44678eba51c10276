#include "symbolic/concolic.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "domain/schema.h"
#include "model/evaluator.h"
#include "model/loaders.h"

namespace witness {
namespace {

std::string src(const std::string& rel) { return std::string(WITNESS_SOURCE_DIR) + "/" + rel; }

Eigen::VectorXd random_input(const Schema& s, std::mt19937_64& rng) {
  Eigen::VectorXd raw(s.size());
  for (int i = 0; i < s.size(); ++i) {
    const Feature& f = s.feature(i);
    const double lo = f.kind == FeatureKind::Categorical ? 0.0 : f.min;
    const double hi = f.kind == FeatureKind::Categorical ? static_cast<double>(f.categories.size() - 1) : f.max;
    if (f.integral()) {
      raw[i] =
          static_cast<double>(std::uniform_int_distribution<long>(static_cast<long>(lo), static_cast<long>(hi))(rng));
    } else {
      raw[i] = std::uniform_real_distribution<double>(lo, hi)(rng);
    }
  }
  return s.to_model(raw);
}

// The checks of a run against the concrete model and exact arithmetic at x.
void check_run(const Model& m, const Eigen::VectorXd& x, const std::vector<bool>& sym, const ConcolicRun& r) {
  Evaluator<double> ev(m);
  const Evaluation e = ev.run(x);
  EXPECT_EQ(r.label, e.labels[0]);
  const int row = m.rule.kind == DecisionRule::Kind::ArgMax ? r.label : m.rule.index;
  EXPECT_EQ(r.decision_value, e.decision(row, 0));  // bit-identical
  auto value_of = [&](int v) {
    EXPECT_TRUE(sym[static_cast<std::size_t>(v)]);  // only symbolic inputs appear
    return Rational::from_double(x[v]);
  };
  for (const BranchCondition& b : r.path) {
    if (std::abs(b.concrete) > 1e-9) {
      EXPECT_TRUE(evaluate(b.constraint, value_of)) << "node " << b.node << " index " << b.index;
    }
  }
  EXPECT_NEAR(evaluate(r.decision_expr, value_of).to_double(), r.decision_value, 1e-9);
  EXPECT_FALSE(r.concretised);
}

TEST(Concolic, Ac1MatchesEvaluatorAndExactArithmetic) {
  const Model m = load_model(src("benchmarks/fairify/models/adult/AC1.h5"));
  const Schema s = load_schema(src("benchmarks/fairify/adult.toml"));
  ASSERT_EQ(m.input_width(), s.model_width());
  std::mt19937_64 rng(7);
  ConcolicEvaluator ce(m);
  std::vector<bool> all(static_cast<std::size_t>(m.input_width()), true);
  std::vector<bool> only_sex(static_cast<std::size_t>(m.input_width()), false);
  only_sex[static_cast<std::size_t>(s.feature_index("sex"))] = true;
  int with_decision = 0;
  for (int t = 0; t < 40; ++t) {
    const Eigen::VectorXd x = random_input(s, rng);
    const ConcolicRun r = ce.run(x, all);
    // The decision predicate is the last branch, unless every path to the logit is inactive.
    if (!r.decision_expr.is_constant()) {
      ASSERT_FALSE(r.path.empty());
      EXPECT_TRUE(r.path.back().is_decision);
      EXPECT_EQ(r.path.back().taken, r.label == 1);
      ++with_decision;
    }
    check_run(m, x, all, r);
    const ConcolicRun r1 = ce.run(x, only_sex);
    check_run(m, x, only_sex, r1);
    for (const BranchCondition& b : r1.path) EXPECT_LE(b.constraint.term().vars().size(), 1U);
  }
  EXPECT_GE(with_decision, 3);  // AC1 (16-8) is often all inactive on uniform random inputs
  // Nothing symbolic: no branches at all, same label.
  const Eigen::VectorXd x = random_input(s, rng);
  const ConcolicRun r = ce.run(x, std::vector<bool>(static_cast<std::size_t>(m.input_width()), false));
  EXPECT_TRUE(r.path.empty());
  EXPECT_TRUE(r.decision_expr.is_constant());
}

TEST(Concolic, Bm4Timing) {
  const Model m = load_model(src("benchmarks/fairify/models/bank/BM4.h5"));
  const Schema s = load_schema(src("benchmarks/fairify/bank.toml"));
  std::mt19937_64 rng(3);
  ConcolicEvaluator ce(m);
  const std::vector<bool> all(static_cast<std::size_t>(m.input_width()), true);
  const int n = 20;
  std::vector<Eigen::VectorXd> xs;
  for (int i = 0; i < n; ++i) xs.push_back(random_input(s, rng));
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t branches = 0;
  for (const auto& x : xs) branches += ce.run(x, all).path.size();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / n;
  std::printf("BM4 (%d inputs): %.3f ms per concolic run, %.1f branches per run\n", m.input_width(), ms,
              static_cast<double>(branches) / n);
  check_run(m, xs[0], all, ce.run(xs[0], all));
}

Model tiny_ops_model() {
  ModelBuilder b("ops", {"a", "b", "c"});
  const int sel = b.select(b.input(), {0, 1});  // a, b
  const int k = b.constant(Eigen::VectorXd::Constant(1, 0.5));
  const int scaled = b.binary(OpKind::Mul, sel, k);                                // 0.5 a, 0.5 b
  const int shifted = b.binary(OpKind::Sub, scaled, b.select(b.input(), {2, 2}));  // - c
  const int div = b.binary(OpKind::Div, shifted, b.constant(Eigen::VectorXd::Constant(1, 4.0)));
  const int leaky = b.unary(OpKind::LeakyRelu, div, "", 0.125);
  const int cat = b.concat({leaky, b.unary(OpKind::Identity, sel)});
  Eigen::MatrixXd w(2, 4);
  w << 1, -1, 0.25, 0, -0.5, 1, 0, 0.75;
  const int z = b.dense(cat, w, Eigen::VectorXd::Constant(2, 0.125));
  return b.finish(b.unary(OpKind::Softmax, z), DecisionRule::argmax_of(z));
}

TEST(Concolic, LinearOpsAndArgMaxAreExact) {
  const Model m = tiny_ops_model();
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-4.0, 4.0);
  const std::vector<bool> all(3, true);
  for (int t = 0; t < 50; ++t) {
    Eigen::VectorXd x(3);
    x << u(rng), u(rng), u(rng);
    const ConcolicRun r = run_concolic(m, x, all);
    check_run(m, x, all, r);
    int decisions = 0;
    for (const auto& bc : r.path) decisions += bc.is_decision ? 1 : 0;
    EXPECT_EQ(decisions, 1);  // k - 1 comparisons for 2 outputs
  }
}

TEST(Concolic, NonLinearMulIsConcretised) {
  ModelBuilder b("sq", {"a"});
  const int sq = b.binary(OpKind::Mul, b.input(), b.input());
  const int z = b.dense(sq, Eigen::MatrixXd::Constant(1, 1, 1.0), Eigen::VectorXd::Constant(1, -2.0));
  const Model m = b.finish(z, DecisionRule::threshold_on(z, 0.0));
  Eigen::VectorXd x(1);
  x << 3.0;
  const ConcolicRun r = run_concolic(m, x, {true});
  EXPECT_TRUE(r.concretised);
  EXPECT_EQ(r.label, 1);
  EXPECT_TRUE(r.path.empty());  // the logit no longer depends on a
  EXPECT_EQ(r.decision_expr.constant(), Rational(7));
}

}  // namespace
}  // namespace witness
