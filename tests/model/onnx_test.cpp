// ONNX loader and writer: fixtures from tools/make_onnx_fixtures.py (expected outputs computed by
// torch, a python tree walk or numpy), malformed files, round trips, and hand-built graphs.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "core/error.h"
#include "model/evaluator.h"
#include "model/loaders.h"
#include "model/onnx_graph_builder.h"
#include "support/paths.h"

namespace witness {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string fixture(const std::string& name) {
  return std::string(WITNESS_SOURCE_DIR) + "/tests/fixtures/onnx/" + name;
}

using test::temp_path;

struct Expected {
  Eigen::MatrixXd inputs;   // [input width][rows]
  Eigen::MatrixXd outputs;  // [output width][rows]
  std::vector<int> labels;
  std::vector<std::string> class_labels;
  bool float32 = false;
};

Expected expected(const std::string& name) {
  std::ifstream in(fixture(name + ".json"));
  const json j = json::parse(in);
  Expected e;
  const auto& x = j.at("inputs");
  const auto& y = j.at("outputs");
  e.inputs.resize(static_cast<Eigen::Index>(x.at(0).size()), static_cast<Eigen::Index>(x.size()));
  e.outputs.resize(static_cast<Eigen::Index>(y.at(0).size()), static_cast<Eigen::Index>(y.size()));
  for (std::size_t r = 0; r < x.size(); ++r) {
    for (std::size_t c = 0; c < x[r].size(); ++c) {
      // null: a missing value (JSON has no NaN)
      e.inputs(static_cast<Eigen::Index>(c), static_cast<Eigen::Index>(r)) =
          x[r][c].is_null() ? std::numeric_limits<double>::quiet_NaN() : x[r][c].get<double>();
    }
    for (std::size_t c = 0; c < y[r].size(); ++c)
      e.outputs(static_cast<Eigen::Index>(c), static_cast<Eigen::Index>(r)) = y[r][c];
  }
  e.labels = j.at("labels").get<std::vector<int>>();
  if (j.contains("class_labels")) e.class_labels = j["class_labels"].get<std::vector<std::string>>();
  e.float32 = j.value("float32", false);
  return e;
}

void expect_close(const Eigen::MatrixXd& got, const Eigen::MatrixXd& want, double rel, const std::string& what) {
  ASSERT_EQ(got.rows(), want.rows()) << what;
  ASSERT_EQ(got.cols(), want.cols()) << what;
  for (Eigen::Index c = 0; c < got.cols(); ++c) {
    for (Eigen::Index r = 0; r < got.rows(); ++r) {
      EXPECT_NEAR(got(r, c), want(r, c), rel * std::max(1.0, std::abs(want(r, c))))
          << what << " output " << r << " of row " << c;
    }
  }
}

void check_fixture(const std::string& name) {
  SCOPED_TRACE(name);
  const Model m = load_onnx(fixture(name + ".onnx"));
  EXPECT_EQ(m.format, "onnx");
  EXPECT_EQ(m.source, fixture(name + ".onnx"));
  const Expected e = expected(name);
  ASSERT_EQ(m.input_width(), e.inputs.rows());
  const Evaluation r = evaluate(m, e.inputs);
  expect_close(r.outputs, e.outputs, e.float32 ? 1e-6 : 1e-12, name + " (double)");
  EXPECT_EQ(r.labels, e.labels);
  EXPECT_EQ(m.rule.class_labels, e.class_labels);
  if (e.float32) {
    const Evaluation f = evaluate(m, e.inputs, Precision::Float32);
    expect_close(f.outputs, e.outputs, 1e-6, name + " (float32)");
    EXPECT_EQ(f.labels, e.labels);
  }
}

TEST(OnnxFixtures, TorchMlp) {
  check_fixture("mlp_torch");
  const Model m = load_onnx(fixture("mlp_torch.onnx"));
  EXPECT_EQ(m.input_names, (std::vector<std::string>{"x[0]", "x[1]", "x[2]", "x[3]"}));
  EXPECT_EQ(m.output_names, (std::vector<std::string>{"y[0]", "y[1]", "y[2]"}));
  EXPECT_EQ(m.rule.kind, DecisionRule::Kind::ArgMax);
}

TEST(OnnxFixtures, TorchMlpSigmoid) {
  check_fixture("mlp_torch_sigmoid");
  const Model m = load_onnx(fixture("mlp_torch_sigmoid.onnx"));
  // One output behind a sigmoid: the rule thresholds the logit.
  EXPECT_EQ(m.rule.kind, DecisionRule::Kind::Threshold);
  EXPECT_EQ(m.nodes[static_cast<std::size_t>(m.rule.node)].op, OpKind::Dense);
  EXPECT_EQ(m.output_names, (std::vector<std::string>{"y"}));
}

TEST(OnnxFixtures, TreeClassifier) {
  check_fixture("tree_classifier");
  const Model m = load_onnx(fixture("tree_classifier.onnx"));
  EXPECT_EQ(m.rule.kind, DecisionRule::Kind::ArgMax);
  // The label output comes first but is an integer label: the scores are the model output.
  EXPECT_EQ(m.output_names.front(), "probabilities[0]");
}

TEST(OnnxFixtures, TreeBinarySingleScore) {
  check_fixture("tree_binary");
  const Model m = load_onnx(fixture("tree_binary.onnx"));
  const Node& trees = m.nodes[static_cast<std::size_t>(m.rule.node)];
  ASSERT_EQ(trees.op, OpKind::TreeEnsemble);
  EXPECT_TRUE(trees.trees->binary_single_score);
  EXPECT_EQ(trees.trees->binary_total, 0.0);
}

TEST(OnnxFixtures, TreeRegressor) { check_fixture("tree_regressor"); }

TEST(OnnxFixtures, TreeEnsembleV5) {
  // ai.onnx.ml 5: set-membership splits, missing values, nodes stored out of order, a one-leaf tree.
  check_fixture("tree_ensemble_v5");
  check_fixture("tree_ensemble_v5_min");
  check_fixture("tree_ensemble_v5_binary");
  const Model m = load_onnx(fixture("tree_ensemble_v5.onnx"));
  EXPECT_EQ(m.rule.kind, DecisionRule::Kind::ArgMax);
  const Node& trees = m.nodes[static_cast<std::size_t>(m.rule.node)];
  ASSERT_EQ(trees.op, OpKind::TreeEnsemble);
  ASSERT_EQ(trees.trees->trees.size(), 4U);
  const TreeEnsemble::Node& root = trees.trees->trees[0].nodes[0];
  EXPECT_EQ(root.mode, TreeEnsemble::Mode::Member);
  EXPECT_EQ(root.members, (std::vector<double>{1.0, 3.0, 4.0}));  // sorted, the repeat dropped
  EXPECT_TRUE(root.missing_tracks_true);
  // One output behind a sigmoid: the rule thresholds the average.
  const Model b = load_onnx(fixture("tree_ensemble_v5_binary.onnx"));
  EXPECT_EQ(b.rule.kind, DecisionRule::Kind::Threshold);
  EXPECT_EQ(b.nodes[static_cast<std::size_t>(b.rule.node)].op, OpKind::TreeEnsemble);
}

TEST(OnnxFixtures, LinearClassifier) { check_fixture("linear_classifier"); }
TEST(OnnxFixtures, LinearClassifierBinary) { check_fixture("linear_binary"); }
TEST(OnnxFixtures, Ops) { check_fixture("ops"); }

// --- malformed files ---

template <typename E>
std::string error_of(const std::string& path) {
  try {
    load_onnx(path);
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << path << ": wrong exception type: " << e.what();
    return {};
  }
  ADD_FAILURE() << path << ": loaded without an error";
  return {};
}

TEST(OnnxMalformed, UnsupportedOpNamesOpAndNode) {
  const std::string path = fixture("unsupported_op.onnx");
  const std::string what = error_of<UnsupportedError>(path);
  EXPECT_NE(what.find(path), std::string::npos) << what;
  EXPECT_NE(what.find("Conv"), std::string::npos) << what;
  EXPECT_NE(what.find("conv_1"), std::string::npos) << what;
}

TEST(OnnxMalformed, EachThrowsInputErrorNamingTheFile) {
  for (const char* name : {"bad_shape", "nan_weight", "truncated", "garbage", "unsupported_op"}) {
    const std::string path = fixture(std::string(name) + ".onnx");
    const std::string what = error_of<InputError>(path);
    EXPECT_NE(what.find(path), std::string::npos) << what;
  }
  const std::string shape = error_of<InputError>(fixture("bad_shape.onnx"));
  EXPECT_NE(shape.find("gemm_bad"), std::string::npos) << shape;
  const std::string nan = error_of<InputError>(fixture("nan_weight.onnx"));
  EXPECT_NE(nan.find("gemm_nan"), std::string::npos) << nan;
  EXPECT_NE(nan.find("NaN"), std::string::npos) << nan;
}

TEST(OnnxMalformed, TreeEnsembleV5IsInputErrorNamingTheProblem) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"child", "node 1 has true child node 99"},
      {"leaf", "node 0 has false child leaf 12"},
      {"two_parents", "node 4 has two parents"},
      {"cycle", "node 1 has two parents"},
      {"nan_split", "node 0 has a NaN split"},
      {"mode", "node 0 has mode 7"},
      {"sets", "without a set in membership_values"},
      {"target", "leaf 2 has target id 3, but n_targets is 3"},
      {"sizes", "nodes_* attributes must all have 9 entries"},
      {"root", "tree_roots[4] is 42"},
      {"feature", "node 4 tests feature 4, but the input has 4"},
      {"unreached", "node 7 is in no tree"},
      {"opset", "needs ai.onnx.ml opset 5"},
  };
  for (const auto& [name, message] : cases) {
    const std::string path = fixture("tree_ensemble_v5_bad_" + name + ".onnx");
    const std::string what = error_of<InputError>(path);
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find(message), std::string::npos) << name << ": " << what;
  }
}

TEST(OnnxMalformed, MissingFile) { EXPECT_THROW(load_onnx(fixture("no_such_file.onnx")), InputError); }

// --- round trips ---

Eigen::MatrixXd random_inputs(int width, int rows, unsigned seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  Eigen::MatrixXd x(width, rows);
  for (Eigen::Index c = 0; c < x.cols(); ++c) {
    for (Eigen::Index r = 0; r < x.rows(); ++r) x(r, c) = u(rng);
  }
  return x;
}

void expect_same_model(const Model& a, const Model& b, const Eigen::MatrixXd& x) {
  EXPECT_EQ(a.input_names, b.input_names);
  EXPECT_EQ(a.output_names, b.output_names);
  EXPECT_EQ(a.rule.kind, b.rule.kind);
  EXPECT_EQ(a.rule.index, b.rule.index);
  EXPECT_EQ(a.rule.threshold, b.rule.threshold);
  EXPECT_EQ(a.rule.class_labels, b.rule.class_labels);
  for (const Precision p : {Precision::Float64, Precision::Float32}) {
    const Evaluation ra = evaluate(a, x, p);
    const Evaluation rb = evaluate(b, x, p);
    // Exactly equal: the writer keeps every weight as the same double.
    EXPECT_TRUE(ra.outputs == rb.outputs);
    EXPECT_TRUE(ra.decision == rb.decision);
    EXPECT_EQ(ra.labels, rb.labels);
  }
}

std::string mlp_json_path() {
  const std::string in_tree = std::string(WITNESS_SOURCE_DIR) + "/benchmarks/fairify/models/adult/AC1.json";
  return fs::exists(in_tree) ? in_tree : "/work/shared/benchmarks/fairify/models/adult/AC1.json";
}

TEST(OnnxRoundTrip, MlpJsonLogitsExactlyEqual) {
  const Model m = load_mlp_json(mlp_json_path());
  const std::string path = temp_path("AC1.onnx");
  save_onnx(m, path);
  const Model back = load_onnx(path);
  EXPECT_EQ(back.format, "onnx");
  EXPECT_EQ(back.name, m.name);
  const Eigen::MatrixXd x = random_inputs(m.input_width(), 1000, 42, -5.0, 60.0);
  expect_same_model(m, back, x);
  // The logits themselves, not only what the rule reads.
  const Evaluation a = evaluate(m, x);
  const Evaluation b = evaluate(back, x);
  EXPECT_TRUE(a.decision == b.decision);
}

void round_trip_fixture(const std::string& name) {
  SCOPED_TRACE(name);
  const Model m = load_onnx(fixture(name + ".onnx"));
  const std::string path = temp_path(name + "_back.onnx");
  save_onnx(m, path);
  const Model back = load_onnx(path);
  const Expected e = expected(name);
  expect_same_model(m, back, e.inputs);
  Eigen::MatrixXd x = random_inputs(m.input_width(), 500, 7, -2.5, 2.5);
  if (name == "ops") {
    for (Eigen::Index c = 0; c < x.cols(); ++c) x(0, c) = static_cast<double>(c % 5);  // table rows
  }
  expect_same_model(m, back, x);
}

TEST(OnnxRoundTrip, Trees) {
  round_trip_fixture("tree_classifier");
  round_trip_fixture("tree_binary");
  round_trip_fixture("tree_regressor");
}

TEST(OnnxRoundTrip, SetMembershipTreesAreWrittenAsTreeEnsembleV5) {
  // Set-membership splits, missing values, a one-leaf tree, MIN and AVERAGE, one score.
  for (const char* name : {"tree_ensemble_v5", "tree_ensemble_v5_min", "tree_ensemble_v5_binary"}) {
    round_trip_fixture(name);
    // Inputs on the sets' values (0..5, each member and not) and NaN.
    const Model m = load_onnx(fixture(std::string(name) + ".onnx"));
    const Model back = load_onnx(temp_path(std::string(name) + "_back.onnx"));
    Eigen::MatrixXd x(m.input_width(), 7 * 7);
    for (Eigen::Index c = 0; c < x.cols(); ++c)
      for (Eigen::Index r = 0; r < x.rows(); ++r) {
        const auto v = (c / (r % 2 == 0 ? 1 : 7)) % 7;
        x(r, c) = v == 6 ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(v);
      }
    expect_same_model(m, back, x);
    onnx::ModelProto mp;
    ASSERT_TRUE(mp.ParseFromString(read_file(temp_path(std::string(name) + "_back.onnx"))));
    int v5 = 0;
    for (const auto& n : mp.graph().node()) v5 += n.op_type() == "TreeEnsemble" && n.domain() == "ai.onnx.ml" ? 1 : 0;
    EXPECT_EQ(v5, 1) << name;
    for (const auto& o : mp.opset_import()) {
      if (o.domain() == "ai.onnx.ml") {
        EXPECT_EQ(o.version(), 5) << name;
      }
    }
  }
}

TEST(OnnxRoundTrip, OpsAndLinear) {
  round_trip_fixture("ops");
  round_trip_fixture("linear_classifier");
  round_trip_fixture("linear_binary");
  round_trip_fixture("mlp_torch_sigmoid");
}

TEST(OnnxRoundTrip, WrittenFileIsStandardOnnx) {
  const Model m = load_mlp_json(mlp_json_path());
  const std::string path = temp_path("AC1_check.onnx");
  save_onnx(m, path);
  onnx::ModelProto mp;
  ASSERT_TRUE(mp.ParseFromString(read_file(path)));
  EXPECT_EQ(mp.ir_version(), 8);
  ASSERT_EQ(mp.graph().input_size(), 1);
  EXPECT_EQ(mp.graph().input(0).name(), "input");
  EXPECT_EQ(mp.graph().input(0).type().tensor_type().elem_type(), onnx::TensorProto::DOUBLE);
  EXPECT_EQ(mp.graph().output(0).name(), "output");
  int gemms = 0;
  for (const auto& n : mp.graph().node()) gemms += n.op_type() == "Gemm" ? 1 : 0;
  EXPECT_EQ(gemms, 3);
}

// --- hand-built graphs ---

using test::GraphBuilder;

Eigen::MatrixXd cols(std::initializer_list<std::initializer_list<double>> rows) {
  const auto n = static_cast<Eigen::Index>(rows.size());
  const auto w = static_cast<Eigen::Index>(rows.begin()->size());
  Eigen::MatrixXd x(w, n);
  Eigen::Index c = 0;
  for (const auto& r : rows) {
    Eigen::Index k = 0;
    for (const double v : r) x(k++, c) = v;
    ++c;
  }
  return x;
}

TEST(OnnxGraph, SeveralInputsAreConcatenated) {
  GraphBuilder gb;
  gb.input("age", {-1});  // one value per row
  gb.input("xs", {-1, 2});
  gb.init("w", {3, 1}, {1.0F, 10.0F, 100.0F});
  gb.node("Unsqueeze", {"age", "axis"}, {"age2"});
  gb.init_ints("axis", {1}, {1});
  gb.node("Concat", {"age2", "xs"}, {"cat"});
  GraphBuilder::attr(gb.g->mutable_node(1), "axis", std::int64_t{1});
  gb.node("MatMul", {"cat", "w"}, {"y"});
  gb.output("y");
  const Model m = gb.load();
  EXPECT_EQ(m.input_names, (std::vector<std::string>{"age", "xs[0]", "xs[1]"}));
  const Evaluation r = evaluate(m, cols({{1, 2, 3}, {0.5, 0, -1}}));
  EXPECT_DOUBLE_EQ(r.outputs(0, 0), 321.0);
  EXPECT_DOUBLE_EQ(r.outputs(0, 1), -99.5);
  EXPECT_EQ(m.rule.kind, DecisionRule::Kind::Threshold);
}

TEST(OnnxGraph, ReshapeSoftmaxAndLabelOnlyOutput) {
  GraphBuilder gb;
  gb.input("x", {-1, 2});
  gb.init_ints("shape", {3}, {-1, 1, 2});
  gb.node("Reshape", {"x", "shape"}, {"r"});
  gb.init_ints("flat", {2}, {0, -1});
  gb.node("Reshape", {"r", "flat"}, {"f"});
  auto* sm = gb.node("Softmax", {"f"}, {"p"});
  GraphBuilder::attr(sm, "axis", std::int64_t{-1});
  gb.output("p");
  const Model m = gb.load();
  const Evaluation r = evaluate(m, cols({{0, 0}, {1, 3}}));
  EXPECT_DOUBLE_EQ(r.outputs(0, 0), 0.5);
  EXPECT_EQ(r.labels, (std::vector<int>{0, 1}));

  // A linear classifier whose only output is its label: the scores become the output.
  GraphBuilder lc;
  lc.input("x", {-1, 2});
  auto* n = lc.node("LinearClassifier", {"x"}, {"label", "scores"}, "lc", "ai.onnx.ml");
  GraphBuilder::attr(n, "coefficients", std::vector<float>{1, 0, 0, 1, -1, -1});
  GraphBuilder::attr(n, "intercepts", std::vector<float>{0, 0, 0});
  GraphBuilder::attr(n, "classlabels_ints", std::vector<std::int64_t>{7, 8, 9});
  lc.output("label", onnx::TensorProto::INT64);
  const Model l = lc.load();
  EXPECT_EQ(l.output_width(), 3);
  EXPECT_EQ(l.rule.class_labels, (std::vector<std::string>{"7", "8", "9"}));
  EXPECT_EQ(evaluate(l, cols({{2, 1}, {0, 3}, {-1, -1}})).labels, (std::vector<int>{0, 1, 2}));
}

TEST(OnnxGraph, IntegerLabelsFeedOtherNodes) {
  GraphBuilder gb;
  gb.input("x", {-1, 2});
  auto* n = gb.node("LinearClassifier", {"x"}, {"label", "scores"}, "lc", "ai.onnx.ml");
  GraphBuilder::attr(n, "coefficients", std::vector<float>{1, 0, 0, 1});
  GraphBuilder::attr(n, "intercepts", std::vector<float>{0, 0});
  GraphBuilder::attr(n, "classlabels_ints", std::vector<std::int64_t>{5, 40});
  auto* cast = gb.node("Cast", {"label"}, {"lf"});
  GraphBuilder::attr(cast, "to", std::int64_t{onnx::TensorProto::FLOAT});
  gb.output("lf");
  const Model m = gb.load();
  const Evaluation r = evaluate(m, cols({{2, 1}, {0, 3}}));
  EXPECT_DOUBLE_EQ(r.outputs(0, 0), 5.0);
  EXPECT_DOUBLE_EQ(r.outputs(0, 1), 40.0);
  EXPECT_EQ(r.labels, (std::vector<int>{0, 1}));
  EXPECT_EQ(m.rule.class_labels, (std::vector<std::string>{"5", "40"}));
}

TEST(OnnxGraph, InnerAxisSliceConcatGather) {
  GraphBuilder gb;
  gb.input("x", {-1, 6});
  gb.init_ints("shape", {3}, {0, 2, 3});
  gb.node("Reshape", {"x", "shape"}, {"r"});  // [[0, 1, 2], [3, 4, 5]]
  gb.init_ints("start", {1}, {-1});
  gb.init_ints("end", {1}, {-100});
  gb.init_ints("axis", {1}, {2});
  gb.init_ints("step", {1}, {-1});
  gb.node("Slice", {"r", "start", "end", "axis", "step"}, {"rev"});  // [[2, 1, 0], [5, 4, 3]]
  GraphBuilder::attr(gb.node("Concat", {"rev", "r"}, {"cat"}), "axis", std::int64_t{-1});
  gb.init_ints("last", {1}, {-1});
  GraphBuilder::attr(gb.node("Gather", {"cat", "last"}, {"g"}), "axis", std::int64_t{1});  // [N, 1, 6]
  gb.node("Flatten", {"g"}, {"y"});
  gb.output("y");
  const Model m = gb.load();
  const Evaluation r = evaluate(m, cols({{0, 1, 2, 3, 4, 5}}));
  EXPECT_EQ(r.outputs.col(0), (Eigen::VectorXd(6) << 5, 4, 3, 3, 4, 5).finished());
}

TEST(OnnxGraph, BroadcastsTwoComputedValues) {
  GraphBuilder gb;
  gb.input("x", {-1, 5});
  gb.init_ints("s0", {1}, {0});
  gb.init_ints("s2", {1}, {2});
  gb.init_ints("s5", {1}, {5});
  gb.init_ints("ax", {1}, {1});
  gb.node("Slice", {"x", "s0", "s2", "ax"}, {"a0"});
  gb.node("Slice", {"x", "s2", "s5", "ax"}, {"b0"});
  gb.init_ints("col", {3}, {0, 2, 1});
  gb.init_ints("row", {3}, {0, 1, 3});
  gb.node("Reshape", {"a0", "col"}, {"a"});  // [N, 2, 1]
  gb.node("Reshape", {"b0", "row"}, {"b"});  // [N, 1, 3]
  gb.node("Add", {"a", "b"}, {"sum"});       // [N, 2, 3]
  gb.node("Flatten", {"sum"}, {"y"});
  gb.output("y");
  const Model m = gb.load();
  const Evaluation r = evaluate(m, cols({{0, 1, 2, 3, 4}}));
  EXPECT_EQ(r.outputs.col(0), (Eigen::VectorXd(6) << 2, 3, 4, 3, 4, 5).finished());
}

TEST(OnnxGraph, SklearnStylePipeline) {
  // Scaler -> LinearClassifier -> ZipMap, with string labels, the label output listed first.
  GraphBuilder gb;
  gb.input("x", {-1, 2});
  auto* sc = gb.node("Scaler", {"x"}, {"scaled"}, "scaler", "ai.onnx.ml");
  GraphBuilder::attr(sc, "offset", std::vector<float>{1, 2});
  GraphBuilder::attr(sc, "scale", std::vector<float>{0.5F, 2});
  auto* lc = gb.node("LinearClassifier", {"scaled"}, {"label", "probs"}, "lc", "ai.onnx.ml");
  GraphBuilder::attr(lc, "coefficients", std::vector<float>{1, 0, 0, 1});
  GraphBuilder::attr(lc, "intercepts", std::vector<float>{0, 0.5F});
  GraphBuilder::attr(lc, "classlabels_strings", std::vector<std::string>{"a", "b"});
  auto* zm = gb.node("ZipMap", {"probs"}, {"output_probability"}, "zipmap", "ai.onnx.ml");
  GraphBuilder::attr(zm, "classlabels_strings", std::vector<std::string>{"a", "b"});
  gb.output("label", onnx::TensorProto::STRING);
  gb.output("output_probability");
  const Model m = gb.load();
  EXPECT_EQ(m.rule.kind, DecisionRule::Kind::ArgMax);
  EXPECT_EQ(m.rule.class_labels, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(m.output_names, (std::vector<std::string>{"output_probability[0]", "output_probability[1]"}));
  // scaled = ((3 - 1) * 0.5, (2 - 2) * 2) = (1, 0): scores (1, 0.5); (1, 2.5) -> (0, 1): (0, 1.5).
  const Evaluation r = evaluate(m, cols({{3, 2}, {1, 2.5}}));
  EXPECT_EQ(r.outputs.col(0), (Eigen::VectorXd(2) << 1, 0.5).finished());
  EXPECT_EQ(r.outputs.col(1), (Eigen::VectorXd(2) << 0, 1.5).finished());
  EXPECT_EQ(r.labels, (std::vector<int>{0, 1}));
}

TEST(OnnxGraph, RejectsWhatTheIrCannotExpress) {
  {
    GraphBuilder gb;  // Reshape [N, 4] -> [-1, 2] doubles the rows
    gb.input("x", {-1, 4});
    gb.init_ints("shape", {2}, {-1, 2});
    gb.node("Reshape", {"x", "shape"}, {"y"}, "halve");
    gb.output("y");
    EXPECT_THROW((void)gb.load(), UnsupportedError);
  }
  {
    GraphBuilder gb;  // Cast of a float to int64 that is not a Gather index
    gb.input("x", {-1, 2});
    auto* c = gb.node("Cast", {"x"}, {"y"}, "trunc");
    GraphBuilder::attr(c, "to", std::int64_t{onnx::TensorProto::INT64});
    gb.output("y", onnx::TensorProto::INT64);
    EXPECT_THROW((void)gb.load(), UnsupportedError);
  }
  {
    GraphBuilder gb;  // external data
    gb.input("x", {-1, 2});
    auto* t = gb.init("w", {2, 2}, {});
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* e = t->add_external_data();
    e->set_key("location");
    e->set_value("weights.bin");
    gb.node("MatMul", {"x", "w"}, {"y"});
    gb.output("y");
    EXPECT_THROW((void)gb.load(), UnsupportedError);
  }
}

TEST(OnnxGraph, RejectsMalformedGraphs) {
  {
    GraphBuilder gb;  // Gather index out of range
    gb.input("x", {-1, 2});
    gb.init_ints("idx", {1}, {2});
    auto* n = gb.node("Gather", {"x", "idx"}, {"y"}, "pick");
    GraphBuilder::attr(n, "axis", std::int64_t{1});
    gb.output("y");
    EXPECT_THROW((void)gb.load(), InputError);
  }
  {
    GraphBuilder gb;  // reads an undefined value
    gb.input("x", {-1, 2});
    gb.node("Relu", {"nowhere"}, {"y"});
    gb.output("y");
    EXPECT_THROW((void)gb.load(), InputError);
  }
  {
    GraphBuilder gb;  // raw data of the wrong size
    gb.input("x", {-1, 2});
    auto* t = gb.init("w", {2, 2}, {});
    t->set_raw_data(std::string(7, '\0'));
    gb.node("MatMul", {"x", "w"}, {"y"});
    gb.output("y");
    EXPECT_THROW((void)gb.load(), InputError);
  }
  {
    GraphBuilder gb;  // a tree with a cycle: 0 -> 1 -> 2 -> 1
    gb.input("x", {-1, 1});
    auto* n = gb.node("TreeEnsembleRegressor", {"x"}, {"y"}, "cyclic", "ai.onnx.ml");
    GraphBuilder::attr(n, "nodes_treeids", std::vector<std::int64_t>{0, 0, 0});
    GraphBuilder::attr(n, "nodes_nodeids", std::vector<std::int64_t>{0, 1, 2});
    GraphBuilder::attr(n, "nodes_featureids", std::vector<std::int64_t>{0, 0, 0});
    GraphBuilder::attr(n, "nodes_modes", std::vector<std::string>{"BRANCH_LEQ", "BRANCH_LEQ", "BRANCH_LEQ"});
    GraphBuilder::attr(n, "nodes_values", std::vector<float>{0, 0, 0});
    GraphBuilder::attr(n, "nodes_truenodeids", std::vector<std::int64_t>{1, 2, 1});
    GraphBuilder::attr(n, "nodes_falsenodeids", std::vector<std::int64_t>{1, 2, 1});
    gb.output("y");
    EXPECT_THROW((void)gb.load(), InputError);
  }
  {
    GraphBuilder gb;  // no inputs
    gb.output("y");
    EXPECT_THROW((void)gb.load(), InputError);
  }
}

// --- inputs the fuzzers found ---

TEST(OnnxFuzzRegression, MlpJsonNumberOverflowIsInputError) {
  // nlohmann throws out_of_range, not parse_error, for a number too large for a double.
  EXPECT_THROW(parse_mlp_json(R"({"format": "mlp-json-v1", "input_dim": 1, "layers": [-0.18E890392303]})", "x.json"),
               InputError);
  // Rows are checked before the weight matrix is allocated.
  EXPECT_THROW(parse_mlp_json(R"({"format": "mlp-json-v1", "input_dim": 1000000,
                                 "layers": [{"weights": [[], [], []], "bias": [0, 0, 0]}]})",
                              "x.json"),
               InputError);
}

}  // namespace
}  // namespace witness
