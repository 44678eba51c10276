// Every attribute a loader reads is checked (issue 45, item 5): one reproducer per attribute, built
// here (ONNX graphs in C++, XGBoost JSON and UBJSON, LightGBM text), each refused with an InputError
// whose message names the file and the attribute or node. The unmodified models load, so each
// refusal is the one change's doing.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "model/evaluator.h"
#include "model/loaders.h"
#include "model/model.h"
#include "model/onnx_graph_builder.h"

namespace witness::loader_checks_test {
namespace {

using nlohmann::json;
using test::GraphBuilder;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Runs `load`, which must throw an InputError naming `file` and containing every one of `parts`.
void expect_refused(const std::function<void()>& load, const std::string& file, const std::vector<std::string>& parts,
                    const std::string& label) {
  try {
    load();
    ADD_FAILURE() << label << ": loaded; expected an InputError with '" << parts.front() << "'";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(file + ": ", 0), 0U) << label << ": " << what;
    for (const std::string& p : parts) EXPECT_NE(what.find(p), std::string::npos) << label << ": " << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << label << ": not an InputError: " << e.what();
  }
}

// --- ONNX -------------------------------------------------------------------------------------

// x [N, 2] -> one tree: x0 <= 0.5 ? leaf 1 : leaf 2, two classes with weights for both (or, with
// `binary`, for class 1 only: the single-score form).
onnx::NodeProto* tree_classifier(GraphBuilder& gb, bool binary = false) {
  gb.input("x", {-1, 2});
  auto* n =
      gb.node("TreeEnsembleClassifier", {"x"}, {"label", "probabilities"}, "TreeEnsembleClassifier", "ai.onnx.ml");
  GraphBuilder::attr(n, "nodes_treeids", std::vector<std::int64_t>{0, 0, 0});
  GraphBuilder::attr(n, "nodes_nodeids", std::vector<std::int64_t>{0, 1, 2});
  GraphBuilder::attr(n, "nodes_featureids", std::vector<std::int64_t>{0, 0, 0});
  GraphBuilder::attr(n, "nodes_modes", std::vector<std::string>{"BRANCH_LEQ", "LEAF", "LEAF"});
  GraphBuilder::attr(n, "nodes_values", std::vector<float>{0.5F, 0, 0});
  GraphBuilder::attr(n, "nodes_truenodeids", std::vector<std::int64_t>{1, 0, 0});
  GraphBuilder::attr(n, "nodes_falsenodeids", std::vector<std::int64_t>{2, 0, 0});
  GraphBuilder::attr(n, "nodes_missing_value_tracks_true", std::vector<std::int64_t>{0, 0, 0});
  if (binary) {
    GraphBuilder::attr(n, "class_treeids", std::vector<std::int64_t>{0, 0});
    GraphBuilder::attr(n, "class_nodeids", std::vector<std::int64_t>{1, 2});
    GraphBuilder::attr(n, "class_ids", std::vector<std::int64_t>{1, 1});
    GraphBuilder::attr(n, "class_weights", std::vector<float>{-1.0F, 1.0F});
  } else {
    GraphBuilder::attr(n, "class_treeids", std::vector<std::int64_t>{0, 0, 0, 0});
    GraphBuilder::attr(n, "class_nodeids", std::vector<std::int64_t>{1, 1, 2, 2});
    GraphBuilder::attr(n, "class_ids", std::vector<std::int64_t>{0, 1, 0, 1});
    GraphBuilder::attr(n, "class_weights", std::vector<float>{0.8F, 0.2F, 0.3F, 0.7F});
  }
  GraphBuilder::attr(n, "classlabels_int64s", std::vector<std::int64_t>{0, 1});
  GraphBuilder::attr(n, "base_values", std::vector<float>{0, 0});
  GraphBuilder::attr(n, "post_transform", "NONE");
  gb.output("label", onnx::TensorProto::INT64);
  gb.output("probabilities");
  return n;
}

onnx::NodeProto* tree_regressor(GraphBuilder& gb) {
  gb.input("x", {-1, 2});
  auto* n = gb.node("TreeEnsembleRegressor", {"x"}, {"y"}, "TreeEnsembleRegressor", "ai.onnx.ml");
  GraphBuilder::attr(n, "nodes_treeids", std::vector<std::int64_t>{0, 0, 0});
  GraphBuilder::attr(n, "nodes_nodeids", std::vector<std::int64_t>{0, 1, 2});
  GraphBuilder::attr(n, "nodes_featureids", std::vector<std::int64_t>{1, 0, 0});
  GraphBuilder::attr(n, "nodes_modes", std::vector<std::string>{"BRANCH_LT", "LEAF", "LEAF"});
  GraphBuilder::attr(n, "nodes_values", std::vector<float>{2.0F, 0, 0});
  GraphBuilder::attr(n, "nodes_truenodeids", std::vector<std::int64_t>{1, 0, 0});
  GraphBuilder::attr(n, "nodes_falsenodeids", std::vector<std::int64_t>{2, 0, 0});
  GraphBuilder::attr(n, "target_treeids", std::vector<std::int64_t>{0, 0});
  GraphBuilder::attr(n, "target_nodeids", std::vector<std::int64_t>{1, 2});
  GraphBuilder::attr(n, "target_ids", std::vector<std::int64_t>{0, 0});
  GraphBuilder::attr(n, "target_weights", std::vector<float>{-1.0F, 1.0F});
  GraphBuilder::attr(n, "n_targets", std::int64_t{1});
  GraphBuilder::attr(n, "base_values", std::vector<float>{0.25F});
  GraphBuilder::attr(n, "aggregate_function", "SUM");
  GraphBuilder::attr(n, "post_transform", "NONE");
  gb.output("y");
  return n;
}

onnx::NodeProto* linear_classifier(GraphBuilder& gb) {
  gb.input("x", {-1, 2});
  auto* n = gb.node("LinearClassifier", {"x"}, {"label", "scores"}, "LinearClassifier", "ai.onnx.ml");
  GraphBuilder::attr(n, "coefficients", std::vector<float>{1, -1, -1, 1});
  GraphBuilder::attr(n, "intercepts", std::vector<float>{0, 0.5F});
  GraphBuilder::attr(n, "classlabels_ints", std::vector<std::int64_t>{0, 1});
  GraphBuilder::attr(n, "multi_class", std::int64_t{0});
  GraphBuilder::attr(n, "post_transform", "SOFTMAX");
  gb.output("label", onnx::TensorProto::INT64);
  gb.output("scores");
  return n;
}

onnx::NodeProto* linear_regressor(GraphBuilder& gb) {
  gb.input("x", {-1, 2});
  auto* n = gb.node("LinearRegressor", {"x"}, {"y"}, "LinearRegressor", "ai.onnx.ml");
  GraphBuilder::attr(n, "coefficients", std::vector<float>{1, 2});
  GraphBuilder::attr(n, "intercepts", std::vector<float>{-1});
  gb.output("y");
  return n;
}

// Scaler -> Normalizer -> LinearRegressor.
onnx::NodeProto* scaled(GraphBuilder& gb, const char* op) {
  gb.input("x", {-1, 2});
  auto* sc = gb.node("Scaler", {"x"}, {"s"}, "Scaler", "ai.onnx.ml");
  GraphBuilder::attr(sc, "offset", std::vector<float>{1, 2});
  GraphBuilder::attr(sc, "scale", std::vector<float>{0.5F, 2});
  auto* nz = gb.node("Normalizer", {"s"}, {"n"}, "Normalizer", "ai.onnx.ml");
  GraphBuilder::attr(nz, "norm", "L1");
  auto* lr = gb.node("LinearRegressor", {"n"}, {"y"}, "LinearRegressor", "ai.onnx.ml");
  GraphBuilder::attr(lr, "coefficients", std::vector<float>{1, 2});
  gb.output("y");
  return std::string(op) == "Scaler" ? sc : nz;
}

onnx::NodeProto* gemm(GraphBuilder& gb) {
  gb.input("x", {-1, 2});
  gb.init("w", {2, 1}, {1, 2});
  auto* n = gb.node("Gemm", {"x", "w"}, {"y"}, "Gemm");
  GraphBuilder::attr(n, "alpha", 1.0F);
  gb.output("y");
  return n;
}

// A skl2onnx-shaped pipeline: `column` (declared `type`) one-hot encoded by its cats_strings (or,
// with `ints`, cats_int64s), beside a numeric column, into a linear classifier.
onnx::NodeProto* one_hot_pipeline(GraphBuilder& gb, int type = onnx::TensorProto::STRING, bool ints = false) {
  gb.input("sex", {-1, 1}, type);
  gb.input("age", {-1, 1});
  auto* oh = gb.node("OneHotEncoder", {"sex"}, {"sex_oh"}, "OneHotEncoder", "ai.onnx.ml");
  if (ints) {
    GraphBuilder::attr(oh, "cats_int64s", std::vector<std::int64_t>{0, 1});
  } else {
    GraphBuilder::attr(oh, "cats_strings", std::vector<std::string>{"Female", "Male"});
  }
  GraphBuilder::attr(oh, "zeros", std::int64_t{1});
  gb.init_ints("shape", {2}, {-1, 2});
  gb.node("Reshape", {"sex_oh", "shape"}, {"sex_flat"});
  auto* cat = gb.node("Concat", {"sex_flat", "age"}, {"features"});
  GraphBuilder::attr(cat, "axis", std::int64_t{1});
  auto* lc = gb.node("LinearClassifier", {"features"}, {"label", "scores"}, "LinearClassifier", "ai.onnx.ml");
  GraphBuilder::attr(lc, "coefficients", std::vector<float>{1, -1, 0.1F, -1, 1, -0.1F});
  GraphBuilder::attr(lc, "intercepts", std::vector<float>{0, 0});
  GraphBuilder::attr(lc, "classlabels_ints", std::vector<std::int64_t>{0, 1});
  gb.output("label", onnx::TensorProto::INT64);
  gb.output("scores");
  return oh;
}

// `column` (declared `type`) read by LabelEncoder keys_strings (or keys_int64s) as ordinal codes.
onnx::NodeProto* label_pipeline(GraphBuilder& gb, int type = onnx::TensorProto::STRING, bool ints = false) {
  gb.opset("ai.onnx.ml", 2);
  gb.input("race", {-1, 1}, type);
  auto* le = gb.node("LabelEncoder", {"race"}, {"code"}, "LabelEncoder", "ai.onnx.ml");
  if (ints) {
    GraphBuilder::attr(le, "keys_int64s", std::vector<std::int64_t>{3, 5, 7});
  } else {
    GraphBuilder::attr(le, "keys_strings", std::vector<std::string>{"a", "b", "c"});
  }
  GraphBuilder::attr(le, "values_int64s", std::vector<std::int64_t>{0, 1, 2});
  auto* cast = gb.node("Cast", {"code"}, {"codef"});
  GraphBuilder::attr(cast, "to", std::int64_t{onnx::TensorProto::FLOAT});
  auto* lr = gb.node("LinearRegressor", {"codef"}, {"y"}, "LinearRegressor", "ai.onnx.ml");
  GraphBuilder::attr(lr, "coefficients", std::vector<float>{1});
  gb.output("y");
  return le;
}

struct OnnxCase {
  std::string name;
  std::function<void(GraphBuilder&)> build;  // the bad model
  std::vector<std::string> message;          // parts of the InputError's message
};

void expect_onnx_refused(const std::vector<OnnxCase>& cases) {
  for (const OnnxCase& c : cases) {
    GraphBuilder gb;
    c.build(gb);
    expect_refused([&] { (void)gb.load("model.onnx"); }, "model.onnx", c.message, c.name);
  }
}

TEST(LoaderChecksOnnx, TheModelsTheCasesChangeLoad) {
  const std::vector<std::function<void(GraphBuilder&)>> builds = {
      [](GraphBuilder& gb) { tree_classifier(gb); },
      [](GraphBuilder& gb) { tree_classifier(gb, true); },
      [](GraphBuilder& gb) { tree_regressor(gb); },
      [](GraphBuilder& gb) { linear_classifier(gb); },
      [](GraphBuilder& gb) { linear_regressor(gb); },
      [](GraphBuilder& gb) { scaled(gb, "Scaler"); },
      [](GraphBuilder& gb) { gemm(gb); },
      [](GraphBuilder& gb) { one_hot_pipeline(gb); },
      [](GraphBuilder& gb) { one_hot_pipeline(gb, onnx::TensorProto::INT64, true); },
      [](GraphBuilder& gb) { label_pipeline(gb); },
      [](GraphBuilder& gb) { label_pipeline(gb, onnx::TensorProto::INT64, true); },
  };
  for (std::size_t i = 0; i < builds.size(); ++i) {
    GraphBuilder gb;
    builds[i](gb);
    EXPECT_NO_THROW((void)gb.load("model.onnx")) << "model " << i;
  }
  GraphBuilder gb;
  tree_regressor(gb);
  const Model m = gb.load("model.onnx");
  Eigen::MatrixXd x(2, 2);
  x << 0, 0, 1, 3;  // columns are rows: x1 = 1 < 2 goes true, x1 = 3 false
  const Evaluation e = evaluate(m, x);
  EXPECT_DOUBLE_EQ(e.outputs(0, 0), -0.75);
  EXPECT_DOUBLE_EQ(e.outputs(0, 1), 1.25);
}

TEST(LoaderChecksOnnx, NonFiniteNumbersAreRefusedNamingTheAttribute) {
  expect_onnx_refused({
      // The issue's reproducer: base_values [NaN, 0] loaded and was "verified".
      {"classifier base_values NaN",
       [](GraphBuilder& gb) {
         GraphBuilder::drop(tree_classifier(gb), "base_values"),
             GraphBuilder::attr(gb.g->mutable_node(0), "base_values", std::vector<float>{kNaN, 0});
       },
       {"node 'TreeEnsembleClassifier'", "attribute base_values[0] is NaN"}},
      {"binary classifier base_values inf",
       [](GraphBuilder& gb) {
         GraphBuilder::drop(tree_classifier(gb, true), "base_values"),
             GraphBuilder::attr(gb.g->mutable_node(0), "base_values", std::vector<float>{0, kInf});
       },
       {"node 'TreeEnsembleClassifier'", "attribute base_values[1] is inf"}},
      {"base_values_as_tensor NaN",
       [](GraphBuilder& gb) {
         auto* n = tree_classifier(gb);
         GraphBuilder::drop(n, "base_values");
         GraphBuilder::attr_tensor(n, "base_values_as_tensor", {0.0, std::nan("")});
       },
       {"attribute base_values_as_tensor[1] is NaN"}},
      {"regressor base_values -inf",
       [](GraphBuilder& gb) {
         auto* n = tree_regressor(gb);
         GraphBuilder::drop(n, "base_values");
         GraphBuilder::attr(n, "base_values", std::vector<float>{-kInf});
       },
       {"node 'TreeEnsembleRegressor'", "attribute base_values[0] is -inf"}},
      {"class_weights NaN",
       [](GraphBuilder& gb) {
         auto* n = tree_classifier(gb);
         GraphBuilder::drop(n, "class_weights");
         GraphBuilder::attr(n, "class_weights", std::vector<float>{0.8F, kNaN, 0.3F, 0.7F});
       },
       {"attribute class_weights[1] is NaN"}},
      {"target_weights inf",
       [](GraphBuilder& gb) {
         auto* n = tree_regressor(gb);
         GraphBuilder::drop(n, "target_weights");
         GraphBuilder::attr(n, "target_weights", std::vector<float>{kInf, 1});
       },
       {"attribute target_weights[0] is inf"}},
      {"nodes_values NaN",
       [](GraphBuilder& gb) {
         auto* n = tree_classifier(gb);
         GraphBuilder::drop(n, "nodes_values");
         GraphBuilder::attr(n, "nodes_values", std::vector<float>{kNaN, 0, 0});
       },
       {"attribute nodes_values[0] is NaN"}},
      {"coefficients NaN",
       [](GraphBuilder& gb) {
         auto* n = linear_classifier(gb);
         GraphBuilder::drop(n, "coefficients");
         GraphBuilder::attr(n, "coefficients", std::vector<float>{1, -1, kNaN, 1});
       },
       {"node 'LinearClassifier'", "attribute coefficients[2] is NaN"}},
      {"intercepts inf",
       [](GraphBuilder& gb) {
         auto* n = linear_regressor(gb);
         GraphBuilder::drop(n, "intercepts");
         GraphBuilder::attr(n, "intercepts", std::vector<float>{kInf});
       },
       {"node 'LinearRegressor'", "attribute intercepts[0] is inf"}},
      {"Scaler offset NaN",
       [](GraphBuilder& gb) {
         auto* n = scaled(gb, "Scaler");
         GraphBuilder::drop(n, "offset");
         GraphBuilder::attr(n, "offset", std::vector<float>{1, kNaN});
       },
       {"node 'Scaler'", "attribute offset[1] is NaN"}},
      {"Scaler scale inf",
       [](GraphBuilder& gb) {
         auto* n = scaled(gb, "Scaler");
         GraphBuilder::drop(n, "scale");
         GraphBuilder::attr(n, "scale", std::vector<float>{kInf, 1});
       },
       {"node 'Scaler'", "attribute scale[0] is inf"}},
      {"Gemm alpha NaN",
       [](GraphBuilder& gb) {
         auto* n = gemm(gb);
         GraphBuilder::drop(n, "alpha");
         GraphBuilder::attr(n, "alpha", kNaN);
       },
       {"node 'Gemm'", "attribute alpha is NaN"}},
      {"pipeline Scaler offset NaN",
       [](GraphBuilder& gb) {
         one_hot_pipeline(gb);
         auto* sc = gb.node("Scaler", {"age"}, {"age_s"}, "AgeScaler", "ai.onnx.ml");
         GraphBuilder::attr(sc, "offset", std::vector<float>{kNaN});
         GraphBuilder::attr(sc, "scale", std::vector<float>{1});
         gb.g->mutable_node(2)->set_input(1, "age_s");  // Concat reads the scaled age
         gb.g->mutable_node()->SwapElements(2, 4);      // Scaler before Concat
         gb.g->mutable_node()->SwapElements(3, 4);
       },
       {"node 'AgeScaler'", "attribute offset[0] is NaN"}},
  });
}

TEST(LoaderChecksOnnx, UnknownEnumsAndFlagsAreRefusedNamingTheAttribute) {
  auto set_string = [](onnx::NodeProto* n, const char* name, const char* v) {
    GraphBuilder::drop(n, name);
    GraphBuilder::attr(n, name, v);
  };
  auto set_int = [](onnx::NodeProto* n, const char* name, std::int64_t v) {
    GraphBuilder::drop(n, name);
    GraphBuilder::attr(n, name, v);
  };
  expect_onnx_refused({
      {"classifier post_transform",
       [&](GraphBuilder& gb) { set_string(tree_classifier(gb), "post_transform", "GARBAGE"); },
       {"node 'TreeEnsembleClassifier'", "attribute post_transform is 'GARBAGE'"}},
      // The single-score path read post_transform only for PROBIT and SOFTMAX_ZERO.
      {"binary classifier post_transform",
       [&](GraphBuilder& gb) { set_string(tree_classifier(gb, true), "post_transform", "GARBAGE"); },
       {"attribute post_transform is 'GARBAGE'"}},
      {"regressor post_transform",
       [&](GraphBuilder& gb) { set_string(tree_regressor(gb), "post_transform", "logistic"); },
       {"node 'TreeEnsembleRegressor'", "attribute post_transform is 'logistic'"}},
      {"linear classifier post_transform",
       [&](GraphBuilder& gb) { set_string(linear_classifier(gb), "post_transform", "SIGMOID"); },
       {"node 'LinearClassifier'", "attribute post_transform is 'SIGMOID'"}},
      {"linear regressor post_transform",
       [&](GraphBuilder& gb) { set_string(linear_regressor(gb), "post_transform", ""); },
       {"attribute post_transform is ''"}},
      {"aggregate_function",
       [&](GraphBuilder& gb) { set_string(tree_regressor(gb), "aggregate_function", "MEDIAN"); },
       {"attribute aggregate_function is 'MEDIAN'"}},
      {"nodes_modes",
       [&](GraphBuilder& gb) {
         auto* n = tree_classifier(gb);
         GraphBuilder::drop(n, "nodes_modes");
         GraphBuilder::attr(n, "nodes_modes", std::vector<std::string>{"BRANCH_LE", "LEAF", "LEAF"});
       },
       {"attribute nodes_modes[0] is 'BRANCH_LE'"}},
      {"Normalizer norm",
       [&](GraphBuilder& gb) { set_string(scaled(gb, "Normalizer"), "norm", "L3"); },
       {"node 'Normalizer'", "attribute norm is 'L3'"}},
      {"multi_class",
       [&](GraphBuilder& gb) { set_int(linear_classifier(gb), "multi_class", 2); },
       {"node 'LinearClassifier'", "attribute multi_class is 2 (expected 0 or 1)"}},
      {"nodes_missing_value_tracks_true",
       [&](GraphBuilder& gb) {
         auto* n = tree_classifier(gb);
         GraphBuilder::drop(n, "nodes_missing_value_tracks_true");
         GraphBuilder::attr(n, "nodes_missing_value_tracks_true", std::vector<std::int64_t>{0, 2, 0});
       },
       {"attribute nodes_missing_value_tracks_true[1] is 2"}},
      {"Gemm transA",
       [&](GraphBuilder& gb) { set_int(gemm(gb), "transA", 2); },
       {"node 'Gemm'", "attribute transA is 2"}},
      {"OneHotEncoder zeros",
       [&](GraphBuilder& gb) { set_int(one_hot_pipeline(gb), "zeros", 7); },
       {"node 'OneHotEncoder'", "attribute zeros is 7 (expected 0 or 1)"}},
      {"Dropout training_mode",
       [&](GraphBuilder& gb) {
         gb.input("x", {-1, 2});
         gb.init("ratio", {}, {0.5F});
         gb.init_ints("training", {}, {1});
         gb.node("Dropout", {"x", "ratio", "training"}, {"y"}, "Dropout");
         gb.output("y");
       },
       {"node 'Dropout'", "Dropout in training mode"}},
      {"Cast to",
       [&](GraphBuilder& gb) {
         gb.input("x", {-1, 2});
         GraphBuilder::attr(gb.node("Cast", {"x"}, {"y"}, "Cast"), "to", std::int64_t{99});
         gb.output("y");
       },
       {"node 'Cast'", "attribute to is 99"}},
  });
  // Known values witness cannot encode stay UnsupportedError (an InputError too: exit code 2).
  GraphBuilder probit;
  set_string(tree_classifier(probit), "post_transform", "PROBIT");
  EXPECT_THROW((void)probit.load("model.onnx"), UnsupportedError);
  GraphBuilder l2;
  set_string(scaled(l2, "Normalizer"), "norm", "L2");
  EXPECT_THROW((void)l2.load("model.onnx"), UnsupportedError);
  GraphBuilder multinomial;  // multi_class 1: the same scores
  set_int(linear_classifier(multinomial), "multi_class", 1);
  EXPECT_NO_THROW((void)multinomial.load("model.onnx"));
}

TEST(LoaderChecksOnnx, OpsetsOutsideTheLoadersRangeAreRefused) {
  expect_onnx_refused({
      {"ml opset 99",
       [](GraphBuilder& gb) {
         tree_classifier(gb);
         gb.opset("ai.onnx.ml", 99);
       },
       {"opset_import", "ai.onnx.ml opset 99: witness reads opsets 1 to 5"}},
      {"ml opset 0",
       [](GraphBuilder& gb) {
         tree_classifier(gb);
         gb.opset("ai.onnx.ml", 0);
       },
       {"ai.onnx.ml opset 0"}},
      {"default opset 99",
       [](GraphBuilder& gb) {
         gemm(gb);
         gb.opset("", 99);
       },
       {"the default domain (ai.onnx) opset 99: witness reads opsets 7 to 23"}},
      {"default opset 1",
       [](GraphBuilder& gb) {
         gemm(gb);
         gb.opset("", 1);
       },
       {"opset 1: witness reads opsets 7 to 23"}},
      {"ml imported twice",
       [](GraphBuilder& gb) {
         tree_classifier(gb);
         auto* again = gb.mp.add_opset_import();
         again->set_domain("ai.onnx.ml");
         again->set_version(1);
       },
       {"imports ai.onnx.ml twice"}},
      {"pipeline ml opset 99",
       [](GraphBuilder& gb) {
         one_hot_pipeline(gb);
         gb.opset("ai.onnx.ml", 99);
       },
       {"ai.onnx.ml opset 99"}},
      // Attributes and ops the imported opset does not have.
      {"base_values_as_tensor at ml opset 1",
       [](GraphBuilder& gb) {
         auto* n = tree_classifier(gb);
         GraphBuilder::drop(n, "base_values");
         GraphBuilder::attr_tensor(n, "base_values_as_tensor", {0.0, 0.0});
         gb.opset("ai.onnx.ml", 1);
       },
       {"attribute base_values_as_tensor needs ai.onnx.ml opset 3; the model imports 1"}},
      {"LabelEncoder keys at ml opset 1",
       [](GraphBuilder& gb) {
         label_pipeline(gb);
         gb.opset("ai.onnx.ml", 1);
       },
       {"node 'LabelEncoder'", "LabelEncoder of ai.onnx.ml opset 1"}},
  });
  GraphBuilder ml1;  // ai.onnx.ml 1 has TreeEnsembleClassifier with list attributes
  tree_classifier(ml1);
  ml1.opset("ai.onnx.ml", 1);
  EXPECT_NO_THROW((void)ml1.load("model.onnx"));
}

TEST(LoaderChecksOnnx, ColumnTypesMustMatchWhatTheOpsRead) {
  expect_onnx_refused({
      // A string column declared FLOAT: the encoder's categories are strings.
      {"float column one-hot by strings",
       [](GraphBuilder& gb) { one_hot_pipeline(gb, onnx::TensorProto::FLOAT); },
       {"node 'OneHotEncoder'",
        "column 'sex' is declared tensor(float), but OneHotEncoder (cats_strings) reads it as text"}},
      {"string column one-hot by integers",
       [](GraphBuilder& gb) { one_hot_pipeline(gb, onnx::TensorProto::STRING, true); },
       {"column 'sex' is declared tensor(string), but OneHotEncoder (cats_int64s) reads it as numbers"}},
      {"float column label-encoded by strings",
       [](GraphBuilder& gb) { label_pipeline(gb, onnx::TensorProto::FLOAT); },
       {"node 'LabelEncoder'",
        "column 'race' is declared tensor(float), but LabelEncoder (keys_strings) reads it as text"}},
      {"string column label-encoded by integers",
       [](GraphBuilder& gb) { label_pipeline(gb, onnx::TensorProto::STRING, true); },
       {"column 'race' is declared tensor(string), but LabelEncoder (keys_int64s) reads it as numbers"}},
      {"string column scaled",
       [](GraphBuilder& gb) {
         one_hot_pipeline(gb);
         gb.input("city", {-1, 1}, onnx::TensorProto::STRING);
         auto* sc = gb.node("Scaler", {"city"}, {"city_s"}, "CityScaler", "ai.onnx.ml");
         GraphBuilder::attr(sc, "offset", std::vector<float>{1});
         auto* cat = gb.g->mutable_node(2);
         cat->add_input("city_s");
         gb.g->mutable_node()->SwapElements(2, 4);  // Scaler before Concat
         gb.g->mutable_node()->SwapElements(3, 4);
         auto* lc = gb.g->mutable_node(4);
         GraphBuilder::drop(lc, "coefficients");
         GraphBuilder::attr(lc, "coefficients", std::vector<float>{1, -1, 0.1F, 1, -1, 1, -0.1F, 1});
       },
       {"node 'CityScaler'", "column 'city' is declared tensor(string), but Scaler reads it as numbers"}},
  });
}

TEST(LoaderChecksOnnx, SplitSizesAreCheckedBeforeTheyIndex) {
  // A negative size made the preprocessing read before the start of its column list.
  for (const auto& [sizes, message] : {std::pair{std::vector<std::int64_t>{-1, 3}, "split size -1 for an axis of 2"},
                                       std::pair{std::vector<std::int64_t>{1, 2}, "split sizes add up to 3"}}) {
    GraphBuilder gb;
    gb.opset("", 11);
    gb.opset("ai.onnx.ml", 2);
    gb.input("x", {-1, 2}, onnx::TensorProto::STRING);
    auto* split = gb.node("Split", {"x"}, {"a", "b"}, "Split");
    GraphBuilder::attr(split, "axis", std::int64_t{1});
    GraphBuilder::attr(split, "split", sizes);
    auto* le = gb.node("LabelEncoder", {"b"}, {"codes"}, "LabelEncoder", "ai.onnx.ml");
    GraphBuilder::attr(le, "keys_strings", std::vector<std::string>{"p", "q"});
    GraphBuilder::attr(le, "values_int64s", std::vector<std::int64_t>{0, 1});
    GraphBuilder::attr(gb.node("Cast", {"codes"}, {"cf"}), "to", std::int64_t{onnx::TensorProto::FLOAT});
    GraphBuilder::attr(gb.node("LinearRegressor", {"cf"}, {"y"}, "LinearRegressor", "ai.onnx.ml"), "coefficients",
                       std::vector<float>{1});
    gb.output("y");
    expect_refused([&] { (void)gb.load("model.onnx"); }, "model.onnx", {"node 'Split'", message}, message);
  }
}

TEST(LoaderChecksOnnx, OneHotZerosZeroReadsAsZerosOne) {
  // zeros=1: an unknown category gives all zeros; zeros=0: the runtime fails on one. witness's
  // domain holds only known categories and its data readers refuse others, so both are exact.
  GraphBuilder one;
  one_hot_pipeline(one);
  GraphBuilder zero;
  GraphBuilder::drop(one_hot_pipeline(zero), "zeros");
  GraphBuilder::attr(zero.g->mutable_node(0), "zeros", std::int64_t{0});
  const Model a = one.load("model.onnx");
  const Model b = zero.load("model.onnx");
  ASSERT_EQ(a.columns.size(), 2U);
  ASSERT_EQ(a.input_width(), 3);
  EXPECT_EQ(a.columns[0].categories, b.columns[0].categories);
  Eigen::MatrixXd x(a.input_width(), 2);
  x << 1, 0, 0, 1, 30, 50;
  EXPECT_EQ(evaluate(a, x).outputs, evaluate(b, x).outputs);
}

TEST(LoaderChecksOnnx, ModelBuilderRefusesNonFiniteBaseValues) {
  // The last line of defence for every loader (and the Python bindings).
  auto te = std::make_shared<TreeEnsemble>();
  TreeEnsemble::Tree t;
  t.nodes.resize(1);
  t.leaves.push_back({0, 0, 1.0});
  te->trees.push_back(t);
  te->base_values = {std::nan("")};
  ModelBuilder b("m", {"x"});
  b.set_source("m.json", "test");
  expect_refused([&] { (void)b.tree_ensemble(b.input(), te, "trees"); }, "m.json", {"trees", "base value 0 is nan"},
                 "ModelBuilder");
}

// --- XGBoost ----------------------------------------------------------------------------------

// One tree, x0 < 0.5 ? -1 : 1 (NaN left), over two features.
const char* const kXgb = R"({"learner":{"feature_names":["a","b"],"gradient_booster":{"model":{
  "gbtree_model_param":{"num_parallel_tree":"1","num_trees":"1"},"tree_info":[0],"trees":[{
  "base_weights":[0,0,0],"categories":[],"categories_nodes":[],"categories_segments":[],"categories_sizes":[],
  "default_left":[1,0,0],"id":0,"left_children":[1,-1,-1],"right_children":[2,-1,-1],
  "split_conditions":[5E-1,-1E0,1E0],"split_indices":[0,0,0],"split_type":[0,0,0],
  "tree_param":{"num_deleted":"0","num_feature":"2","num_nodes":"3","size_leaf_vector":"0"}}]},"name":"gbtree"},
  "learner_model_param":{"base_score":"5E-1","num_class":"0","num_feature":"2","num_target":"1"},
  "objective":{"name":"binary:logistic"}},"version":[1,7,4]})";

json& tree0(json& doc) { return doc["learner"]["gradient_booster"]["model"]["trees"][0]; }

struct XgbCase {
  std::string name;
  std::function<void(json&)> change;
  std::vector<std::string> message;
  std::string bare = "NaN";  // how XGBoost's text JSON writes the case's non-finite number
};

TEST(LoaderChecksXgboost, TheBaseModelLoadsAsJsonAndUbjson) {
  const json doc = json::parse(kXgb);
  const std::vector<std::uint8_t> ubj = json::to_ubjson(doc);
  for (const std::string& bytes : {std::string(kXgb), std::string(ubj.begin(), ubj.end())}) {
    const Model m = parse_xgboost_json(bytes, "model.json");
    Eigen::MatrixXd x(2, 2);
    x << 0, 1, 0, 0;
    const Evaluation e = evaluate(m, x);
    EXPECT_EQ(e.labels, (std::vector<int>{0, 1}));
  }
}

TEST(LoaderChecksXgboost, BadFieldsAreRefusedInJsonAndUbjson) {
  const double nan = std::nan("");
  const double inf = std::numeric_limits<double>::infinity();
  const std::string t0 = "learner.gradient_booster.model.trees[0]";
  const std::vector<XgbCase> cases = {
      {"NaN split",
       [&](json& d) { tree0(d)["split_conditions"][0] = nan; },
       {t0 + " node 0", "split_condition is NaN"}},
      {"inf split",
       [&](json& d) { tree0(d)["split_conditions"][0] = inf; },
       {t0 + " node 0", "split_condition is inf"},
       "Infinity"},
      {"-inf split",
       [&](json& d) { tree0(d)["split_conditions"][0] = -inf; },
       {"split_condition is -inf"},
       "-Infinity"},
      {"NaN leaf", [&](json& d) { tree0(d)["split_conditions"][1] = nan; }, {t0 + " node 1", "leaf value"}},
      {"inf leaf", [&](json& d) { tree0(d)["split_conditions"][2] = -inf; }, {t0 + " node 2", "is -inf"}, "-Infinity"},
      {"negative feature", [&](json& d) { tree0(d)["split_indices"][0] = -1; }, {"node 0 split index"}},
      {"feature out of range", [&](json& d) { tree0(d)["split_indices"][0] = 2; }, {"node 0 split index", "0 to 1"}},
      {"unknown objective",
       [&](json& d) { d["learner"]["objective"]["name"] = "reg:gamma"; },
       {"learner.objective", "reg:gamma"}},
      {"objective not a string",
       [&](json& d) { d["learner"]["objective"]["name"] = 3; },
       {"learner.objective.name", "expected a string"}},
      {"missing right_children",
       [&](json& d) { tree0(d).erase("right_children"); },
       {t0, "missing field \"right_children\""}},
      {"missing learner_model_param",
       [&](json& d) { d["learner"].erase("learner_model_param"); },
       {"learner", "missing field \"learner_model_param\""}},
      {"child out of range", [&](json& d) { tree0(d)["left_children"][0] = 7; }, {t0, "has child 7"}},
      {"child negative", [&](json& d) { tree0(d)["right_children"][0] = -5; }, {"node 0 right child"}},
      {"cycle",
       [&](json& d) {
         tree0(d)["left_children"][1] = 0;
         tree0(d)["right_children"][1] = 2;
       },
       {t0, "reached twice"}},
      {"NaN base_score", [&](json& d) { d["learner"]["learner_model_param"]["base_score"] = "NaN"; }, {"base_score"}},
      {"absurd num_feature",
       [&](json& d) { d["learner"]["learner_model_param"]["num_feature"] = "100000000"; },
       {"num_feature", "1 to 1000000"}},
      {"num_nodes mismatch",
       [&](json& d) { tree0(d)["tree_param"]["num_nodes"] = "4"; },
       {"tree_param.num_nodes", "does not match"}},
      {"tree_info out of range",
       [&](json& d) { d["learner"]["gradient_booster"]["model"]["tree_info"][0] = 3; },
       {"tree_info[0]"}},
      {"default_left 2", [&](json& d) { tree0(d)["default_left"][0] = 2; }, {"node 0 default_left"}},
      {"split_type 5", [&](json& d) { tree0(d)["split_type"][0] = 5; }, {"node 0 split_type"}},
      {"negative category",
       [&](json& d) {
         tree0(d)["split_type"][0] = 1;
         tree0(d)["categories_nodes"] = {0};
         tree0(d)["categories_segments"] = {0};
         tree0(d)["categories_sizes"] = {1};
         tree0(d)["categories"] = {-3};
       },
       {t0 + ".categories"}},
  };
  for (const XgbCase& c : cases) {
    json doc = json::parse(kXgb);
    c.change(doc);
    // Text JSON as XGBoost writes non-finite numbers (nlohmann writes them as null).
    std::string text = doc.dump();
    for (auto at = text.find("null"); at != std::string::npos; at = text.find("null", at)) text.replace(at, 4, c.bare);
    expect_refused([&] { (void)parse_xgboost_json(text, "model.json"); }, "model.json", c.message, c.name + " (JSON)");
    const std::vector<std::uint8_t> ubj = json::to_ubjson(doc);
    expect_refused([&] { (void)parse_xgboost_json(std::string(ubj.begin(), ubj.end()), "model.ubj"); }, "model.ubj",
                   c.message, c.name + " (UBJSON)");
  }
}

// --- LightGBM ---------------------------------------------------------------------------------

// One tree: x0 <= 0.5 ? (x1 <= 1.5 ? 0.1 : 0.3) : -0.2.
const char* const kLgbHead =
    "tree\nversion=v4\nnum_class=1\nnum_tree_per_iteration=1\nlabel_index=0\nmax_feature_idx=1\n"
    "objective=binary sigmoid:1\nfeature_names=a b\n\n";
const std::vector<std::pair<std::string, std::string>> kLgbTree = {
    {"num_leaves", "3"},      {"num_cat", "0"},       {"split_feature", "0 1"}, {"threshold", "0.5 1.5"},
    {"decision_type", "2 2"}, {"left_child", "1 -1"}, {"right_child", "-2 -3"}, {"leaf_value", "0.1 -0.2 0.3"},
};

// The model with `key` set to `value` (a tree line, or a header line when `header`); an empty
// value drops the line.
std::string lgb(const std::string& key = "", const std::string& value = "", bool header = false) {
  std::string head = kLgbHead;
  if (header) {
    const auto at = head.find("\n" + key + "=");
    const auto eol = head.find('\n', at + 1);
    head.replace(at + 1, eol - at - 1, value.empty() ? std::string("x=") : key + "=" + value);
  }
  std::string out = head + "Tree=0\n";
  for (const auto& [k, v] : kLgbTree) {
    if (!header && k == key) {
      if (!value.empty()) out += k + "=" + value + "\n";
    } else {
      out += k + "=" + v + "\n";
    }
  }
  return out + "shrinkage=1\n\n\nend of trees\n";
}

TEST(LoaderChecksLightgbm, TheBaseModelLoads) {
  const Model m = parse_lightgbm_text(lgb(), "model.txt");
  Eigen::MatrixXd x(2, 3);
  x << 0, 0, 1, 1, 2, 0;
  const Evaluation e = evaluate(m, x);
  EXPECT_DOUBLE_EQ(e.decision(0, 0), 0.1);
  EXPECT_DOUBLE_EQ(e.decision(0, 1), 0.3);
  EXPECT_DOUBLE_EQ(e.decision(0, 2), -0.2);
}

TEST(LoaderChecksLightgbm, BadLinesAreRefusedNamingTheTreeAndNode) {
  struct Case {
    std::string key, value;
    bool header;
    std::vector<std::string> message;
  };
  const std::vector<Case> cases = {
      {"threshold", "inf 1.5", false, {"Tree=0 node 0", "threshold is inf"}},
      {"threshold", "0.5 -inf", false, {"Tree=0 node 1", "threshold is -inf"}},
      {"threshold", "nan 1.5", false, {"Tree=0 node 0", "threshold is NaN"}},
      {"leaf_value", "nan -0.2 0.3", false, {"Tree=0", "leaf_value[0] is nan"}},
      {"leaf_value", "0.1 -0.2 inf", false, {"Tree=0", "leaf_value[2] is inf"}},
      {"split_feature", "-1 1", false, {"Tree=0 node 0", "split_feature -1"}},
      {"split_feature", "0 2", false, {"Tree=0 node 1", "split_feature 2"}},
      {"left_child", "", false, {"Tree=0", "missing line left_child="}},
      {"left_child", "5 -1", false, {"Tree=0", "node 0 has child 5"}},
      {"right_child", "-2 -9", false, {"Tree=0", "node 1 has child -9"}},
      {"left_child", "1 0", false, {"Tree=0", "reached twice"}},
      {"num_leaves", "99999999999", false, {"Tree=0", "num_leaves=99999999999"}},
      {"num_leaves", "-3", false, {"Tree=0", "num_leaves=-3"}},
      {"decision_type", "2 16", false, {"Tree=0 node 1", "decision_type 16"}},
      {"objective", "lambdarank", true, {"objective", "lambdarank"}},
      {"objective", "binary sigmoid:nan", true, {"objective", "sigmoid must be positive"}},
      {"objective", "", true, {"header", "no objective line"}},
      {"max_feature_idx", "-1", true, {"header", "max_feature_idx=-1"}},
      {"max_feature_idx", "", true, {"header", "missing line max_feature_idx="}},
      {"num_class", "0", true, {"header", "num_class=0"}},
  };
  for (const Case& c : cases) {
    const std::string text = lgb(c.key, c.value, c.header);
    expect_refused([&] { (void)parse_lightgbm_text(text, "model.txt"); }, "model.txt", c.message,
                   c.key + "=" + c.value);
  }
}

}  // namespace
}  // namespace witness::loader_checks_test
