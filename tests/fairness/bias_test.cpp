#include "fairness/bias.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "domain/schema.h"

namespace witness {
namespace {

// The schema is a file so that its text is written once (tests/fixtures/schemas).
const char* const kSchema = WITNESS_SOURCE_DIR "/tests/fixtures/schemas/bias.toml";

// logit = w_age * age + w_sex * sex + w_race * race + b
Model linear(double w_age, double w_sex, double w_race, double b) {
  ModelBuilder mb("lin", {"age", "sex", "race"});
  Eigen::MatrixXd w(1, 3);
  w << w_age, w_sex, w_race;
  Eigen::VectorXd bias(1);
  bias << b;
  return mb.finish(mb.dense(mb.input(), w, bias), DecisionRule{});
}

TEST(Bias, ModelThatIgnoresTheAttributeHasNone) {
  const Schema s = load_schema(kSchema);
  BiasOptions o;
  o.samples = 5000;
  const BiasEstimate b = estimate_bias(linear(1, 0, 1, -5), s, {1}, o);
  EXPECT_EQ(b.discriminatory, 0);
  EXPECT_FALSE(b.example.has_value());
  EXPECT_NEAR(b.ci_low, 0.0, 1e-12);
  EXPECT_GT(b.ci_high, 0.0);
}

TEST(Bias, ModelDecidedBySexAloneAlwaysFlips) {
  const Schema s = load_schema(kSchema);
  BiasOptions o;
  o.samples = 5000;
  const BiasEstimate b = estimate_bias(linear(0, 1, 0, -0.5), s, {1}, o);
  EXPECT_EQ(b.discriminatory, 5000);
  ASSERT_TRUE(b.example.has_value());
  EXPECT_NE(b.example->first(1), b.example->second(1));
  EXPECT_EQ(b.example->first(0), b.example->second(0));  // only the protected part changes
}

// A model whose decision value is NaN labels everything 0: the estimate says 0%, so it must count
// and say that its labels mean nothing. Here h = 1e308 * age + 1e308 overflows to infinity for
// age >= 1, and the logit h - h is NaN there (0 at age 0).
TEST(Bias, CountsLabelsReadOffNanDecisions) {
  const Schema s = load_schema(kSchema);
  ModelBuilder mb("nan", {"age", "sex", "race"});
  Eigen::MatrixXd w1(2, 3);
  w1 << 1e308, 0, 0, 1e308, 0, 0;
  Eigen::VectorXd b1(2);
  b1 << 1e308, 1e308;
  Eigen::MatrixXd w2(1, 2);
  w2 << 1, -1;
  const Model nan_model =
      mb.finish(mb.dense(mb.dense(mb.input(), w1, b1), w2, Eigen::VectorXd::Zero(1)), DecisionRule{});
  BiasOptions o;
  o.samples = 5000;
  const BiasEstimate nan = estimate_bias(nan_model, s, {1}, o);
  EXPECT_EQ(nan.discriminatory, 0);
  EXPECT_GT(nan.nan_labels, 8000);  // both inputs of the samples with age >= 1 (9 in 10)
  EXPECT_LT(nan.nan_labels, 10000);
  EXPECT_EQ(estimate_bias(linear(0, 1, 0, -0.5), s, {1}, o).nan_labels, 0);
}

// A stop (time limit, cancel) ends the estimate between chunks, on the samples drawn so far.
TEST(Bias, StopsBetweenChunksOnTheSamplesDrawn) {
  const Schema s = load_schema(kSchema);
  BiasOptions o;
  o.samples = 100000;
  int asked = 0;
  o.stop = [&asked] { return ++asked > 3; };  // three chunks run
  const BiasEstimate b = estimate_bias(linear(0, 1, 0, -0.5), s, {1}, o);
  EXPECT_TRUE(b.stopped);
  EXPECT_EQ(b.samples, 3 * 4096);
  EXPECT_EQ(b.discriminatory, b.samples);
  o.stop = [] { return true; };
  const BiasEstimate none = estimate_bias(linear(0, 1, 0, -0.5), s, {1}, o);
  EXPECT_EQ(none.samples, 0);
  EXPECT_EQ(none.ci_low, 0.0);
  EXPECT_EQ(none.ci_high, 1.0);
  o.stop = nullptr;
  EXPECT_FALSE(estimate_bias(linear(0, 1, 0, -0.5), s, {1}, o).stopped);
}

// Exact rate by enumeration: label = (age - 2*race + 3*sex > 2); x' changes race uniformly to
// one of the 4 other values.
TEST(Bias, MatchesEnumerationWithinTheInterval) {
  const Schema s = load_schema(kSchema);
  const Model m = linear(1, 3, -2, -2);
  double exact = 0;
  int total = 0;
  for (int age = 0; age <= 9; ++age) {
    for (int sex = 0; sex <= 1; ++sex) {
      for (int race = 0; race < 5; ++race) {
        auto label = [&](int r) { return age - 2 * r + 3 * sex - 2 > 0; };
        int flips = 0;
        for (int r2 = 0; r2 < 5; ++r2) flips += (r2 != race && label(r2) != label(race)) ? 1 : 0;
        exact += flips / 4.0;
        ++total;
      }
    }
  }
  exact /= total;
  BiasOptions o;
  o.samples = 200000;
  const BiasEstimate b = estimate_bias(m, s, {2}, o);
  EXPECT_LE(b.ci_low, exact);
  EXPECT_GE(b.ci_high, exact);
  EXPECT_NEAR(b.rate, exact, 0.01);
}

TEST(Bias, ResultDoesNotDependOnThreads) {
  const Schema s = load_schema(kSchema);
  const Model m = linear(1, 3, -2, -2);
  BiasOptions o;
  o.samples = 50000;
  o.seed = 7;
  o.threads = 1;
  const BiasEstimate one = estimate_bias(m, s, {1, 2}, o);
  o.threads = 2;
  const BiasEstimate two = estimate_bias(m, s, {1, 2}, o);
  EXPECT_EQ(one.discriminatory, two.discriminatory);
  ASSERT_TRUE(one.example && two.example);
  EXPECT_EQ(one.example->first, two.example->first);
  o.seed = 8;
  EXPECT_NE(estimate_bias(m, s, {1, 2}, o).discriminatory, one.discriminatory);
}

TEST(Bias, DrawsFromDataRows) {
  const Schema s = load_schema(kSchema);
  Eigen::MatrixXd rows(3, 2);
  rows << 9, 9, 0, 1, 0, 0;  // age 9: label 1 whatever sex is
  BiasOptions o;
  o.samples = 1000;
  o.rows = &rows;
  EXPECT_EQ(estimate_bias(linear(1, 3, 0, -2), s, {1}, o).discriminatory, 0);
}

TEST(Bias, RejectsMismatchedSchemaAndBadCounts) {
  const Schema s = load_schema(kSchema);
  ModelBuilder mb("two", {"a", "b"});
  const Model two =
      mb.finish(mb.dense(mb.input(), Eigen::MatrixXd::Ones(1, 2), Eigen::VectorXd::Zero(1)), DecisionRule{});
  BiasOptions o;
  EXPECT_THROW(estimate_bias(two, s, {1}, o), InputError);
  o.samples = 0;
  EXPECT_THROW(estimate_bias(linear(1, 1, 1, 0), s, {1}, o), InputError);
  o.samples = 10;
  EXPECT_THROW(estimate_bias(linear(1, 1, 1, 0), s, {}, o), InputError);
}

TEST(WilsonInterval, KnownValues) {
  const auto [lo, hi] = wilson_interval(50, 100);
  EXPECT_NEAR(lo, 0.4038, 1e-4);
  EXPECT_NEAR(hi, 0.5962, 1e-4);
  const auto [lo0, hi0] = wilson_interval(0, 100);
  EXPECT_NEAR(lo0, 0.0, 1e-12);
  EXPECT_NEAR(hi0, 0.0370, 1e-4);
}

}  // namespace
}  // namespace witness
