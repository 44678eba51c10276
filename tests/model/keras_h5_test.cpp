// The Keras .h5 loader against the Fairify networks (their mlp-json-v1 twins hold the same float32
// weights) and against malformed files. Most malformed files are copies of AC1.h5 patched in
// place: the file has no checksums, so same-length edits of names and of the model_config JSON
// (padded with spaces, which JSON ignores) give well-formed HDF5 with the content we want.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "dataset_rows.h"
#include "model/evaluator.h"
#include "model/loaders.h"
#include "support/paths.h"

#if __has_include(<H5Cpp.h>)
#include <H5Cpp.h>
#define WITNESS_TEST_HAS_H5CPP 1
#endif

namespace witness {
namespace {

namespace fs = std::filesystem;

using test::kFairify;
const std::string kAC1 = WITNESS_SOURCE_DIR "/benchmarks/fairify/models/adult/AC1.h5";  // see test::kFairify

struct Family {
  const char* dataset;
  int count;
};
constexpr Family kFamilies[] = {{"adult", 12}, {"bank", 8}, {"german", 5}};

std::vector<std::string> h5_files(const std::string& dataset) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(kFairify + "/models/" + dataset)) {
    if (e.path().extension() == ".h5") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string sibling_json(const std::string& h5) { return fs::path(h5).replace_extension(".json").string(); }

std::vector<const Node*> dense_nodes(const Model& m) {
  std::vector<const Node*> out;
  for (const Node& n : m.nodes) {
    if (n.op == OpKind::Dense) out.push_back(&n);
  }
  return out;
}

bool same_bits(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

TEST(KerasH5, AllFairifyModelsMatchJsonOnData) {
  int loaded = 0;
  for (const Family& f : kFamilies) {
    const Eigen::MatrixXd x = test::feature_rows(kFairify + "/data/" + f.dataset + ".csv", 2000);
    ASSERT_EQ(x.cols(), std::string(f.dataset) == "german" ? 1000 : 2000);
    const std::vector<std::string> files = h5_files(f.dataset);
    EXPECT_EQ(static_cast<int>(files.size()), f.count) << f.dataset;
    for (const std::string& file : files) {
      SCOPED_TRACE(file);
      const Model h5 = load_keras_h5(file);
      const Model js = load_mlp_json(sibling_json(file));
      EXPECT_EQ(h5.format, "keras-h5");
      EXPECT_EQ(h5.name, fs::path(file).stem().string());
      EXPECT_EQ(h5.source, file);
      ASSERT_EQ(h5.input_width(), x.rows());
      EXPECT_EQ(h5.input_names.front(), "x0");
      EXPECT_EQ(h5.input_names.back(), "x" + std::to_string(x.rows() - 1));
      EXPECT_EQ(h5.nodes.back().op, OpKind::Sigmoid);  // kept in the IR; the rule looks through it
      EXPECT_EQ(h5.rule.kind, DecisionRule::Kind::Threshold);
      EXPECT_EQ(h5.nodes[static_cast<std::size_t>(h5.rule.node)].op, OpKind::Dense);
      const Evaluation a = evaluate(h5, x);
      const Evaluation b = evaluate(js, x);
      EXPECT_EQ(a.labels, b.labels);
      ASSERT_EQ(a.decision.rows(), 1);
      EXPECT_LE((a.decision - b.decision).cwiseAbs().maxCoeff(), 1e-9);
      ++loaded;
    }
  }
  EXPECT_EQ(loaded, 25);
}

TEST(KerasH5, WeightsBitIdenticalToJson) {
  for (const Family& f : kFamilies) {
    for (const std::string& file : h5_files(f.dataset)) {
      SCOPED_TRACE(file);
      const Model h5 = load_keras_h5(file);
      const Model js = load_mlp_json(sibling_json(file));
      ASSERT_EQ(h5.nodes.size(), js.nodes.size());
      for (std::size_t i = 0; i < h5.nodes.size(); ++i) EXPECT_EQ(h5.nodes[i].op, js.nodes[i].op) << "node " << i;
      const auto a = dense_nodes(h5);
      const auto b = dense_nodes(js);
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_TRUE(same_bits(a[i]->weights, b[i]->weights)) << "layer " << i;
        EXPECT_TRUE(same_bits(a[i]->values, b[i]->values)) << "layer " << i;
      }
    }
  }
  // BM4 lists its first layer's weights as dense_4/dense_4_1/...: found through weight_names.
  EXPECT_EQ(dense_nodes(load_keras_h5(kFairify + "/models/bank/BM4.h5")).front()->name, "dense_4");
}

// ---- malformed and hand-made files ----

class KerasH5Files : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ =
        fs::temp_directory_path() / ("witness_keras_h5_" + std::to_string(std::random_device{}()) + "_" + info->name());
    fs::create_directories(dir_);
    ac1_ = read_file(kAC1);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string write(const std::string& name, const std::string& bytes) const {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    EXPECT_TRUE(out.good());
    return path;
  }

  // A copy of AC1.h5 with every occurrence of `from` replaced by `to` (same length).
  std::string patched(const std::string& from, const std::string& to, int expected_count = 1) const {
    EXPECT_EQ(from.size(), to.size());
    std::string bytes = ac1_;
    int count = 0;
    for (auto pos = bytes.find(from); pos != std::string::npos; pos = bytes.find(from, pos + to.size())) {
      bytes.replace(pos, from.size(), to);
      ++count;
    }
    EXPECT_EQ(count, expected_count) << from;
    return bytes;
  }

  // A copy of AC1.h5 whose model_config JSON is `config`, padded with spaces to the stored length.
  std::string with_config(const std::string& config) const {
    const auto start = ac1_.find("{\"class_name\": \"Sequential\"");
    const auto end = ac1_.find('\0', start);
    if (start == std::string::npos || config.size() > end - start) {
      ADD_FAILURE() << "config of " << config.size() << " bytes does not fit in " << end - start;
      return ac1_;
    }
    std::string bytes = ac1_;
    bytes.replace(start, end - start, config + std::string(end - start - config.size(), ' '));
    return bytes;
  }

  // Runs the loader on `path`, expecting an error of type E that names the file, mentions every
  // string in `parts`, and leaves stderr silent (no HDF5 error stack).
  template <typename E = InputError>
  void expect_error(const std::string& path, const std::vector<std::string>& parts) const {
    ::testing::internal::CaptureStderr();
    std::string what;
    bool thrown = false;
    try {
      load_keras_h5(path);
    } catch (const E& e) {
      thrown = true;
      what = e.what();
    } catch (const std::exception& e) {
      what = std::string("wrong exception type: ") + e.what();
    }
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(thrown) << what;
    EXPECT_NE(what.find(path), std::string::npos) << what;
    for (const std::string& p : parts) EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' not in: " << what;
    EXPECT_EQ(err, "");
  }

  // The float32 bytes of a Dense layer's bias in AC1 (as the JSON twin gives them).
  std::string bias_bytes(std::size_t layer) const {
    const Model js = load_mlp_json(sibling_json(kAC1));
    const Eigen::VectorXd& b = dense_nodes(js).at(layer)->values;
    std::string out;
    for (Eigen::Index i = 0; i < b.size(); ++i) {
      const auto f = static_cast<float>(b(i));
      out.append(reinterpret_cast<const char*>(&f), sizeof f);
    }
    return out;
  }

  fs::path dir_;
  std::string ac1_;
};

TEST_F(KerasH5Files, TruncatedFiles) {
  expect_error(write("first1000.h5", ac1_.substr(0, 1000)), {"truncated or corrupt HDF5 file"});
  expect_error(write("half.h5", ac1_.substr(0, ac1_.size() / 2)), {"truncated or corrupt HDF5 file"});
  expect_error(write("all_but_one.h5", ac1_.substr(0, ac1_.size() - 1)), {});
}

TEST_F(KerasH5Files, NotHdf5) {
  std::mt19937 rng(7);
  std::string noise(4096, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  expect_error(write("random.h5", noise), {"not an HDF5 file"});
  expect_error(write("empty.h5", ""), {"not an HDF5 file"});
  expect_error(write("text.h5", "{\"format\": \"mlp-json-v1\"}"), {"not an HDF5 file"});
  expect_error((dir_ / "missing.h5").string(), {"cannot open file"});
  // A valid signature followed by noise: HDF5 must reject the superblock, not crash.
  for (int seed = 0; seed < 20; ++seed) {
    rng.seed(static_cast<unsigned>(seed));
    std::string bytes = ac1_.substr(0, 8) + noise.substr(0, 2048);
    for (std::size_t i = 8; i < bytes.size(); ++i) bytes[i] = static_cast<char>(rng());
    expect_error(write("sig_noise.h5", bytes), {});
  }
}

TEST_F(KerasH5Files, MissingModelConfig) {
  expect_error(write("no_config.h5", patched("model_config", "model_confiX")), {"missing attribute model_config"});
}

TEST_F(KerasH5Files, ModelConfigNotJson) {
  expect_error(write("not_json.h5", with_config("this is not JSON {")), {"model_config", "not valid JSON"});
  expect_error(write("array.h5", with_config("[1, 2, 3]")), {"model_config", "expected a JSON object"});
  expect_error(write("no_layers.h5", with_config(R"({"class_name": "Sequential", "config": {"layers": 3}})")),
               {"layers"});
  expect_error<UnsupportedError>(write("subclassed.h5", with_config(R"({"class_name": "MyModel", "config": {}})")),
                                 {"model class 'MyModel' is not supported"});
}

TEST_F(KerasH5Files, WrongKernelShape) {
  // The config says 17 units; the stored kernel is [13, 16].
  expect_error(write("units.h5", patched("\"units\": 16", "\"units\": 17")),
               {"layer 'dense_5'", "model_weights/dense_5/dense_5/kernel:0", "[13, 16]", "expected [13, 17]"});
  // The config says 14 inputs.
  expect_error(write("inputs.h5", patched("\"batch_input_shape\": [null, 13]", "\"batch_input_shape\": [null, 14]")),
               {"layer 'dense_5'", "[13, 16]", "expected [14, 16]"});
}

TEST_F(KerasH5Files, NonFiniteWeights) {
  const std::string bias = bias_bytes(1);  // dense_6, 8 floats
  std::string nan_bias = bias;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(nan_bias.data() + 3 * sizeof(float), &nan, sizeof nan);
  expect_error(write("nan_bias.h5", patched(bias, nan_bias)),
               {"layer 'dense_6'", "model_weights/dense_6/dense_6/bias:0", "NaN or infinity at [3]"});

  const std::string out_bias = bias_bytes(2);  // dense_7, 1 float
  std::string inf_bias = out_bias;
  const float inf = std::numeric_limits<float>::infinity();
  std::memcpy(inf_bias.data(), &inf, sizeof inf);
  expect_error(write("inf_bias.h5", patched(out_bias, inf_bias)), {"layer 'dense_7'", "NaN or infinity"});
}

TEST_F(KerasH5Files, UnsupportedLayerAndActivation) {
  std::string conv = ac1_;
  const auto first = conv.find("\"class_name\": \"Dense\"");
  conv.replace(conv.find("\"class_name\": \"Dense\"", first + 1), 21, "\"class_name\":\"Conv2D\"");
  expect_error<UnsupportedError>(write("conv.h5", conv),
                                 {"layer 'dense_6'", "layer class 'Conv2D' is not supported", "supported: Dense"});
  std::string swish = ac1_;
  swish.replace(swish.find("\"activation\": \"relu\""), 20, "\"activation\":\"swish\"");
  expect_error<UnsupportedError>(write("swish.h5", swish), {"layer 'dense_5'", "activation \"swish\""});
}

TEST_F(KerasH5Files, MissingWeights) {
  expect_error(write("dataset.h5", patched("dense_6/kernel:0", "dense_6/kernel:9")),
               {"layer 'dense_6'", "dataset model_weights/dense_6/dense_6/kernel:9 missing"});
  expect_error(write("group.h5", patched("\"name\": \"dense_6\"", "\"name\": \"dense_9\"")),
               {"layer 'dense_9'", "group model_weights/dense_9 missing"});
  // use_bias false, yet weight_names lists a kernel and a bias.
  expect_error(write("bias_listed.h5", patched("\"use_bias\": true", "\"use_bias\":false", 3)),
               {"weight_names", "lists 2 weights, expected 1"});
}

// AC1's weights under a Functional config that exercises every supported layer class, with its
// layers listed out of order (the chain is followed from the output back to the input).
TEST_F(KerasH5Files, FunctionalChainOfAllLayerClasses) {
  // Names on the layer entry (as Keras writes them) or only in "config": the loader takes either.
  const std::string config = R"({"class_name": "Model", "config": {"layers": [
    {"class_name": "Dropout", "name": "drop", "config": {"rate": 0.5}, "inbound_nodes": [[["relu", 0, 0, {}]]]},
    {"class_name": "InputLayer", "name": "in", "config": {"batch_input_shape": [null, 13]}, "inbound_nodes": []},
    {"class_name": "Dense", "config": {"name": "dense_5", "units": 16, "activation": "linear"},
     "inbound_nodes": [[["in", 0, 0, {}]]]},
    {"class_name": "ReLU", "name": "relu", "config": {"max_value": null, "negative_slope": 0.0},
     "inbound_nodes": [[["dense_5", 0, 0, {}]]]},
    {"class_name": "Dense", "config": {"name": "dense_6", "units": 8, "activation": "tanh"},
     "inbound_nodes": [[["drop", 0, 0, {}]]]},
    {"class_name": "LeakyReLU", "name": "leaky", "config": {"alpha": 0.25}, "inbound_nodes": [[["dense_6", 0, 0, {}]]]},
    {"class_name": "Flatten", "name": "flat", "config": {}, "inbound_nodes": [[["leaky", 0, 0, {}]]]},
    {"class_name": "Dense", "config": {"name": "dense_7", "units": 1}, "inbound_nodes": [[["flat", 0, 0, {}]]]},
    {"class_name": "Activation", "name": "act", "config": {"activation": "sigmoid"},
     "inbound_nodes": [[["dense_7", 0, 0, {}]]]}],
    "input_layers": [["in", 0, 0]], "output_layers": [["act", 0, 0]]}})";
  const std::string path = write("functional.h5", with_config(config));
  const Model m = load_keras_h5(path);
  std::vector<OpKind> ops;
  for (const Node& n : m.nodes) ops.push_back(n.op);
  EXPECT_EQ(ops, (std::vector<OpKind>{OpKind::Input, OpKind::Dense, OpKind::Relu, OpKind::Dense, OpKind::Tanh,
                                      OpKind::LeakyRelu, OpKind::Dense, OpKind::Sigmoid}));
  EXPECT_EQ(m.nodes[5].alpha, 0.25);
  EXPECT_EQ(m.rule.kind, DecisionRule::Kind::Threshold);
  EXPECT_EQ(m.rule.node, 6);

  const Model js = load_mlp_json(sibling_json(kAC1));
  const auto d = dense_nodes(js);
  const Eigen::MatrixXd x = test::feature_rows(kFairify + "/data/adult.csv", 200);
  Eigen::MatrixXd h1 = ((d[0]->weights * x).colwise() + d[0]->values).cwiseMax(0.0);
  Eigen::MatrixXd h2 = ((d[1]->weights * h1).colwise() + d[1]->values).array().tanh().matrix();
  h2 = h2.unaryExpr([](double v) { return v > 0 ? v : 0.25 * v; });
  const Eigen::MatrixXd z = (d[2]->weights * h2).colwise() + d[2]->values;
  const Evaluation r = evaluate(m, x);
  EXPECT_LE((r.decision - z).cwiseAbs().maxCoeff(), 1e-12);
}

// Sequential with an InputLayer (Keras 3 style batch_shape), use_bias false and no weight_names
// attributes: the weights are found at <layer>/<layer>/kernel:0 and the stored bias is ignored.
TEST_F(KerasH5Files, SequentialWithoutBiasOrWeightNames) {
  const std::string config = R"({"class_name": "Sequential", "config": {"name": "s", "layers": [
    {"class_name": "InputLayer", "config": {"name": "in", "batch_shape": [null, 13]}},
    {"class_name": "Dense", "config": {"name": "dense_5", "units": 16, "activation": "relu"}},
    {"class_name": "Dense", "config": {"name": "dense_6", "units": 8, "activation": "relu", "use_bias": false}},
    {"class_name": "Dense", "config": {"name": "dense_7", "units": 1, "activation": "softmax"}}]}})";
  std::string bytes = with_config(config);
  for (auto pos = bytes.find("weight_names"); pos != std::string::npos; pos = bytes.find("weight_names", pos)) {
    bytes[pos + 11] = 'Z';
  }
  const Model m = load_keras_h5(write("seq.h5", bytes));
  const Model js = load_mlp_json(sibling_json(kAC1));
  const auto a = dense_nodes(m);
  const auto b = dense_nodes(js);
  ASSERT_EQ(a.size(), 3U);
  EXPECT_TRUE(same_bits(a[0]->weights, b[0]->weights));
  EXPECT_TRUE(same_bits(a[1]->weights, b[1]->weights));
  EXPECT_TRUE(a[1]->values.isZero());
  EXPECT_EQ(m.nodes.back().op, OpKind::Softmax);
  EXPECT_EQ(m.nodes.back().name, "dense_7/softmax");
}

TEST_F(KerasH5Files, FunctionalThatIsNotAChain) {
  const std::string config = R"({"class_name": "Functional", "config": {"name": "m", "layers": [
    {"class_name": "InputLayer", "name": "in", "config": {"name": "in", "batch_input_shape": [null, 13]},
     "inbound_nodes": []},
    {"class_name": "Dense", "name": "dense_5", "config": {"name": "dense_5", "units": 16},
     "inbound_nodes": [[["in", 0, 0, {}]]]},
    {"class_name": "Dense", "name": "side", "config": {"name": "side", "units": 16},
     "inbound_nodes": [[["in", 0, 0, {}]]]},
    {"class_name": "Add", "name": "add", "config": {"name": "add"},
     "inbound_nodes": [[["dense_5", 0, 0, {}], ["side", 0, 0, {}]]]}],
    "input_layers": [["in", 0, 0]], "output_layers": [["add", 0, 0]]}})";
  expect_error<UnsupportedError>(write("branch.h5", with_config(config)), {"layer 'add'", "has 2 inputs"});
}

#ifdef WITNESS_TEST_HAS_H5CPP
// Files written with the HDF5 C++ API: model_config as a fixed-length string (as some Keras and
// h5py versions store it), float64 weights.
TEST_F(KerasH5Files, FixedLengthConfigWrittenWithH5Cpp) {
  const std::string path = (dir_ / "fixed.h5").string();
  {
    H5::H5File f(path, H5F_ACC_TRUNC);
    const std::string config = R"({"class_name": "Sequential", "config": {"layers": [
      {"class_name": "Dense", "config": {"name": "d", "units": 2, "activation": "linear",
                                         "batch_input_shape": [null, 3]}}]}})";
    H5::StrType fixed(H5::PredType::C_S1, config.size());
    fixed.setStrpad(H5T_STR_NULLPAD);
    f.createAttribute("model_config", fixed, H5::DataSpace(H5S_SCALAR)).write(fixed, config.data());
    H5::Group g = f.createGroup("model_weights").createGroup("d").createGroup("d");
    const hsize_t kdims[2] = {3, 2};
    const double kernel[6] = {1, 2, 3, 4, 5, 6};  // [in][out]
    g.createDataSet("kernel:0", H5::PredType::IEEE_F64LE, H5::DataSpace(2, kdims))
        .write(kernel, H5::PredType::NATIVE_DOUBLE);
    const hsize_t bdims[1] = {2};
    const double bias[2] = {0.5, -0.5};
    g.createDataSet("bias:0", H5::PredType::IEEE_F64LE, H5::DataSpace(1, bdims))
        .write(bias, H5::PredType::NATIVE_DOUBLE);
  }
  const Model m = load_keras_h5(path);
  ASSERT_EQ(m.nodes.size(), 2U);
  Eigen::MatrixXd w(2, 3);
  w << 1, 3, 5, 2, 4, 6;
  EXPECT_EQ(m.nodes[1].weights, w);
  EXPECT_EQ(m.nodes[1].values, Eigen::Vector2d(0.5, -0.5));
  EXPECT_EQ(m.rule.kind, DecisionRule::Kind::ArgMax);
}

// A model file that points elsewhere for its weights is refused, naming the dataset or link, and
// the other file is never read: external raw storage, an external link, a soft link.
TEST_F(KerasH5Files, WeightsInAnotherFileAreRefused) {
  const std::string secret = (dir_ / "secret.bin").string();
  {
    const double values[6] = {1, 2, 3, 4, 5, 6};
    std::ofstream(secret, std::ios::binary).write(reinterpret_cast<const char*>(values), sizeof values);
  }
  const std::string other = (dir_ / "other.h5").string();
  {
    H5::H5File f(other, H5F_ACC_TRUNC);
    const hsize_t kdims[2] = {3, 2};
    const double kernel[6] = {1, 2, 3, 4, 5, 6};
    f.createDataSet("k", H5::PredType::IEEE_F64LE, H5::DataSpace(2, kdims)).write(kernel, H5::PredType::NATIVE_DOUBLE);
  }
  // One Dense layer d (3 -> 2) whose kernel:0 is made by `kernel`.
  auto model = [&](const std::string& name, const std::function<void(H5::Group&)>& kernel) {
    const std::string path = (dir_ / name).string();
    H5::H5File f(path, H5F_ACC_TRUNC);
    const std::string config = R"({"class_name": "Sequential", "config": {"layers": [
      {"class_name": "Dense", "config": {"name": "d", "units": 2, "activation": "linear",
                                         "batch_input_shape": [null, 3]}}]}})";
    H5::StrType fixed(H5::PredType::C_S1, config.size());
    f.createAttribute("model_config", fixed, H5::DataSpace(H5S_SCALAR)).write(fixed, config.data());
    H5::Group g = f.createGroup("model_weights").createGroup("d").createGroup("d");
    kernel(g);
    const hsize_t bdims[1] = {2};
    const double bias[2] = {0.5, -0.5};
    g.createDataSet("bias:0", H5::PredType::IEEE_F64LE, H5::DataSpace(1, bdims))
        .write(bias, H5::PredType::NATIVE_DOUBLE);
    return path;
  };
  const hsize_t kdims[2] = {3, 2};
  const std::string external = model("external_storage.h5", [&](H5::Group& g) {
    H5::DSetCreatPropList dcpl;
    dcpl.setExternal(secret.c_str(), 0, 6 * sizeof(double));
    g.createDataSet("kernel:0", H5::PredType::IEEE_F64LE, H5::DataSpace(2, kdims), dcpl);
  });
  expect_error(external,
               {"dataset model_weights/d/d/kernel:0 keeps its values in another file (HDF5 external storage)"});
  const std::string linked = model("external_link.h5", [&](H5::Group& g) {
    H5Lcreate_external(other.c_str(), "/k", g.getId(), "kernel:0", H5P_DEFAULT, H5P_DEFAULT);
  });
  expect_error(linked, {"kernel:0 is an external (another file's) link"});
  const std::string soft = model("soft_link.h5", [&](H5::Group& g) {
    H5Lcreate_soft("/model_weights/d/d/bias:0", g.getId(), "kernel:0", H5P_DEFAULT, H5P_DEFAULT);
  });
  expect_error(soft, {"kernel:0 is a soft link"});
}
#else
TEST_F(KerasH5Files, FixedLengthConfigWrittenWithH5Cpp) {
  GTEST_SKIP() << "H5Cpp.h is not on the test include path (add the HDF5 include directories to test_model)";
}
#endif

}  // namespace
}  // namespace witness
