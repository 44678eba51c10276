#include "symbolic/network_encoding.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "model/evaluator.h"
#include "model/model.h"

namespace witness {
namespace {

std::vector<std::string> names(int n) {
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) out.push_back("x" + std::to_string(i));
  return out;
}

std::vector<Term> input_terms(int n) {
  std::vector<Term> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) out.push_back(Term::var(i));
  return out;
}

Eigen::MatrixXd random_matrix(int rows, int cols, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::MatrixXd w(rows, cols);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) w(r, c) = u(rng);
  }
  return w;
}

// A random Dense/ReLU (or LeakyReLU) network with arbitrary double weights; `outputs` logits, no
// final activation, so the output node is the rule's node.
Model random_network(std::uint64_t seed, int inputs, const std::vector<int>& hidden, int outputs, bool leaky) {
  std::mt19937_64 rng(seed);
  ModelBuilder b("random" + std::to_string(seed), names(inputs));
  int x = b.input();
  int width = inputs;
  for (int h : hidden) {
    const int d = b.dense(x, random_matrix(h, width, rng), random_matrix(h, 1, rng).col(0));
    x = leaky ? b.unary(OpKind::LeakyRelu, d, "leaky", 0.1) : b.relu(d);
    width = h;
  }
  const int z = b.dense(x, random_matrix(outputs, width, rng), random_matrix(outputs, 1, rng).col(0));
  return b.finish(z, outputs == 1 ? DecisionRule::threshold_on(z, 0.0) : DecisionRule::argmax_of(z));
}

// Add, Sub, Mul and Div by constants, Select, Concat, Identity and Where with a constant condition.
Model mixed_network() {
  std::mt19937_64 rng(7);
  ModelBuilder b("mixed", names(4));
  const int h = b.relu(b.dense(b.input(), random_matrix(5, 4, rng), random_matrix(5, 1, rng).col(0)));
  const int head = b.select(h, {0, 1, 2});
  const int tail = b.select(b.input(), {3, 0, 2});
  const int sum = b.binary(OpKind::Add, head, tail);
  const int diff = b.binary(OpKind::Sub, tail, head);
  Eigen::VectorXd k(3);
  k << 0.75, -1.5, 3.0;
  const int scaled = b.binary(OpKind::Mul, b.constant(k), diff);
  const int halved = b.binary(OpKind::Div, sum, b.constant(Eigen::VectorXd::Constant(1, 3.0)));  // broadcast
  Eigen::VectorXd cond(3);
  cond << 1, 0, 1;
  const int chosen = b.where(b.constant(cond), scaled, halved);
  const int both = b.concat({chosen, b.unary(OpKind::Identity, sum), b.relu(b.select(h, {3, 4}))});
  const int z = b.dense(both, random_matrix(3, 8, rng), random_matrix(3, 1, rng).col(0));
  return b.finish(b.unary(OpKind::Softmax, z), DecisionRule::argmax_of(z));
}

// The exact encoding at random integer points: the double evaluator's values within 1e-9, and
// label_is holds for the evaluator's label and no other.
void check_against_evaluator(const Model& m, std::uint64_t seed) {
  SCOPED_TRACE(m.name);
  const int n = m.input_width();
  const std::vector<Term> z = encode_node(m, m.rule.node, input_terms(n));
  ASSERT_EQ(static_cast<int>(z.size()), m.nodes[static_cast<std::size_t>(m.rule.node)].width);
  const int labels = label_count(m);
  std::vector<Constraint> label_of;
  label_of.reserve(static_cast<std::size_t>(labels));
  for (int k = 0; k < labels; ++k) label_of.push_back(label_is(m, z, k));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> coord(-6, 6);
  Evaluator<double> ev(m);
  for (int trial = 0; trial < 40; ++trial) {
    Eigen::VectorXd x(n);
    for (int i = 0; i < n; ++i) x[i] = coord(rng);
    const auto value_of = [&](int id) { return Rational(static_cast<int>(x[id])); };
    const Evaluation e = ev.run(x);
    for (std::size_t r = 0; r < z.size(); ++r) {
      const double exact = evaluate(z[r], value_of).to_double();
      const double concrete = e.decision(static_cast<Eigen::Index>(r), 0);
      EXPECT_NEAR(exact, concrete, 1e-9 * std::max(1.0, std::abs(concrete))) << "value " << r << " trial " << trial;
    }
    for (int k = 0; k < labels; ++k) {
      EXPECT_EQ(evaluate(label_of[static_cast<std::size_t>(k)], value_of), k == e.labels[0])
          << "label " << k << " trial " << trial;
    }
  }
}

TEST(NetworkEncoding, RandomReluNetworksMatchTheEvaluator) {
  check_against_evaluator(random_network(1, 3, {4}, 1, false), 11);
  check_against_evaluator(random_network(2, 5, {6, 4}, 1, false), 12);
  check_against_evaluator(random_network(3, 4, {5, 5, 3}, 1, false), 13);
  check_against_evaluator(random_network(4, 6, {8, 4}, 3, false), 14);  // argmax
  check_against_evaluator(random_network(5, 3, {4, 4}, 1, true), 15);   // LeakyReLU
}

TEST(NetworkEncoding, MixedOpsMatchTheEvaluator) { check_against_evaluator(mixed_network(), 21); }

// Ops the interpreter gives every domain: comparisons, Where on an input-dependent condition and
// ArgMax become exact ite terms.
TEST(NetworkEncoding, ComparisonsWhereAndArgMaxMatchTheEvaluator) {
  std::mt19937_64 rng(9);
  ModelBuilder b("piecewise", names(3));
  const int x = b.input();
  const int h = b.relu(b.dense(x, random_matrix(3, 3, rng), random_matrix(3, 1, rng).col(0)));
  const int above = b.binary(OpKind::Greater, h, b.select(x, {0, 1, 2}));
  const int at_most = b.binary(OpKind::LessEqual, b.select(x, {2, 1, 0}), h);
  const int chosen = b.where(above, h, b.select(x, {1, 2, 0}));
  const int best = b.argmax(b.concat({chosen, at_most}));
  const int z =
      b.dense(b.concat({chosen, above, at_most, best}), random_matrix(2, 10, rng), random_matrix(2, 1, rng).col(0));
  check_against_evaluator(b.finish(z, DecisionRule::argmax_of(z)), 41);
}

TEST(NetworkEncoding, RuleNodeBelowSigmoidIsEncoded) {
  std::mt19937_64 rng(3);
  ModelBuilder b("sig", names(2));
  const int z = b.dense(b.relu(b.dense(b.input(), random_matrix(3, 2, rng), random_matrix(3, 1, rng).col(0))),
                        random_matrix(1, 3, rng), Eigen::VectorXd::Constant(1, 0.5));
  const Model m = b.finish(b.sigmoid(z), DecisionRule::threshold_on(z, 0.25));
  EXPECT_NO_THROW((void)encode_node(m, m.rule.node, input_terms(2)));
  check_against_evaluator(m, 31);
  // The output itself is a Sigmoid: not piecewise linear.
  try {
    (void)encode_node(m, m.output, input_terms(2));
    ADD_FAILURE() << "no UnsupportedError";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("is Sigmoid"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("piecewise-linear"), std::string::npos) << e.what();
  }
}

TEST(NetworkEncoding, SharedNodesAreEncodedOnce) {
  std::mt19937_64 rng(4);
  ModelBuilder b("shared", names(2));
  const int h = b.relu(b.dense(b.input(), random_matrix(2, 2, rng), random_matrix(2, 1, rng).col(0)));
  const int both = b.concat({h, h});
  const Model m = b.finish(both, DecisionRule::argmax_of(both));
  const std::vector<Term> v = encode_node(m, both, input_terms(2));
  ASSERT_EQ(v.size(), 4U);
  for (std::size_t r = 0; r < 2; ++r) {
    ASSERT_EQ(v[r].nodes().size(), 1U);
    ASSERT_EQ(v[r + 2].nodes().size(), 1U);
    EXPECT_EQ(v[r].nodes()[0].second, v[r + 2].nodes()[0].second);  // the same ite node
  }
}

TEST(NetworkEncoding, WeightsAreExact) {
  ModelBuilder b("exact", names(1));
  const int z = b.dense(b.input(), Eigen::MatrixXd::Constant(1, 1, 0.1), Eigen::VectorXd::Constant(1, 0.2));
  const Model m = b.finish(z, DecisionRule::threshold_on(z, 0.0));
  const std::vector<Term> v = encode_node(m, z, input_terms(1));
  ASSERT_EQ(v.size(), 1U);
  EXPECT_EQ(v[0].vars().at(0), Rational::from_double(0.1));
  EXPECT_EQ(v[0].constant(), Rational::from_double(0.2));
}

TEST(NetworkEncoding, LabelIsFollowsTheRule) {
  ModelBuilder b("rule", names(3));
  const int x = b.input();
  const Model thr = b.finish(x, DecisionRule::threshold_on(x, 0.5, 1));
  const std::vector<Term> at_threshold = {Term(7), Term(Rational(1, 2)), Term(-3)};
  EXPECT_EQ(label_is(thr, at_threshold, 0).kind(), Constraint::Kind::True);  // strict: 0.5 > 0.5 is false
  EXPECT_EQ(label_is(thr, at_threshold, 1).kind(), Constraint::Kind::False);
  EXPECT_EQ(label_is(thr, at_threshold, 2).kind(), Constraint::Kind::False);  // no such label
  EXPECT_EQ(label_count(thr), 2);

  ModelBuilder b2("argmax", names(3));
  const int y = b2.input();
  const Model am = b2.finish(y, DecisionRule::argmax_of(y));
  EXPECT_EQ(label_count(am), 3);
  const std::vector<Term> tie = {Term(1), Term(1), Term(0)};  // ties go to the lowest index
  EXPECT_EQ(label_is(am, tie, 0).kind(), Constraint::Kind::True);
  EXPECT_EQ(label_is(am, tie, 1).kind(), Constraint::Kind::False);
  EXPECT_EQ(label_is(am, tie, 2).kind(), Constraint::Kind::False);
  const std::vector<Term> tie_high = {Term(0), Term(2), Term(2)};
  EXPECT_EQ(label_is(am, tie_high, 1).kind(), Constraint::Kind::True);
  EXPECT_EQ(label_is(am, tie_high, 2).kind(), Constraint::Kind::False);
  EXPECT_EQ(label_is(am, tie_high, -1).kind(), Constraint::Kind::False);

  ModelBuilder b3("direct", names(1));
  const Model direct = b3.finish(b3.input(), DecisionRule::direct(b3.input()));
  EXPECT_THROW((void)label_is(direct, {Term(1)}, 1), UnsupportedError);
  EXPECT_THROW((void)label_count(direct), UnsupportedError);
}

TEST(NetworkEncoding, UnsupportedOpsThrow) {
  auto expect_unsupported = [](const Model& m, int node, const std::string& op) {
    SCOPED_TRACE(op);
    try {
      (void)encode_node(m, node, input_terms(m.input_width()));
      ADD_FAILURE() << "no UnsupportedError";
    } catch (const UnsupportedError& e) {
      EXPECT_NE(std::string(e.what()).find(op), std::string::npos) << e.what();
    }
  };
  ModelBuilder b("bad", names(2));
  const int x = b.input();
  const int tanh = b.unary(OpKind::Tanh, x, "t");
  const int softmax = b.unary(OpKind::Softmax, x, "s");
  const int greater = b.binary(OpKind::Greater, x, b.constant(Eigen::VectorXd::Zero(1)), "g");
  const int product = b.binary(OpKind::Mul, x, x, "prod");
  const int quotient = b.binary(OpKind::Div, b.constant(Eigen::VectorXd::Ones(1)), x, "quot");
  const int by_zero = b.binary(OpKind::Div, x, b.constant(Eigen::VectorXd::Zero(1)), "zero");
  const int where = b.where(x, x, x, "w");
  const int argmax = b.argmax(x, "am");
  const int lookup = b.lookup(b.select(x, {0}), Eigen::MatrixXd::Identity(3, 3), "lk");
  const Model m = b.finish(x, DecisionRule::argmax_of(x));
  expect_unsupported(m, tanh, "node 't' is Tanh");
  expect_unsupported(m, softmax, "node 's' is Softmax");
  expect_unsupported(m, product, "node 'prod'");
  expect_unsupported(m, quotient, "node 'quot'");
  expect_unsupported(m, by_zero, "node 'zero' divides by zero");
  expect_unsupported(m, lookup, "node 'lk'");
  // Comparisons, Where and ArgMax are piecewise linear: exact ite terms (checked against the
  // evaluator in ComparisonsWhereAndArgMaxMatchTheEvaluator).
  for (const int node : {greater, where, argmax}) EXPECT_NO_THROW((void)encode_node(m, node, input_terms(2)));
  // Nodes that do not lead to the one asked for are never looked at.
  EXPECT_EQ(encode_node(m, x, input_terms(2)).size(), 2U);
  EXPECT_THROW((void)encode_node(m, x, input_terms(3)), InternalError);
}

}  // namespace
}  // namespace witness
