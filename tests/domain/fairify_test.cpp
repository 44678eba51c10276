// The shipped Fairify schemas: they agree with data/domains.json (order, codes, bounds) and read
// every row of the benchmark CSVs.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "domain/dataset.h"
#include "domain/schema.h"
#include "test_util.h"

namespace witness {
namespace {

using test::has;
using test::input_error;
using test::repo_path;

struct Bench {
  const char* name;
  Eigen::Index rows;
  int width;
  const char* protected_feature;
};

class FairifySchema : public ::testing::TestWithParam<Bench> {};

nlohmann::json domains() {
  std::ifstream in(repo_path("benchmarks/fairify/data/domains.json"));
  return nlohmann::json::parse(in);
}

TEST_P(FairifySchema, MatchesDomainsJson) {
  const Bench& b = GetParam();
  const nlohmann::json dom = domains().at(b.name);
  Schema s = load_schema(repo_path(std::string("benchmarks/fairify/") + b.name + ".toml"));
  Schema box = s.with_box("fairify");
  EXPECT_EQ(s.name(), b.name);
  EXPECT_EQ(s.label(), dom.at("label").get<std::string>());
  EXPECT_EQ(s.protected_names(), std::vector<std::string>{b.protected_feature});
  ASSERT_EQ(s.size(), b.width);
  EXPECT_EQ(s.model_width(), b.width);  // nothing one-hot: one model input per feature
  for (const nlohmann::json& f : dom.at("features")) {
    const int i = f.at("index").get<int>();
    const Feature& mine = s.feature(i);
    SCOPED_TRACE(mine.name);
    EXPECT_EQ(mine.name, f.at("name").get<std::string>());
    EXPECT_EQ(mine.norm.form, Normalisation::Form::None);
    // Fairify's box exactly.
    EXPECT_EQ(box.feature(i).min, f.at("fairify_lo").get<double>());
    EXPECT_EQ(box.feature(i).max, f.at("fairify_hi").get<double>());
    // The main bounds hold the data.
    EXPECT_LE(mine.min, f.at("data_min").get<double>());
    EXPECT_GE(mine.max, f.at("data_max").get<double>());
    if (f.contains("codes")) {
      ASSERT_EQ(mine.kind, FeatureKind::Categorical);
      ASSERT_EQ(mine.categories.size(), f.at("codes").size());
      for (const auto& [label, code] : f.at("codes").items())
        EXPECT_EQ(mine.categories.at(code.get<std::size_t>()), label);
    } else if (mine.kind == FeatureKind::Categorical) {
      EXPECT_EQ(mine.categories.size(), 2U);  // the binary age and german sex, labelled here
    } else {
      EXPECT_EQ(mine.kind, FeatureKind::Integer);
    }
  }
}

TEST_P(FairifySchema, LoadsEveryCsvRow) {
  const Bench& b = GetParam();
  Schema s = load_schema(repo_path(std::string("benchmarks/fairify/") + b.name + ".toml"));
  const auto t0 = std::chrono::steady_clock::now();
  Dataset d = load_csv(repo_path(std::string("benchmarks/fairify/data/") + b.name + ".csv"), s);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  RecordProperty("load_seconds", std::to_string(seconds));
  EXPECT_LT(seconds, 1.0);
  ASSERT_EQ(d.rows(), b.rows);
  ASSERT_EQ(d.labels.size(), static_cast<std::size_t>(b.rows));
  for (Eigen::Index j = 0; j < d.rows(); ++j) ASSERT_TRUE(s.contains(d.raw.col(j))) << "row " << j + 1;
  for (int y : d.labels) ASSERT_TRUE(y == 0 || y == 1);
  // Nothing is scaled: the model inputs are the raw codes.
  EXPECT_EQ(d.model_inputs(s), d.raw);
}

INSTANTIATE_TEST_SUITE_P(Benchmarks, FairifySchema,
                         ::testing::Values(Bench{"adult", 45222, 13, "sex"}, Bench{"bank", 3090, 16, "age"},
                                           Bench{"german", 1000, 20, "age"}),
                         [](const ::testing::TestParamInfo<Bench>& p) { return std::string(p.param.name); });

TEST(FairifySchemas, GermanDataBreaksFairifyPropertyBound) {
  Schema s = load_schema(repo_path("benchmarks/fairify/german.toml")).with_box("fairify");
  const std::string path = repo_path("benchmarks/fairify/data/german.csv");
  const std::string e = input_error([&] { (void)load_csv(path, s); });
  EXPECT_TRUE(has(e, path + ": row "));
  EXPECT_TRUE(has(e,
                  "column 'property': expected a category of 'property' (A121, A122, A123) or a code in [0, 2] "
                  "(box 'fairify'), got '3'"));
}

TEST(FairifySchemas, BankBoxAddsUnlabelledCodes) {
  Schema s = load_schema(repo_path("benchmarks/fairify/bank.toml"));
  Schema box = s.with_box("fairify");
  const int month = s.feature_index("month");
  EXPECT_EQ(s.feature(month).max, 9);
  EXPECT_EQ(box.feature(month).max, 11);
  EXPECT_EQ(box.display(month, 11), "11");
  EXPECT_EQ(box.display(month, 6), "may");
  EXPECT_EQ(box.parse_value(month, "10"), 10);
  EXPECT_TRUE(has(input_error([&] { (void)s.parse_value(month, "10"); }), "feature 'month'"));
  EXPECT_EQ(box.feature(s.feature_index("day_of_week")).max, 6);
  // The bank data lies inside Fairify's box too.
  EXPECT_EQ(load_csv(repo_path("benchmarks/fairify/data/bank.csv"), box).rows(), 3090);
  EXPECT_EQ(s.display(0, 1), ">=25");
}

TEST(FairifySchemas, AdultRaceIsProtectable) {
  Schema s = load_schema(repo_path("benchmarks/fairify/adult.toml"));
  EXPECT_EQ(s.protected_indices({"race"}), std::vector<int>{7});
  EXPECT_EQ(s.protected_indices(), std::vector<int>{8});
  EXPECT_EQ(s.display(8, 0), "Female");
  EXPECT_EQ(s.display(12, 38), "United-States");
  // Fairify's integer box: 91 * 7 * 16 * 16 * 7 * 14 * 6 * 5 * 2 * 20 * 20 * 100 * 41 points.
  EXPECT_EQ(s.domain_size(), 91.0L * 7 * 16 * 16 * 7 * 14 * 6 * 5 * 2 * 20 * 20 * 100 * 41);
}

}  // namespace
}  // namespace witness

namespace witness {
namespace {

// The usage example at the top of domain/schema.h.
TEST(FairifySchemas, SchemaHeaderExample) {
  Schema s = load_schema(test::repo_path("benchmarks/fairify/german.toml"));
  Eigen::VectorXd raw(s.size());
  for (int i = 0; i < s.size(); ++i) raw[i] = s.feature(i).min;
  raw[s.feature_index("sex")] = s.parse_value(s.feature_index("sex"), "female");
  Eigen::VectorXd x = s.to_model(raw);
  EXPECT_EQ(x.size(), s.model_width());
  const std::string text = s.display_row(s.from_model(x));
  EXPECT_EQ(text.substr(0, 25), "status=200+, month=0, cre");
  EXPECT_TRUE(test::has(text, "age=<26,"));
  EXPECT_TRUE(test::has(text, "sex=female"));
}

}  // namespace
}  // namespace witness
