#include "fairness/transform.h"

#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <string>

#include "core/error.h"
#include "domain/sampler.h"
#include "domain/schema.h"
#include "model/evaluator.h"
#include "model/loaders.h"
#include "support/paths.h"

namespace witness {
namespace {

using test::source_path;

// Share of 5000 random pairs that differ only in `prot` and get different labels.
double flip_rate(const Model& m, const Schema& s, const std::vector<int>& prot) {
  Sampler sampler(s, 5);
  const Eigen::MatrixXd raw = sampler.points(5000);
  Eigen::MatrixXd raw_prime = raw;
  for (Eigen::Index j = 0; j < raw.cols(); ++j) sampler.change_protected(raw_prime.col(j), prot);
  const Evaluation a = evaluate(m, s.to_model_columns(raw));
  const Evaluation b = evaluate(m, s.to_model_columns(raw_prime));
  long long n = 0;
  for (std::size_t j = 0; j < a.labels.size(); ++j) n += a.labels[j] != b.labels[j] ? 1 : 0;
  return static_cast<double>(n) / static_cast<double>(a.labels.size());
}

TEST(Transform, ZeroedProtectedInputsNeverChangeTheLabel) {
  const Model m = load_model(source_path("benchmarks/fairify/models/german/GC1.h5"));
  const Schema s = load_schema(source_path("benchmarks/fairify/german.toml"));
  const std::vector<int> prot = {s.feature_index("age"), s.feature_index("sex")};
  const std::vector<int> inputs = {s.feature(prot[0]).model_offset, s.feature(prot[1]).model_offset};
  ASSERT_GT(flip_rate(m, s, prot), 0.0);
  const Model fair = zero_input_weights(m, inputs);
  EXPECT_EQ(flip_rate(fair, s, prot), 0.0);
  // Only the named columns of the first layer changed.
  ASSERT_EQ(fair.nodes.size(), m.nodes.size());
  for (std::size_t i = 0; i < m.nodes.size(); ++i) {
    const Node& a = m.nodes[i];
    const Node& b = fair.nodes[i];
    EXPECT_EQ(a.op, b.op);
    EXPECT_TRUE(a.values == b.values);
    if (a.op != OpKind::Dense) continue;
    for (Eigen::Index c = 0; c < a.weights.cols(); ++c) {
      const bool named = i == 1 && (c == inputs[0] || c == inputs[1]);
      if (named) {
        EXPECT_TRUE(b.weights.col(c).isZero(0.0)) << "column " << c;
      } else {
        EXPECT_TRUE(a.weights.col(c) == b.weights.col(c)) << "node " << i << " column " << c;
      }
    }
  }
  // Other features still matter.
  EXPECT_GT(flip_rate(fair, s, {s.feature_index("credit_history")}), 0.0);
}

TEST(Transform, ScaledWeights) {
  const Model m = load_model(source_path("benchmarks/fairify/models/adult/AC1.h5"));
  const Schema s = load_schema(source_path("benchmarks/fairify/adult.toml"));
  const int sex = s.feature(s.feature_index("sex")).model_offset;
  const Model near = scale_input_weights(m, {sex}, 1e-3);
  EXPECT_TRUE(near.nodes[1].weights.col(sex) == (m.nodes[1].weights.col(sex) * 1e-3).eval());
  EXPECT_TRUE(near.nodes[3].weights == m.nodes[3].weights);
  EXPECT_THROW((void)scale_input_weights(m, {sex}, std::numeric_limits<double>::infinity()), InputError);
  EXPECT_THROW((void)zero_input_weights(m, {13}), InputError);
  EXPECT_THROW((void)zero_input_weights(m, {-1}), InputError);
}

TEST(Transform, NonDenseReaderIsUnsupported) {
  // A tree reading the input directly: fine for inputs it never tests, unsupported otherwise.
  auto te = std::make_shared<TreeEnsemble>();
  TreeEnsemble::Tree t;
  t.nodes.resize(3);
  t.nodes[0] = {TreeEnsemble::Mode::Leq, 1, 0.5, 1, 2, false, {}};
  t.leaves = {{1, 0, -1.0}, {2, 0, 1.0}};
  te->trees = {t};
  ModelBuilder tb("tree", {"a", "b", "c"});
  const Model trees = tb.finish(tb.tree_ensemble(tb.input(), te, "forest"), DecisionRule{});
  EXPECT_THROW((void)zero_input_weights(trees, {1}), UnsupportedError);
  EXPECT_NO_THROW((void)zero_input_weights(trees, {0, 2}));

  // A Select of the input before the Dense layer, and a Relu on the input.
  ModelBuilder sb("select", {"a", "b", "c"});
  const int sel = sb.select(sb.input(), {0, 2});
  const Model select = sb.finish(sb.dense(sel, Eigen::MatrixXd::Ones(1, 2), Eigen::VectorXd::Zero(1)), DecisionRule{});
  EXPECT_THROW((void)zero_input_weights(select, {2}), UnsupportedError);
  EXPECT_NO_THROW((void)zero_input_weights(select, {1}));
  ModelBuilder rb("relu", {"a", "b"});
  const Model relu =
      rb.finish(rb.dense(rb.relu(rb.input()), Eigen::MatrixXd::Ones(1, 2), Eigen::VectorXd::Zero(1)), DecisionRule{});
  try {
    (void)zero_input_weights(relu, {0});
    FAIL() << "no error for a Relu reading the input";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("Relu"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace witness
