#include "model/evaluator.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "model/loaders.h"

namespace witness {
namespace {

// y = relu(x0 - x1), z = 2 y - 1, sigmoid output.
Model tiny() {
  ModelBuilder b("tiny", {"a", "b"});
  Eigen::MatrixXd w1(1, 2);
  w1 << 1, -1;
  int h = b.relu(b.dense(b.input(), w1, Eigen::VectorXd::Zero(1), "d1"));
  Eigen::MatrixXd w2(1, 1);
  w2 << 2;
  Eigen::VectorXd b2(1);
  b2 << -1;
  int z = b.dense(h, w2, b2, "d2");
  return b.finish(b.sigmoid(z), DecisionRule{});
}

TEST(Evaluator, ThresholdLooksThroughSigmoid) {
  Model m = tiny();
  EXPECT_EQ(m.rule.kind, DecisionRule::Kind::Threshold);
  Eigen::MatrixXd x(2, 3);
  x << 3, 0, 0.5, 1, 0, 0;
  Evaluation r = evaluate(m, x);
  EXPECT_EQ(r.labels, (std::vector<int>{1, 0, 0}));  // z = 3, -1, 0 (0 is not > 0)
  EXPECT_DOUBLE_EQ(r.decision(0, 0), 3.0);
  EXPECT_NEAR(r.outputs(0, 0), 1.0 / (1.0 + std::exp(-3.0)), 1e-15);
  Evaluation f = evaluate(m, x, Precision::Float32);
  EXPECT_EQ(f.labels, r.labels);
}

TEST(Evaluator, WrongWidthIsInputError) {
  Model m = tiny();
  EXPECT_THROW(evaluate(m, Eigen::MatrixXd::Zero(3, 1)), InputError);
}

TEST(Evaluator, ArgMaxTiesGoToLowerIndex) {
  ModelBuilder b("am", {"a", "b", "c"});
  Model m = b.finish(b.unary(OpKind::Identity, b.input()), DecisionRule{});
  ASSERT_EQ(m.rule.kind, DecisionRule::Kind::ArgMax);
  Eigen::MatrixXd x(3, 2);
  x << 1, 0, 5, 2, 5, 2;
  EXPECT_EQ(evaluate(m, x).labels, (std::vector<int>{1, 1}));
}

TEST(Evaluator, ElementwiseOpsWhereLookupConcat) {
  ModelBuilder b("ops", {"i", "v"});
  int i = b.select(b.input(), {0});
  int v = b.select(b.input(), {1});
  Eigen::MatrixXd table(3, 2);
  table << 10, 11, 20, 21, 30, 31;
  int row = b.lookup(i, table, "q");  // [t(i,0), t(i,1)]
  int two = b.constant(Eigen::VectorXd::Constant(1, 2.0));
  int gt = b.binary(OpKind::Greater, v, two);  // v > 2
  int sel = b.where(gt, b.binary(OpKind::Mul, v, two), b.binary(OpKind::Div, v, two));
  int cat = b.concat({row, sel, b.binary(OpKind::Sub, v, two), b.argmax(row)});
  Model m = b.finish(cat, DecisionRule::direct(cat));
  Eigen::MatrixXd x(2, 2);
  x << 2, 0, 3, 1;
  Evaluation r = evaluate(m, x);
  EXPECT_DOUBLE_EQ(r.outputs(0, 0), 30);
  EXPECT_DOUBLE_EQ(r.outputs(1, 0), 31);
  EXPECT_DOUBLE_EQ(r.outputs(2, 0), 6);    // 3 > 2 -> 3 * 2
  EXPECT_DOUBLE_EQ(r.outputs(2, 1), 0.5);  // 1 / 2
  EXPECT_DOUBLE_EQ(r.outputs(3, 1), -1);
  EXPECT_DOUBLE_EQ(r.outputs(4, 0), 1);  // argmax of [30, 31]
  Eigen::MatrixXd bad(2, 1);
  bad << 7, 0;
  EXPECT_THROW(evaluate(m, bad), InputError);  // row 7 is not in the table
}

TEST(Evaluator, TreeEnsembleSumAndAverage) {
  auto te = std::make_shared<TreeEnsemble>();
  TreeEnsemble::Tree t;
  t.nodes.resize(3);
  t.nodes[0] = {TreeEnsemble::Mode::Leq, 0, 1.5, 1, 2, false, {}};
  t.leaves = {{1, 0, 1.0}, {2, 1, 1.0}};
  te->trees = {t, t};
  te->n_targets = 2;
  te->classifier = true;
  te->aggregate = TreeEnsemble::Aggregate::Average;
  ModelBuilder b("tree", {"f"});
  int y = b.tree_ensemble(b.input(), te, "trees");
  Model m = b.finish(y, DecisionRule{});
  Eigen::MatrixXd x(1, 3);
  x << 1, 1.5, 2;
  Evaluation r = evaluate(m, x);
  EXPECT_EQ(r.labels, (std::vector<int>{0, 0, 1}));
  EXPECT_DOUBLE_EQ(r.outputs(0, 0), 1.0);
}

TEST(ModelBuilder, RejectsBadShapesAndNonFinite) {
  ModelBuilder b("bad", {"a", "b"});
  EXPECT_THROW(b.dense(b.input(), Eigen::MatrixXd::Zero(2, 3), Eigen::VectorXd::Zero(2)), InputError);
  EXPECT_THROW(b.dense(b.input(), Eigen::MatrixXd::Zero(2, 2), Eigen::VectorXd::Zero(3)), InputError);
  Eigen::MatrixXd w = Eigen::MatrixXd::Zero(1, 2);
  w(0, 1) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(b.dense(b.input(), w, Eigen::VectorXd::Zero(1)), InputError);
  EXPECT_THROW(b.select(b.input(), {2}), InputError);
}

}  // namespace
}  // namespace witness

namespace witness {
namespace {

// copy_node rebuilds any graph: the copy evaluates identically.
TEST(ModelBuilder, CopyNodeRebuildsTheGraph) {
  ModelBuilder b("ops", {"i", "v"});
  int i = b.select(b.input(), {0});
  int v = b.select(b.input(), {1});
  Eigen::MatrixXd table(3, 2);
  table << 10, 11, 20, 21, 30, 31;
  int two = b.constant(Eigen::VectorXd::Constant(1, 2.0));
  int sel = b.where(b.binary(OpKind::Greater, v, two), b.binary(OpKind::Mul, v, two), b.lookup(i, table));
  int out = b.concat({sel, b.argmax(sel), b.unary(OpKind::LeakyRelu, v, "lr", 0.25)});
  const Model m = b.finish(out, DecisionRule::argmax_of(out));
  ModelBuilder c("copy", m.input_names);
  std::vector<int> ids(m.nodes.size(), 0);
  for (std::size_t k = 1; k < m.nodes.size(); ++k) {
    std::vector<int> in;
    for (int id : m.nodes[k].inputs) in.push_back(ids[static_cast<std::size_t>(id)]);
    ids[k] = c.copy_node(m.nodes[k], in, m.nodes[k].name);
  }
  const Model copy = c.finish(ids[static_cast<std::size_t>(m.output)],
                              DecisionRule::argmax_of(ids[static_cast<std::size_t>(m.output)]));
  Eigen::MatrixXd x(2, 3);
  x << 0, 1, 2, 3, -4, 1;
  EXPECT_EQ(evaluate(m, x).outputs, evaluate(copy, x).outputs);
  EXPECT_THROW(c.copy_node(m.nodes[static_cast<std::size_t>(sel)], {1}, "bad"), InputError);
}

}  // namespace
}  // namespace witness
