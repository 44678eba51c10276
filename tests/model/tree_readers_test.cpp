// XGBoost JSON/UBJSON and LightGBM text readers: fixtures from tools/make_tree_fixtures.py (XGBoost
// 1.7's own margins and labels; for LightGBM, an independent Python evaluator of its prediction
// semantics) on every data row, the float32 split rule at its boundaries, and malformed files.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/error.h"
#include "model/evaluator.h"
#include "model/loaders.h"
#include "model/tree_build.h"

namespace witness::tree_readers_test {

std::string fixture(const std::string& name) {
  return std::string(WITNESS_SOURCE_DIR) + "/tests/fixtures/trees/" + name;
}

struct Rows {
  Eigen::MatrixXd x;        // [features][rows]
  Eigen::MatrixXd margins;  // [classes][rows]
  std::vector<int> labels;
};

// <name>.csv: the features, m0.. and label.
Rows rows(const std::string& name, int n_features) {
  std::ifstream in(fixture(name + ".csv"));
  std::string line;
  std::getline(in, line);
  const auto columns = std::count(line.begin(), line.end(), ',') + 1;
  const auto n_margins = static_cast<int>(columns) - n_features - 1;
  std::vector<std::vector<double>> table;
  while (std::getline(in, line)) {
    std::vector<double> row;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) row.push_back(std::strtod(cell.c_str(), nullptr));
    table.push_back(std::move(row));
  }
  Rows r;
  const auto n = static_cast<Eigen::Index>(table.size());
  r.x.resize(n_features, n);
  r.margins.resize(n_margins, n);
  for (Eigen::Index c = 0; c < n; ++c) {
    const auto& row = table[static_cast<std::size_t>(c)];
    for (int f = 0; f < n_features; ++f) r.x(f, c) = row[static_cast<std::size_t>(f)];
    for (int k = 0; k < n_margins; ++k) r.margins(k, c) = row[static_cast<std::size_t>(n_features + k)];
    r.labels.push_back(static_cast<int>(row.back()));
  }
  return r;
}

// Labels must all agree; the rule node's values (the margins, divided by `divide`) must agree to
// `tol`. Returns the number of rows whose margins differ at all (for the float32 check).
int check(const std::string& model_file, const std::string& data, const std::string& format, double tol,
          double divide = 1.0) {
  const Model m = load_model(fixture(model_file));
  EXPECT_EQ(m.format, format);
  const Rows r = rows(data, m.input_width());
  Evaluator<double> ev(m);
  const Evaluation e = ev.run(r.x);
  EXPECT_EQ(e.decision.rows(), r.margins.rows());
  int wrong = 0;
  int inexact = 0;
  double worst = 0.0;
  for (Eigen::Index c = 0; c < r.x.cols(); ++c) {
    wrong += e.labels[static_cast<std::size_t>(c)] != r.labels[static_cast<std::size_t>(c)] ? 1 : 0;
    for (Eigen::Index k = 0; k < r.margins.rows(); ++k) {
      const double d = std::abs(e.decision(k, c) / divide - r.margins(k, c));
      worst = std::max(worst, d);
      inexact += d != 0.0 ? 1 : 0;
    }
  }
  EXPECT_EQ(wrong, 0) << model_file << ": labels that differ from the library's, of " << r.x.cols();
  EXPECT_LE(worst, tol) << model_file;
  EXPECT_GT(r.x.cols(), 100);
  return inexact;
}

TEST(TreeXgboost, BinaryAgreesWithXgboostOnEveryRow) {
  // XGBoost sums margins in float32, witness in double: margins differ by float rounding only,
  // and no label differs (the fixture has no margin within rounding of 0).
  check("xgb_binary.json", "xgb_binary", "xgboost-json", 1e-5);
  check("xgb_binary.ubj", "xgb_binary", "xgboost-json", 1e-5);
}

TEST(TreeXgboost, Float32EvaluationReproducesXgboostMarginsExactly) {
  // The base margin is the first tree and the trees keep their order, so summing in float32 as
  // XGBoost does gives its margins bit for bit.
  for (const char* name : {"xgb_binary", "xgb_multi", "xgb_cat"}) {
    const Model m = load_model(fixture(std::string(name) + ".json"));
    const Rows r = rows(name, m.input_width());
    Evaluator<float> ev(m);
    const Evaluation e = ev.run(r.x);
    int differ = 0;
    for (Eigen::Index c = 0; c < r.x.cols(); ++c) {
      for (Eigen::Index k = 0; k < r.margins.rows(); ++k) differ += e.decision(k, c) != r.margins(k, c) ? 1 : 0;
    }
    EXPECT_EQ(differ, 0) << name;
  }
}

TEST(TreeXgboost, MultiClassAndCategoricalAgreeWithXgboost) {
  check("xgb_multi.json", "xgb_multi", "xgboost-json", 1e-5);
  // Categories in the set go right; codes such as 2.7, -0.2, 1e9 are truncated float32s.
  check("xgb_cat.json", "xgb_cat", "xgboost-json", 1e-5);
}

TEST(TreeLightgbm, AgreesWithLightgbmSemanticsOnEveryRow) {
  // LightGBM sums in double, in tree order, as witness does: margins agree exactly.
  EXPECT_EQ(check("lgb_binary.txt", "lgb_binary", "lightgbm-text", 0.0), 0);
  EXPECT_EQ(check("lgb_multi.txt", "lgb_multi", "lightgbm-text", 0.0), 0);
  EXPECT_EQ(check("lgb_ova.txt", "lgb_ova", "lightgbm-text", 0.0), 0);
  EXPECT_EQ(check("lgb_cat.txt", "lgb_cat", "lightgbm-text", 0.0), 0);
  // average_output: the rule reads the sum (same sign), LightGBM reports sum / iterations.
  const Model avg = load_model(fixture("lgb_average.txt"));
  const auto iterations = static_cast<double>(avg.nodes[static_cast<std::size_t>(avg.rule.node)].trees->trees.size());
  check("lgb_average.txt", "lgb_average", "lightgbm-text", 1e-12, iterations);
}

TEST(TreeFloat32, CutMatchesRoundingToFloat32AtEveryBoundary) {
  const float inf = std::numeric_limits<float>::infinity();
  const float dmin = std::numeric_limits<float>::denorm_min();
  const float fmax = std::numeric_limits<float>::max();
  for (const float t : {1.5F, 0.1F, 1.0F, -1.0F, 0.0F, -0.0F, 3.0F, 16777215.0F, 1e-38F, dmin, -dmin, fmax, -fmax, 0.3F,
                        -2.75F, inf, -inf}) {
    const tree_detail::Cut cut = tree_detail::below_float32(t);
    std::vector<double> xs;
    for (const float f : {std::nextafter(t, -inf), t, std::nextafter(t, inf)}) {
      if (std::isinf(f)) continue;
      xs.push_back(f);
      for (const float g : {std::nextafter(f, -inf), std::nextafter(f, inf)}) {
        if (std::isinf(g)) continue;
        const double m = (static_cast<double>(f) + static_cast<double>(g)) / 2.0;
        for (const double x : {m, std::nextafter(m, -INFINITY), std::nextafter(m, INFINITY)}) xs.push_back(x);
      }
    }
    for (const double x : {0x1.ffffffp127, -0x1.ffffffp127, std::nextafter(0x1.ffffffp127, 0.0), 1e300, -1e300}) {
      xs.push_back(x);
    }
    for (const double x : xs) {
      const bool want = static_cast<float>(x) < t;
      const bool got = cut.mode == TreeEnsemble::Mode::Lt ? x < cut.threshold : x <= cut.threshold;
      EXPECT_EQ(got, want) << "t=" << t << " x=" << x;
    }
  }
}

TEST(TreeErrors, MalformedFilesAreInputErrorsNamingTheFile) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"xgb_truncated.json", "not valid JSON"},
      {"xgb_deep.json", "nested deeper"},
      {"xgb_child_cycle.json", "reached twice"},
      {"xgb_child_range.json", "has child 1000000"},
      {"xgb_nan_split.json", "NaN"},
      {"xgb_feature_range.json", "split index"},
      {"xgb_sizes.json", "right_children"},
      {"xgb_objective.json", "rank:pairwise"},
      {"xgb_tree_info.json", "tree_info[0]"},
      {"lgb_truncated.txt", "Tree="},
      {"lgb_huge_leaves.txt", "num_leaves=99999999999"},
      {"lgb_nan_threshold.txt", "threshold is NaN"},
      {"lgb_child_cycle.txt", "reached twice"},
      {"lgb_child_range.txt", "child 77"},
      {"lgb_no_trees.txt", "no trees"},
      {"lgb_bad_decision_type.txt", "decision_type"},
      {"lgb_bitset_range.txt", "cat_boundaries"},
  };
  for (const auto& [file, what] : cases) {
    const std::string path = fixture("bad/" + file);
    try {
      (void)load_model(path);
      ADD_FAILURE() << file << " loaded";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << file << ": " << e.what();
    }
  }
}

TEST(TreeErrors, HostileBytesAreRefusedQuickly) {
  // A UBJSON array of 2^40 nulls, declared in a few bytes.
  std::string ubj = "{i\x07learner[$Z#L";
  ubj += std::string("\x00\x00\x01\x00\x00\x00\x00\x00", 8);
  ubj += "}";
  EXPECT_THROW((void)parse_xgboost_json(ubj, "m.ubj"), InputError);
  EXPECT_THROW((void)parse_xgboost_json("", "m.json"), InputError);
  EXPECT_THROW((void)parse_xgboost_json("{\"learner\": 1}", "m.json"), InputError);
  // A bitset of two words: categories 0..63 at most, named by threshold 0 only.
  const std::string head =
      "tree\nversion=v4\nnum_class=1\nnum_tree_per_iteration=1\nlabel_index=0\nmax_feature_idx=0\n"
      "objective=binary sigmoid:1\nfeature_names=a\n\n";
  EXPECT_THROW((void)parse_lightgbm_text(head + "Tree=0\nnum_leaves=2\nnum_cat=1\nsplit_feature=0\nthreshold=1\n"
                                                "decision_type=1\nleft_child=-1\nright_child=-2\nleaf_value=1 "
                                                "-1\ncat_boundaries=0 2\ncat_threshold=1 2\n\nend of trees\n",
                                         "m.txt"),
               InputError);
  EXPECT_THROW((void)parse_lightgbm_text(head + "Tree=0\nnum_leaves=2\nnum_cat=0\nsplit_feature=0\nthreshold=1\n"
                                                "decision_type=2\nleft_child=0\nright_child=-2\nleaf_value=1 -1\n",
                                         "m.txt"),
               InputError);
  // A regression objective is well-formed but has no labels.
  EXPECT_THROW((void)parse_lightgbm_text("tree\nnum_class=1\nmax_feature_idx=0\nobjective=regression\n\n", "m.txt"),
               UnsupportedError);
}

TEST(TreeLightgbm, ZeroBandAndTruncatedCategoriesByHand) {
  // One categorical split (categories 0 and 2 go left) and one numeric split on 0 with missing
  // type Zero, default right: 0, tiny values and NaN go right.
  const std::string head =
      "tree\nversion=v4\nnum_class=1\nnum_tree_per_iteration=1\nlabel_index=0\nmax_feature_idx=1\n"
      "objective=binary sigmoid:1\nfeature_names=c x\n\n";
  const Model m = parse_lightgbm_text(head +
                                          "Tree=0\nnum_leaves=3\nnum_cat=1\nsplit_feature=0 1\nthreshold=0 0\n"
                                          "decision_type=1 4\nleft_child=-1 -2\nright_child=1 -3\n"
                                          "leaf_value=1 2 3\ncat_boundaries=0 1\ncat_threshold=5\n\nend of trees\n",
                                      "m.txt");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::pair<std::array<double, 2>, double>> cases = {
      {{0.0, 0.0}, 1.0}, {{-0.9, 0.0}, 1.0},   {{0.99, 0.0}, 1.0},  {{2.5, 0.0}, 1.0}, {{1.0, -1.0}, 2.0},
      {{1.0, 0.0}, 3.0}, {{1.0, 1e-36}, 3.0},  {{1.0, nan}, 3.0},   {{1.0, 1.0}, 3.0}, {{-1.0, -1.0}, 2.0},
      {{nan, 5.0}, 3.0}, {{3.0, -2e-35}, 2.0}, {{1e10, -5.0}, 2.0}, {{2.0, 0.0}, 1.0}, {{64.0, 0.0}, 3.0},
  };
  Evaluator<double> ev(m);
  for (const auto& [x, want] : cases) {
    Eigen::MatrixXd in(2, 1);
    in << x[0], x[1];
    const Evaluation e = ev.run(in);
    EXPECT_EQ(e.decision(0, 0), want) << x[0] << ", " << x[1];
  }
}

}  // namespace witness::tree_readers_test
