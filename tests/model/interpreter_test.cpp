#include "model/interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>

#include "core/error.h"
#include "model/evaluator.h"

namespace witness {
namespace {

// A Lookup reads the row ONNX's Gather(Cast(v)) reads: trunc(v) toward zero, negative rows from
// the end, undefined outside [-rows, rows - 1]; the interpreter (double and float) and the batched
// evaluator agree at every quarter from -4.75 to 3.75 and just inside the boundaries.
TEST(Interpreter, LookupTruncatesAndCountsNegativeRowsFromTheEnd) {
  ModelBuilder b("lookup", {"v"});
  Eigen::MatrixXd table(3, 2);
  table << 10, 11, 20, 21, 30, 31;
  const int row = b.lookup(b.input(), table, "q");
  const Model m = b.finish(row, DecisionRule::argmax_of(row));
  std::vector<double> values = {-0.51, -0.99, 0.99, 2.999, -3.999, -4.0, 3.0, std::nan("")};
  for (int k = -19; k <= 15; ++k) values.push_back(k / 4.0);
  Evaluator<double> ev(m);
  for (const double v : values) {
    SCOPED_TRACE(v);
    const double t = std::trunc(v);
    const bool inside = t >= -3 && t <= 2;  // NaN: false
    Eigen::MatrixXd x(1, 1);
    x << v;
    FloatDomain<double> d;
    ModelInterpreter<FloatDomain<double>> run(m, d, {.outputs = true});
    const ModelValues<FloatDomain<double>> got = run.run({v});
    EXPECT_EQ(d.defined(), inside);
    if (!inside) {
      EXPECT_THROW((void)ev.run(x), InputError);
      continue;
    }
    const int want = static_cast<int>(t < 0 ? t + 3 : t);
    const Evaluation e = ev.run(x);
    EXPECT_DOUBLE_EQ(e.outputs(0, 0), table(want, 0));
    EXPECT_DOUBLE_EQ(got.outputs[0], table(want, 0));
    EXPECT_DOUBLE_EQ(got.outputs[1], table(want, 1));
    FloatDomain<float> f;
    ModelInterpreter<FloatDomain<float>> run32(m, f, {.outputs = true});
    EXPECT_FLOAT_EQ(run32.run({static_cast<float>(v)}).outputs[0], static_cast<float>(table(want, 0)));
  }
}

// One node's values without a decision: the mode the exact term encoding uses.
TEST(Interpreter, OneNodeModeHasNoDecision) {
  ModelBuilder b("node", {"a", "b"});
  const int sum = b.binary(OpKind::Add, b.select(b.input(), {0}), b.select(b.input(), {1}));
  const Model m = b.finish(sum, DecisionRule::threshold_on(sum, 0.0));
  FloatDomain<double> d;
  ModelInterpreter<FloatDomain<double>> node(m, d, {.node = sum});
  EXPECT_EQ(node.node_values({1.5, 2.0}), std::vector<double>{3.5});
  EXPECT_THROW((void)node.run({1.5, 2.0}), InternalError);
  EXPECT_THROW((void)(ModelInterpreter<FloatDomain<double>>(m, d, {.node = 99})), InternalError);
  ModelInterpreter<FloatDomain<double>> whole(m, d, {});
  EXPECT_THROW((void)whole.node_values({1.5, 2.0}), InternalError);
  EXPECT_EQ(whole.run({1.5, 2.0}).label, 1.0);
}

// Leaf weights listed out of node order, several per leaf and per output: the builder indexes them
// by node, and the batched evaluator (tree by tree over the rows) and the interpreter (row by row)
// add each row's weights as a direct walk of every tree does, for Sum, Average, Min and Max.
TEST(Interpreter, TreeWeightsOutOfOrderAgreeWithAWalkOfEveryTree) {
  TreeEnsemble::Tree t;
  t.nodes.resize(5);
  t.nodes[0] = {TreeEnsemble::Mode::Leq, 0, 0.5, 1, 2, false, {}};
  t.nodes[2] = {TreeEnsemble::Mode::Lt, 1, -1.0, 3, 4, false, {}};
  t.leaves = {{4, 1, 0.25}, {1, 0, 2.0}, {3, 0, -1.0}, {4, 0, 3.0}, {1, 0, 0.5}, {3, 1, 7.0}, {4, 1, -0.75}};
  TreeEnsemble::Tree u;
  u.nodes.resize(3);
  u.nodes[0] = {TreeEnsemble::Mode::Gt, 1, 0.0, 1, 2, false, {}};
  u.leaves = {{2, 1, 1.5}, {1, 0, -2.0}, {2, 0, 0.125}};
  // What each tree adds to each output at the leaf a row reaches (weights in their listed order).
  const auto walk = [](const TreeEnsemble::Tree& tree, double a, double b) {
    int id = 0;
    while (tree.nodes[id].mode != TreeEnsemble::Mode::Leaf) {
      const auto& n = tree.nodes[id];
      const double v = n.feature == 0 ? a : b;
      const bool go = n.mode == TreeEnsemble::Mode::Leq  ? v <= n.threshold
                      : n.mode == TreeEnsemble::Mode::Lt ? v < n.threshold
                                                         : v > n.threshold;
      id = go ? n.true_child : n.false_child;
    }
    std::vector<std::vector<double>> w(2);
    for (const auto& l : tree.leaves) {
      if (l.node == id) w[static_cast<std::size_t>(l.target)].push_back(l.weight);
    }
    return w;
  };
  for (const auto aggregate : {TreeEnsemble::Aggregate::Sum, TreeEnsemble::Aggregate::Average,
                               TreeEnsemble::Aggregate::Min, TreeEnsemble::Aggregate::Max}) {
    auto te = std::make_shared<TreeEnsemble>();
    te->trees = {t, u, t};
    te->n_targets = 2;
    te->aggregate = aggregate;
    te->base_values = {0.5, -0.5};
    ModelBuilder b("forest", {"a", "b"});
    const int y = b.tree_ensemble(b.input(), te, "trees");
    const Model m = b.finish(y, DecisionRule::argmax_of(y));
    Eigen::MatrixXd x(2, 25);
    for (int i = 0; i < 25; ++i) x.col(i) << -1.0 + 0.25 * (i % 5) + 0.25, -2.0 + 0.5 * (i / 5);
    const Evaluation e = evaluate(m, x);
    for (int i = 0; i < 25; ++i) {
      SCOPED_TRACE(i);
      std::vector<double> want(2, 0.0);
      std::vector<bool> seen(2, false);
      for (const auto* tree : {&t, &u, &t}) {
        const auto w = walk(*tree, x(0, i), x(1, i));
        for (std::size_t k = 0; k < 2; ++k) {
          for (const double v : w[k]) {
            if (aggregate == TreeEnsemble::Aggregate::Min) {
              want[k] = seen[k] ? std::min(want[k], v) : v;
            } else if (aggregate == TreeEnsemble::Aggregate::Max) {
              want[k] = seen[k] ? std::max(want[k], v) : v;
            } else {
              want[k] += v;
            }
            seen[k] = true;
          }
        }
      }
      for (std::size_t k = 0; k < 2; ++k) {
        if (aggregate == TreeEnsemble::Aggregate::Average) want[k] /= 3.0;
        want[k] += k == 0 ? 0.5 : -0.5;
        EXPECT_DOUBLE_EQ(e.outputs(static_cast<Eigen::Index>(k), i), want[k]);
      }
      FloatDomain<double> d;
      ModelInterpreter<FloatDomain<double>> run(m, d, {.outputs = true});
      const ModelValues<FloatDomain<double>> got = run.run({x(0, i), x(1, i)});
      EXPECT_DOUBLE_EQ(got.outputs[0], want[0]);
      EXPECT_DOUBLE_EQ(got.outputs[1], want[1]);
      EXPECT_EQ(e.labels[static_cast<std::size_t>(i)], want[1] > want[0] ? 1 : 0);
    }
  }
}

// Doubles as an exact domain sees numbers: weight() of an infinity is refused, as turning it into a
// rational is (solver/rational.h), so a tree split on an infinite threshold must be decided without one.
struct NoInfinityDomain : FloatDomain<double> {
  static double weight(double w) {
    if (!std::isfinite(w)) throw InputError("", "", "weight of a non-finite double");
    return w;
  }
};

// A one-split tree per mode and infinity (LightGBM's empty category set is x < -inf, scikit-learn's
// split on NaN alone x <= +inf): the interpreter agrees with the evaluator on every kind of value,
// in double, in float32 and without asking its domain for an infinite weight.
TEST(Interpreter, TreeSplitsOnInfiniteThresholdsAgreeWithTheEvaluator) {
  using M = TreeEnsemble::Mode;
  const double inf = std::numeric_limits<double>::infinity();
  for (const M mode : {M::Leq, M::Lt, M::Geq, M::Gt, M::Eq, M::Neq}) {
    for (const double t : {inf, -inf}) {
      for (const bool nan_true : {false, true}) {
        auto te = std::make_shared<TreeEnsemble>();
        TreeEnsemble::Tree tree;
        tree.nodes.resize(3);
        tree.nodes[0] = {mode, 0, t, 1, 2, nan_true, {}};
        tree.leaves = {{1, 0, 1.0}, {2, 0, -1.0}};
        te->trees.push_back(tree);
        ModelBuilder b("inf", {"x"});
        const int out = b.tree_ensemble(b.input(), te, "trees");
        const Model m = b.finish(out, DecisionRule::threshold_on(out, 0.0));
        Evaluator<double> ev(m);
        for (const double v : {-inf, -1e308, -1.0, 0.0, 2.5, 1e308, inf, std::nan("")}) {
          SCOPED_TRACE(::testing::Message() << "mode " << static_cast<int>(mode) << " t " << t << " x " << v);
          Eigen::MatrixXd x(1, 1);
          x << v;
          const double want = ev.run(x).outputs(0, 0);
          FloatDomain<double> d;
          EXPECT_EQ((ModelInterpreter<FloatDomain<double>>(m, d, {.outputs = true}).run({v}).outputs[0]), want);
          FloatDomain<float> f;
          EXPECT_EQ(
              (ModelInterpreter<FloatDomain<float>>(m, f, {.outputs = true}).run({static_cast<float>(v)}).outputs[0]),
              static_cast<float>(Evaluator<float>(m).run(x).outputs(0, 0)));
          if (!std::isfinite(v)) continue;  // the exact domains' numbers are finite
          NoInfinityDomain e;
          EXPECT_EQ((ModelInterpreter<NoInfinityDomain>(m, e, {.outputs = true}).run({v}).outputs[0]), want);
        }
      }
    }
  }
}

}  // namespace
}  // namespace witness
