#include "fairness/dual_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <random>
#include <string>

#include "core/error.h"
#include "domain/sampler.h"
#include "domain/schema.h"
#include "model/evaluator.h"
#include "model/loaders.h"
#include "support/paths.h"

namespace witness {
namespace {

namespace fs = std::filesystem;

using test::source_path;

using test::temp_path;

int count_op(const Model& m, OpKind op) {
  int n = 0;
  for (const Node& nd : m.nodes) n += nd.op == op ? 1 : 0;
  return n;
}

// Evaluates m on x and x' and the dual on (x, p') and checks that the dual's outputs are
// [decision values on x, decision values on x', label(x) != label(x')]: the labels always exactly,
// the values bit for bit for the duplicated form and to 1e-12 (relative) for the block-diagonal
// one, whose longer rows Eigen sums in another order. Returns the number of discriminatory pairs.
long long check_pairs(const Model& m, const DualModel& d, const Eigen::MatrixXd& x, const Eigen::MatrixXd& xp) {
  const Evaluation e1 = evaluate(m, x);
  const Evaluation e2 = evaluate(m, xp);
  const Evaluation r = evaluate(d.model, dual_inputs(d, x, xp));
  const Eigen::Index w = d.decision_width;
  EXPECT_EQ(w, e1.decision.rows());
  EXPECT_EQ(r.outputs.rows(), 2 * w + 1);
  long long value_mismatch = 0;
  double worst = 0.0;
  long long differ_mismatch = 0;
  long long discriminatory = 0;
  auto compare = [&](double dual, double direct) {
    value_mismatch += dual != direct ? 1 : 0;
    worst = std::max(worst, std::abs(dual - direct) / std::max(1.0, std::abs(direct)));
  };
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    for (Eigen::Index k = 0; k < w; ++k) {
      compare(r.outputs(k, j), e1.decision(k, j));
      compare(r.outputs(w + k, j), e2.decision(k, j));
    }
    const bool differ = e1.labels[static_cast<std::size_t>(j)] != e2.labels[static_cast<std::size_t>(j)];
    discriminatory += differ ? 1 : 0;
    differ_mismatch += r.outputs(2 * w, j) != (differ ? 1.0 : 0.0) ? 1 : 0;
    differ_mismatch += r.labels[static_cast<std::size_t>(j)] != (differ ? 1 : 0) ? 1 : 0;
  }
  if (d.block_diagonal) {
    EXPECT_LE(worst, 1e-12) << m.name << ": " << value_mismatch << " values differ in the last bits";
  } else {
    EXPECT_EQ(value_mismatch, 0) << m.name << ": largest relative difference " << worst;
  }
  EXPECT_EQ(differ_mismatch, 0) << m.name;
  return discriminatory;
}

// 5000 random pairs (x, x') that differ in the protected features only, and (x, x) pairs, which
// never differ, for both forms of the dual. Each dual also goes through an ONNX file and back.
long long check_dual(const Model& m, const Schema& s, const std::vector<int>& prot, std::uint64_t seed) {
  Sampler sampler(s, seed);
  const Eigen::MatrixXd raw = sampler.points(5000);
  Eigen::MatrixXd raw_prime = raw;
  for (Eigen::Index j = 0; j < raw.cols(); ++j) sampler.change_protected(raw_prime.col(j), prot);
  const Eigen::MatrixXd x = s.to_model_columns(raw);
  const Eigen::MatrixXd xp = s.to_model_columns(raw_prime);
  long long found = -1;
  for (const DualForm form : {DualForm::BlockDiagonal, DualForm::Duplicated}) {
    const DualModel d = make_dual_model(m, s, prot, form);
    const long long n = check_pairs(m, d, x, xp);
    if (found >= 0) {
      EXPECT_EQ(n, found) << "the two forms disagree on " << m.name;
    }
    found = n;
    EXPECT_EQ(check_pairs(m, d, x, x), 0);

    const std::string path = temp_path(d.model.name + "_" + std::to_string(seed) + ".onnx");
    save_onnx(d.model, path);
    const Model back = load_onnx(path);
    fs::remove(path);
    EXPECT_EQ(back.input_names, d.model.input_names);
    EXPECT_EQ(back.output_names, d.model.output_names);
    EXPECT_EQ(back.rule.kind, DecisionRule::Kind::Direct);
    const Eigen::MatrixXd in = dual_inputs(d, x, xp);
    const Evaluation a = evaluate(d.model, in);
    const Evaluation b = evaluate(back, in);
    EXPECT_TRUE(a.outputs == b.outputs) << "ONNX round trip changed the outputs of " << d.model.name;
    EXPECT_EQ(a.labels, b.labels);
  }
  return found;
}

std::vector<int> features(const Schema& s, const std::vector<std::string>& names) {
  std::vector<int> out;
  for (const auto& n : names) out.push_back(s.feature_index(n));
  return out;
}

TEST(DualModel, AC1SexRaceAndBoth) {
  const Model m = load_model(source_path("benchmarks/fairify/models/adult/AC1.h5"));
  const Schema s = load_schema(source_path("benchmarks/fairify/adult.toml"));
  for (const auto& names : std::vector<std::vector<std::string>>{{"sex"}, {"race"}, {"sex", "race"}}) {
    const long long found = check_dual(m, s, features(s, names), 7);
    EXPECT_GT(found, 0) << "AC1 discriminates on " << names[0] << " for some random input";
  }
  const DualModel d = make_dual_model(m, s, features(s, {"sex", "race"}));
  EXPECT_TRUE(d.block_diagonal);
  // One block-diagonal Dense per layer: as many Dense and Relu nodes as AC1 has.
  EXPECT_EQ(count_op(d.model, OpKind::Dense), count_op(m, OpKind::Dense));
  EXPECT_EQ(count_op(d.model, OpKind::Relu), count_op(m, OpKind::Relu));
  EXPECT_EQ(count_op(d.model, OpKind::Sigmoid), 0);  // the rule reads the logits
  EXPECT_LE(d.model.nodes.size(), m.nodes.size() + 12);
  const Node& first = d.model.nodes[static_cast<std::size_t>(d.model.nodes[2].inputs[0])];
  EXPECT_EQ(first.op, OpKind::Select);  // [x; x'] then [[W, 0], [0, W]]
  EXPECT_EQ(d.model.nodes[2].weights.rows(), 2 * m.nodes[1].weights.rows());
  EXPECT_EQ(d.model.nodes[2].weights.cols(), 2 * m.nodes[1].weights.cols());
  // Layout: x in order, then p' ascending (race is input 7, sex input 8).
  EXPECT_EQ(d.width_x, 13);
  EXPECT_EQ(d.protected_inputs, (std::vector<int>{7, 8}));
  ASSERT_EQ(d.model.input_names.size(), 15U);
  EXPECT_EQ(d.model.input_names[8], "sex");
  EXPECT_EQ(d.model.input_names[13], "race'");
  EXPECT_EQ(d.model.input_names[14], "sex'");
  EXPECT_EQ(d.model.output_names, (std::vector<std::string>{"y0", "y0'", "differ"}));
  EXPECT_EQ(d.model.rule.kind, DecisionRule::Kind::Direct);
  EXPECT_EQ(d.model.rule.node, d.differ_node);

  const DualModel dup = make_dual_model(m, s, features(s, {"sex", "race"}), DualForm::Duplicated);
  EXPECT_FALSE(dup.block_diagonal);
  EXPECT_EQ(count_op(dup.model, OpKind::Dense), 2 * count_op(m, OpKind::Dense));
  EXPECT_EQ(dup.model.input_names, d.model.input_names);
  EXPECT_EQ(dup.model.output_names, d.model.output_names);
}

TEST(DualModel, GC1AgeAndSex) {
  const Model m = load_model(source_path("benchmarks/fairify/models/german/GC1.h5"));
  const Schema s = load_schema(source_path("benchmarks/fairify/german.toml"));
  const long long found = check_dual(m, s, features(s, {"age", "sex"}), 11);
  EXPECT_GT(found, 0);
  EXPECT_TRUE(make_dual_model(m, s, features(s, {"age", "sex"})).block_diagonal);
}

// age, income (scaled), race (one-hot, 3 inputs), sex: 6 model inputs.
// The schema is a file so that its text is written once (tests/fixtures/schemas).
const char* const kOneHotSchema = WITNESS_SOURCE_DIR "/tests/fixtures/schemas/onehot.toml";

Eigen::MatrixXd random_matrix(std::mt19937_64& rng, Eigen::Index rows, Eigen::Index cols, double scale) {
  std::normal_distribution<double> g(0.0, scale);
  Eigen::MatrixXd w(rows, cols);
  for (Eigen::Index i = 0; i < w.size(); ++i) w.data()[i] = g(rng);
  return w;
}

// 6 -> 8 -> 5 -> outputs, ReLU; a sigmoid on one output, a softmax on several.
Model random_mlp(std::uint64_t seed, int outputs) {
  std::mt19937_64 rng(seed);
  ModelBuilder b("mlp" + std::to_string(outputs), {"i0", "i1", "i2", "i3", "i4", "i5"});
  Eigen::MatrixXd w0 = random_matrix(rng, 8, 6, 1.0);
  w0.col(0) *= 0.05;  // age is in years
  int h = b.relu(b.dense(b.input(), w0, random_matrix(rng, 8, 1, 1.0).col(0), "d0"));
  h = b.unary(OpKind::LeakyRelu, b.dense(h, random_matrix(rng, 5, 8, 1.0), random_matrix(rng, 5, 1, 1.0).col(0), "d1"),
              "lrelu", 0.1);
  const int z = b.dense(h, random_matrix(rng, outputs, 5, 1.0), random_matrix(rng, outputs, 1, 0.5).col(0), "d2");
  return b.finish(outputs == 1 ? b.sigmoid(z) : b.unary(OpKind::Softmax, z), DecisionRule{});
}

TEST(DualModel, OneHotProtectedFeatureInAnMlp) {
  const Schema s = load_schema(kOneHotSchema);
  const std::vector<int> race = {s.feature_index("race")};
  const Model threshold = random_mlp(3, 1);
  EXPECT_GT(check_dual(threshold, s, race, 5), 0);
  const Model argmax = random_mlp(4, 3);
  ASSERT_EQ(argmax.rule.kind, DecisionRule::Kind::ArgMax);
  EXPECT_GT(check_dual(argmax, s, race, 6), 0);
  EXPECT_GT(check_dual(argmax, s, {s.feature_index("race"), s.feature_index("sex")}, 8), 0);

  const DualModel d = make_dual_model(argmax, s, race);
  EXPECT_TRUE(d.block_diagonal);
  EXPECT_EQ(d.protected_inputs, (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(d.model.input_names, (std::vector<std::string>{"age", "income", "race=a", "race=b", "race=c", "sex",
                                                           "race=a'", "race=b'", "race=c'"}));
  EXPECT_EQ(d.decision_width, 3);
  EXPECT_EQ(count_op(d.model, OpKind::Softmax), 0);
  EXPECT_EQ(count_op(d.model, OpKind::LeakyRelu), 1);
}

// Two trees over age and race=b / race=c, 2 classes, argmax; optionally with an ArgMax node as the
// output, so that the rule is Direct.
Model tree_model(bool argmax_output) {
  auto te = std::make_shared<TreeEnsemble>();
  using M = TreeEnsemble::Mode;
  TreeEnsemble::Tree t1;
  t1.nodes.resize(5);
  t1.nodes[0] = {M::Leq, 0, 40.5, 1, 2, false, {}};  // age <= 40.5
  t1.nodes[1] = {M::Gt, 3, 0.5, 3, 4, false, {}};    // race=b
  t1.leaves = {{2, 0, 0.2}, {2, 1, 0.1}, {3, 1, 0.9}, {4, 0, 0.6}};
  TreeEnsemble::Tree t2;
  t2.nodes.resize(3);
  t2.nodes[0] = {M::Geq, 4, 0.5, 1, 2, false, {}};  // race=c
  t2.leaves = {{1, 1, 0.35}, {2, 0, 0.3}};
  te->trees = {t1, t2};
  te->n_targets = 2;
  te->classifier = true;
  ModelBuilder b(argmax_output ? "trees_direct" : "trees", {"i0", "i1", "i2", "i3", "i4", "i5"});
  int out = b.tree_ensemble(b.input(), te, "forest");
  if (argmax_output) out = b.argmax(out, "label");
  return b.finish(out, DecisionRule{});
}

TEST(DualModel, TreeEnsembleIsDuplicated) {
  const Schema s = load_schema(kOneHotSchema);
  const std::vector<int> race = {s.feature_index("race")};
  const Model trees = tree_model(false);
  ASSERT_EQ(trees.rule.kind, DecisionRule::Kind::ArgMax);
  EXPECT_GT(check_dual(trees, s, race, 9), 0);
  const DualModel d = make_dual_model(trees, s, race);
  EXPECT_FALSE(d.block_diagonal);
  EXPECT_EQ(count_op(d.model, OpKind::TreeEnsemble), 2);

  const Model direct = tree_model(true);
  ASSERT_EQ(direct.rule.kind, DecisionRule::Kind::Direct);
  EXPECT_GT(check_dual(direct, s, race, 10), 0);
  EXPECT_EQ(make_dual_model(direct, s, race).decision_width, 1);
}

// A graph with a skip connection and a constant: not a chain, so duplicated; the constant is shared.
TEST(DualModel, GeneralGraphIsDuplicated) {
  const Schema s = load_schema(kOneHotSchema);
  std::mt19937_64 rng(21);
  ModelBuilder b("skip", {"i0", "i1", "i2", "i3", "i4", "i5"});
  Eigen::MatrixXd w0 = random_matrix(rng, 4, 6, 1.0);
  w0.col(0) *= 0.05;
  const int h = b.dense(b.input(), w0, Eigen::VectorXd::Zero(4), "d0");
  const int c = b.constant(Eigen::VectorXd::Constant(4, 0.25), "c");
  const int r = b.binary(OpKind::Add, b.relu(h), b.binary(OpKind::Mul, h, c));
  const int z = b.dense(r, random_matrix(rng, 1, 4, 1.0), Eigen::VectorXd::Constant(1, 0.1), "d1");
  const Model m = b.finish(z, DecisionRule::threshold_on(z, 0.25));
  EXPECT_GT(check_dual(m, s, {s.feature_index("race"), s.feature_index("sex")}, 12), 0);
  const DualModel d = make_dual_model(m, s, {s.feature_index("race")});
  EXPECT_FALSE(d.block_diagonal);
  EXPECT_EQ(count_op(d.model, OpKind::Dense), 4);
  EXPECT_EQ(count_op(d.model, OpKind::Constant), 3);  // c once, the threshold and the 1 of differ
}

TEST(DualModel, RejectsBadProtectedLists) {
  const Schema s = load_schema(kOneHotSchema);
  const Model m = random_mlp(3, 1);
  EXPECT_THROW((void)make_dual_model(m, s, {}), InputError);
  EXPECT_THROW((void)make_dual_model(m, s, {9}), InputError);
  try {
    (void)make_dual_model(m, s, {2, 2});
    FAIL() << "no error for a feature listed twice";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("race"), std::string::npos) << e.what();
  }
  const Schema adult = load_schema(source_path("benchmarks/fairify/adult.toml"));
  EXPECT_THROW((void)make_dual_model(m, adult, {8}), InputError);  // 13 inputs, model takes 6
}

}  // namespace
}  // namespace witness
