#include "domain/constraints.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "core/error.h"
#include "domain/schema.h"

namespace witness {
namespace {

const char* const kFeatures = R"(
[[features]]
name = "age"
kind = "integer"
min = 18
max = 70
[[features]]
name = "age_cat"
kind = "categorical"
categories = ["Less than 25", "25 - 45", "Greater than 45"]
[[features]]
name = "education"
kind = "categorical"
categories = ["HS-grad", "Some-college", "Bachelors"]
[[features]]
name = "education-num"
kind = "integer"
min = 1
max = 16
[[features]]
name = "relationship"
kind = "categorical"
categories = ["Husband", "Wife", "Own-child"]
[[features]]
name = "sex"
kind = "categorical"
categories = ["Female", "Male"]
[[features]]
name = "hours-per-week"
kind = "integer"
min = 1
max = 99
[[features]]
name = "income"
kind = "real"
min = 0
max = 100
)";

Schema with_constraints(const std::string& rules) {
  return parse_schema(std::string(kFeatures) + "\n[constraints]\nrules = [\n" + rules + "\n]\n", "people.toml");
}

Eigen::VectorXd person(const Schema& s, const std::vector<std::pair<std::string, std::string>>& values) {
  Eigen::VectorXd raw = Eigen::VectorXd::Zero(s.size());
  for (int f = 0; f < s.size(); ++f) raw[f] = s.feature(f).min;
  for (const auto& [name, text] : values) raw[s.feature_index(name)] = s.parse_value(s.feature_index(name), text);
  return raw;
}

const std::string kRules = R"(
  'age_cat = bucket(age, [25, 46], ["Less than 25", "25 - 45", "Greater than 45"])',
  'education-num = map(education, {HS-grad: 9, "Some-college": 10, Bachelors: 13})',
  'relationship in {Husband} -> sex == Male',
  'relationship == Wife -> sex == Female',
  'hours-per-week - 2 * age <= 0',
  '(relationship, sex) not in {(Own-child, Male)} or age < 30',
)";

TEST(Constraints, DerivedFeaturesFollowTheirSources) {
  const Schema s = with_constraints(kRules);
  const Constraints& c = s.constraints();
  ASSERT_EQ(c.derived().size(), 2U);
  ASSERT_EQ(c.rules().size(), 4U);
  Eigen::VectorXd raw = person(s, {{"age", "45"}, {"education", "Some-college"}, {"sex", "Male"}});
  EXPECT_FALSE(c.satisfied(raw));  // age_cat and education-num at their minimum codes
  c.derive(raw);
  EXPECT_EQ(s.display(s.feature_index("age_cat"), raw[s.feature_index("age_cat")]), "25 - 45");
  EXPECT_EQ(raw[s.feature_index("education-num")], 10);
  EXPECT_TRUE(c.satisfied(raw)) << c.first_violation(raw);
  raw[s.feature_index("age")] = 46;
  EXPECT_NE(c.first_violation(raw).find("bucket(age"), std::string::npos);
  c.derive(raw);
  EXPECT_EQ(s.display(s.feature_index("age_cat"), raw[s.feature_index("age_cat")]), "Greater than 45");
  raw[s.feature_index("age")] = 24;
  c.derive(raw);
  EXPECT_EQ(s.display(s.feature_index("age_cat"), raw[s.feature_index("age_cat")]), "Less than 25");
}

TEST(Constraints, RulesSayWhichOneIsBroken) {
  const Schema s = with_constraints(kRules);
  const Constraints& c = s.constraints();
  Eigen::VectorXd raw = person(s, {{"age", "40"}, {"relationship", "Husband"}, {"sex", "Female"}});
  c.derive(raw);
  EXPECT_EQ(c.first_violation(raw), "relationship in {Husband} -> sex == Male");
  raw[s.feature_index("sex")] = 1;
  EXPECT_TRUE(c.satisfied(raw));
  raw[s.feature_index("hours-per-week")] = 81;  // 81 > 2 * 40
  EXPECT_EQ(c.first_violation(raw), "hours-per-week - 2 * age <= 0");
  raw[s.feature_index("hours-per-week")] = 80;
  raw[s.feature_index("relationship")] = 2;  // Own-child, Male, 40: not allowed
  EXPECT_NE(c.first_violation(raw).find("not in"), std::string::npos);
  raw[s.feature_index("age")] = 29;
  raw[s.feature_index("hours-per-week")] = 58;
  c.derive(raw);
  EXPECT_TRUE(c.satisfied(raw)) << c.first_violation(raw);
}

// A number before `and`, `or` or `in` ends its comparison (it is no product with a feature).
TEST(Constraints, ANumberBeforeAKeywordEndsTheComparison) {
  const Schema s = with_constraints("'age >= 18 and hours-per-week <= 60', 'age <= -1 or age >= 20'");
  Eigen::VectorXd raw = person(s, {{"age", "19"}, {"hours-per-week", "40"}});
  s.constraints().derive(raw);
  EXPECT_EQ(s.constraints().first_violation(raw), "age <= -1 or age >= 20");
  raw[s.feature_index("age")] = 20;
  EXPECT_TRUE(s.constraints().satisfied(raw));
  raw[s.feature_index("hours-per-week")] = 61;
  EXPECT_EQ(s.constraints().first_violation(raw), "age >= 18 and hours-per-week <= 60");
}

TEST(Constraints, ASchemaWithoutConstraintsLetsEveryoneExist) {
  const Schema s = parse_schema(kFeatures, "plain.toml");
  EXPECT_TRUE(s.constraints().empty());
  EXPECT_TRUE(s.constraints().satisfied(person(s, {})));
}

// Over a box, Always means every point satisfies the constraints and Never that none does; a box
// of one point is always decided. Checked against every point of small random boxes.
TEST(Constraints, BoxTruthAgreesWithEveryPoint) {
  const Schema s = with_constraints(kRules);
  const Constraints& c = s.constraints();
  std::mt19937 rng(7);
  int decided = 0;
  for (int trial = 0; trial < 400; ++trial) {
    Eigen::VectorXd lo(s.size()), hi(s.size());
    for (int f = 0; f < s.size(); ++f) {
      const Feature& ft = s.feature(f);
      const int span = trial % 4 == 0 ? 0 : (f == 0 || f == 6 ? 6 : 1);
      std::uniform_int_distribution<int> pick(static_cast<int>(ft.min), static_cast<int>(ft.max) - span);
      lo[f] = ft.kind == FeatureKind::Real ? 50 : pick(rng);
      hi[f] = ft.kind == FeatureKind::Real ? 50 : lo[f] + span;
    }
    if (trial % 3 == 0) {  // derived values right at the lower corner, so some boxes hold valid points
      Eigen::VectorXd corner = lo;
      c.derive(corner);
      lo[1] = hi[1] = corner[1];
      lo[3] = hi[3] = corner[3];
    }
    const Truth t = c.over_box(lo, hi);
    int valid = 0, all = 0;
    Eigen::VectorXd x = lo;
    // Odometer over the integral features.
    for (;;) {
      ++all;
      valid += c.satisfied(x) ? 1 : 0;
      int f = 0;
      for (; f < s.size() && x[f] == hi[f]; ++f) x[f] = lo[f];
      if (f == s.size()) break;
      x[f] += 1;
    }
    if (t == Truth::Always) {
      EXPECT_EQ(valid, all) << trial;
    }
    if (t == Truth::Never) {
      EXPECT_EQ(valid, 0) << trial;
    }
    if (all == 1) {
      EXPECT_NE(t, Truth::Maybe) << trial;
    }
    decided += t != Truth::Maybe ? 1 : 0;
  }
  EXPECT_GT(decided, 100);
}

void expect_schema_error(const std::string& rules, const std::string& needle) {
  try {
    (void)with_constraints(rules);
    ADD_FAILURE() << "accepted: " << rules;
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(needle), std::string::npos) << what;
    EXPECT_NE(what.find("people.toml"), std::string::npos) << what;
    EXPECT_NE(what.find("line "), std::string::npos) << what;
  }
}

TEST(Constraints, BadRulesAreRefusedWithTheFileAndLine) {
  expect_schema_error("'agee <= 3'", "unknown feature 'agee'");
  expect_schema_error("'age-education-num <= 3'", "needs spaces");
  expect_schema_error("'sex + age <= 3'", "'sex' is categorical");
  expect_schema_error("'sex == Martian'", "Martian");
  expect_schema_error("'income in {1, 2}'", "real-valued");
  expect_schema_error("'age <= '", "expected a feature name");
  expect_schema_error("'age <= 3 3'", "unexpected '3'");
  expect_schema_error("'age_cat = bucket(age, [25], [\"Less than 25\"])'", "1 edges make 2 buckets");
  expect_schema_error("'age_cat = bucket(age, [46, 25], [\"Less than 25\", \"25 - 45\", \"Greater than 45\"])'",
                      "ascending");
  expect_schema_error("'age_cat = bucket(sex, [1], [\"Less than 25\", \"25 - 45\"])'", "use map()");
  expect_schema_error("'education-num = map(education, {HS-grad: 9, HS-grad: 10})'", "mapped twice");
  expect_schema_error("'education-num = map(education, {HS-grad: 99})'", "education-num");
  expect_schema_error("'education-num = map(education, {HS-grad: 9})', 'education-num = map(education, {HS-grad: 9})'",
                      "derived twice");
  expect_schema_error("'age = bucket(hours-per-week, [50], [20, 30])', 'hours-per-week = bucket(age, [50], [20, 30])'",
                      "cycle");
  expect_schema_error("3", "every rule is a string");
  expect_schema_error("'" + std::string(100, '(') + "age <= 3" + std::string(100, ')') + "'", "nested more than");
  expect_schema_error("'age <= 3 -> '", "expected a feature name");
  expect_schema_error("'age ~ 3'", "unexpected character '~'");
  expect_schema_error("'age <= 1e999'", "too large");
  expect_schema_error("'1e999 * age <= 3'", "too large");
  expect_schema_error("'age_cat = bucket(age, [1e999, 2e999], [\"Less than 25\", \"25 - 45\", \"Greater than 45\"])'",
                      "too large");
}

}  // namespace
}  // namespace witness
