#include "model/columns.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "core/error.h"
#include "model/evaluator.h"
#include "model/loaders.h"

namespace witness {
namespace {

// The inputs of `cols` for one raw row (codes for categories), as a schema computes them.
Eigen::VectorXd encode(const std::vector<RawColumn>& cols, const std::vector<double>& raw) {
  std::vector<double> x;
  for (std::size_t c = 0; c < cols.size(); ++c) {
    if (cols[c].one_hot) {
      for (std::size_t k = 0; k < cols[c].categories.size(); ++k) x.push_back(k == raw[c] ? 1.0 : 0.0);
    } else {
      x.push_back(cols[c].norm.to_model(raw[c]));
    }
  }
  return Eigen::Map<Eigen::VectorXd>(x.data(), static_cast<Eigen::Index>(x.size()));
}

// The transformed features the classifier reads: each the sum of its sources.
Eigen::VectorXd transform(const Eigen::VectorXd& x, const std::vector<std::vector<int>>& sources) {
  Eigen::VectorXd t = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(sources.size()));
  for (std::size_t k = 0; k < sources.size(); ++k) {
    for (const int j : sources[k]) t(static_cast<Eigen::Index>(k)) += x(j);
  }
  return t;
}

RawColumn categorical(const std::string& name, std::vector<std::string> cats) {
  RawColumn c;
  c.name = name;
  c.categorical = true;
  c.categories = std::move(cats);
  c.one_hot = true;
  return c;
}

RawColumn numeric(const std::string& name, Normalisation n) {
  RawColumn c;
  c.name = name;
  c.norm = n;
  return c;
}

// A ReLU network over 4 transformed features, and the columns race (3 categories, the first
// dropped, the other two grouped as in infrequent categories or kept apart) and age (standardised).
struct Case {
  std::vector<RawColumn> cols = {categorical("race", {"a", "b", "c"}),
                                 numeric("age", {Normalisation::Form::MeanStd, 40.0, 12.5})};
  Model inner;
  Case() {
    ModelBuilder b("net", {"t0", "t1", "t2", "t3"});
    Eigen::MatrixXd w1(3, 4), w2(1, 3);
    w1 << 0.5, -1.25, 2.0, 0.75, -0.5, 1.0, 0.25, -2.0, 1.5, 0.125, -0.75, 1.0;
    w2 << 1.0, -1.5, 0.5;
    const int h = b.relu(b.dense(b.input(), w1, Eigen::Vector3d(0.1, -0.2, 0.3)));
    const int z = b.dense(h, w2, Eigen::VectorXd::Constant(1, -0.05));
    inner = b.finish(b.sigmoid(z), DecisionRule::threshold_on(z, 0.0));
  }
};

TEST(RawColumns, FoldedDenseComputesTheTransformedModel) {
  const Case k;
  // t0 = age, t1 = [race=b], t2 = [race=c] (race=a dropped, as OneHotEncoder(drop="first")), t3 = 0.
  const std::vector<std::vector<int>> sources = {{3}, {1}, {2}, {}};
  const Model m = with_raw_columns(k.inner, k.cols, sources);
  ASSERT_EQ(m.input_width(), 4);
  EXPECT_EQ(m.input_names, (std::vector<std::string>{"race=a", "race=b", "race=c", "age"}));
  EXPECT_EQ(m.nodes.size(), k.inner.nodes.size());  // folded into the first layer
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const std::vector<double> raw = {static_cast<double>(rng() % 3), static_cast<double>(17 + rng() % 70)};
    const Eigen::VectorXd x = encode(k.cols, raw);
    const Evaluation folded = evaluate(m, x);
    const Evaluation direct = evaluate(k.inner, transform(x, sources));
    EXPECT_EQ(folded.labels, direct.labels);
    EXPECT_NEAR(folded.outputs(0, 0), direct.outputs(0, 0), 1e-12);
  }
}

TEST(RawColumns, GroupedCategoriesFoldIntoDense) {
  const Case k;
  const std::vector<std::vector<int>> sources = {{3}, {0}, {1, 2}, {}};  // b and c read as one indicator
  const Model m = with_raw_columns(k.inner, k.cols, sources);
  EXPECT_EQ(m.nodes.size(), k.inner.nodes.size());
  for (double race = 0; race < 3; ++race) {
    for (double age = 17; age < 90; age += 7) {
      const Eigen::VectorXd x = encode(k.cols, {race, age});
      EXPECT_EQ(evaluate(m, x).labels, evaluate(k.inner, transform(x, sources)).labels);
      EXPECT_DOUBLE_EQ(evaluate(m, x).outputs(0, 0), evaluate(k.inner, transform(x, sources)).outputs(0, 0));
    }
  }
}

// One tree over two transformed features, two classes.
Model tree_model(const TreeEnsemble::Tree& t) {
  auto te = std::make_shared<TreeEnsemble>();
  te->trees = {t};
  te->n_targets = 2;
  te->classifier = true;
  ModelBuilder b("tree", {"t0", "t1"});
  const int y = b.tree_ensemble(b.input(), te, "trees");
  return b.finish(y, DecisionRule{});
}

TEST(RawColumns, TreesAreRenamed) {
  TreeEnsemble::Tree t;
  t.nodes.resize(5);
  t.nodes[0] = {TreeEnsemble::Mode::Leq, 1, 0.5, 1, 2, false, {}};  // race=b?
  t.nodes[2] = {TreeEnsemble::Mode::Leq, 0, 0.2, 3, 4, false, {}};  // standardised age
  t.leaves = {{1, 0, 1.0}, {3, 1, 1.0}, {4, 0, 1.0}};
  const Model inner = tree_model(t);
  const Case k;
  const std::vector<std::vector<int>> sources = {{3}, {1}};
  const Model m = with_raw_columns(inner, k.cols, sources);
  EXPECT_EQ(m.nodes.size(), inner.nodes.size());
  EXPECT_EQ(m.nodes[1].trees->trees[0].nodes[0].feature, 1);
  EXPECT_EQ(m.nodes[1].trees->trees[0].nodes[2].feature, 3);
  for (double race = 0; race < 3; ++race) {
    for (double age = 17; age < 90; age += 3) {
      const Eigen::VectorXd x = encode(k.cols, {race, age});
      EXPECT_EQ(evaluate(m, x).labels, evaluate(inner, transform(x, sources)).labels) << race << " " << age;
    }
  }
}

TEST(RawColumns, TreesOverGroupedCategoriesKeepASelectionLayer) {
  TreeEnsemble::Tree t;
  t.nodes.resize(3);
  t.nodes[0] = {TreeEnsemble::Mode::Leq, 1, 0.5, 1, 2, false, {}};  // race in {b, c}?
  t.leaves = {{1, 0, 1.0}, {2, 1, 1.0}};
  const Model inner = tree_model(t);
  const Case k;
  const std::vector<std::vector<int>> sources = {{3}, {1, 2}};
  const Model m = with_raw_columns(inner, k.cols, sources);
  EXPECT_EQ(m.nodes.size(), inner.nodes.size() + 1);
  for (double race = 0; race < 3; ++race) {
    const Eigen::VectorXd x = encode(k.cols, {race, 30});
    EXPECT_EQ(evaluate(m, x).labels, (std::vector<int>{race == 0 ? 0 : 1}));
  }
}

TEST(RawColumns, BadSourcesAreInputErrors) {
  const Case k;
  EXPECT_THROW((void)with_raw_columns(k.inner, k.cols, {{3}, {1}, {2}}), InputError);       // 3 of 4 features
  EXPECT_THROW((void)with_raw_columns(k.inner, k.cols, {{3}, {1}, {1}, {2}}), InputError);  // input 1 twice
  EXPECT_THROW((void)with_raw_columns(k.inner, k.cols, {{3}, {1}, {2}, {9}}), InputError);  // no input 9
  std::vector<RawColumn> twice = {k.cols[0], k.cols[0]};
  EXPECT_THROW((void)with_raw_columns(k.inner, twice, {{0}, {1}, {2}, {3}}), InputError);  // same name
  std::vector<RawColumn> bad = k.cols;
  bad[1].norm = {Normalisation::Form::MeanStd, 1.0, 0.0};
  EXPECT_THROW((void)with_raw_columns(k.inner, bad, {{3}, {1}, {2}, {}}), InputError);  // not invertible
}

TEST(RawColumns, NormalisationFormsAndTheirInverse) {
  for (const Normalisation n : {Normalisation{Normalisation::Form::ScaleOffset, 0.25, -3.0},
                                Normalisation{Normalisation::Form::MeanStd, 38.5, 13.25},
                                Normalisation{Normalisation::Form::CenterScale, 38.5, 0.0754}}) {
    for (double raw : {-5.0, 0.0, 17.0, 90.0}) {
      EXPECT_NEAR(n.to_raw(n.to_model(raw)), raw, 1e-9);
      EXPECT_NEAR(n.to_model(raw), n.slope() * raw + n.intercept(), 1e-9);
    }
  }
  EXPECT_EQ((Normalisation{Normalisation::Form::CenterScale, 2.0, 3.0}).to_model(5.0), 9.0);
  EXPECT_EQ((Normalisation{Normalisation::Form::MeanStd, 2.0, 3.0}).describe("age"), "(age - 2) / 3");
}

TEST(RawColumns, SameColumnReadsSkl2onnxNames) {
  EXPECT_TRUE(same_column("age", "age"));
  EXPECT_TRUE(same_column("education-num", "education_num"));
  EXPECT_TRUE(same_column("hours per week", "hours_per_week"));
  EXPECT_TRUE(same_column("1st", "_1st"));
  EXPECT_FALSE(same_column("education-num", "education"));
  EXPECT_FALSE(same_column("a_b", "a-b"));
}

TEST(RawColumns, SurviveAnOnnxRoundTrip) {
  const Case k;
  std::vector<RawColumn> cols = k.cols;
  cols[0].missing = "b";
  cols[0].step = "OneHotEncoder 'cat'";
  const Model m = with_raw_columns(k.inner, cols, {{3}, {1}, {2}, {}});
  const std::string path = (std::filesystem::temp_directory_path() / "witness_columns_round_trip.onnx").string();
  save_onnx(m, path);
  const Model back = load_model(path);
  ASSERT_EQ(back.columns.size(), 2U);
  EXPECT_EQ(back.columns[0].categories, cols[0].categories);
  EXPECT_EQ(back.columns[0].missing, "b");
  EXPECT_EQ(back.columns[0].step, "OneHotEncoder 'cat'");
  EXPECT_TRUE(back.columns[1].norm == cols[1].norm);
  const Eigen::VectorXd x = encode(cols, {2, 51});
  EXPECT_EQ(evaluate(back, x).labels, evaluate(m, x).labels);
  EXPECT_THROW((void)raw_columns_from_json(nlohmann::json::parse(R"([{"name": 1}])"), "x.onnx"), InputError);
}

}  // namespace
}  // namespace witness
