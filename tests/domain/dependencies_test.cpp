#include "domain/dependencies.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "domain/dataset.h"
#include "domain/infer.h"
#include "domain/schema.h"

namespace witness {
namespace {

// age_cat follows age (a bucket), education-num and education follow each other (one map, towards
// the number), id determines everything but is an identifier, and noise determines nothing.
std::string people_csv() {
  const char* const education[] = {"HS-grad", "Some-college", "Bachelors", "1st-4th"};
  const int years[] = {9, 10, 13, 2};
  std::string csv = "id,age,age_cat,education,education-num,noise,label\n";
  for (int i = 0; i < 600; ++i) {
    const int age = 18 + (i * 7 + i / 13) % 60;
    const char* cat = age < 25 ? "Less than 25" : age < 46 ? "25 - 45" : "Greater than 45";
    const int e = (i * 5 + i / 11) % 4;
    csv += std::to_string(i) + "," + std::to_string(age) + ",\"" + cat + "\"," + education[e] + "," +
           std::to_string(years[e]) + "," + std::to_string((i * 13) % 7) + "," + std::to_string(i % 2) + "\n";
  }
  return csv;
}

TEST(Dependencies, FindsBucketsAndOneToOneMapsButNotIdentifiers) {
  const std::string toml = infer_schema_toml_text(people_csv(), "people.csv", std::nullopt);
  EXPECT_NE(toml.find("#   'age_cat = bucket(age, [25, 46], [\"Less than 25\", \"25 - 45\", \"Greater than 45\"])',"),
            std::string::npos)
      << toml;
  EXPECT_NE(toml.find("#   'education-num = map(education, {\"1st-4th\": 2, \"Bachelors\": 13, \"HS-grad\": 9, "
                      "\"Some-college\": 10})',  # one-to-one"),
            std::string::npos)
      << toml;
  EXPECT_EQ(toml.find("education = map"), std::string::npos) << toml;  // the pair once
  EXPECT_EQ(toml.find("map(id"), std::string::npos) << toml;
  EXPECT_EQ(toml.find("bucket(id"), std::string::npos) << toml;
  EXPECT_EQ(toml.find("noise ="), std::string::npos) << toml;
}

// Uncommented, the proposals load, and every data row satisfies those without a count of rows that
// break them (orders such as `noise <= id` may break on up to 1% of the rows, and say how many).
TEST(Dependencies, ProposalsLoadAndHoldOnTheData) {
  std::string toml = infer_schema_toml_text(people_csv(), "people.csv", std::nullopt);
  std::string kept;
  for (std::size_t at = 0; at < toml.size();) {
    std::size_t end = toml.find('\n', at);
    std::string line = toml.substr(at, end - at);
    at = end + 1;
    if (line.find("# broken by") != std::string::npos) continue;
    if (line.rfind("# [constraints]", 0) == 0 || line.rfind("# rules", 0) == 0 || line.rfind("#   '", 0) == 0 ||
        line == "# ]")
      line = line.substr(2);
    kept += line + "\n";
  }
  const Schema s = parse_schema(kept, "people.toml");
  ASSERT_EQ(s.constraints().derived().size(), 2U) << kept;
  const Dataset d = parse_csv(people_csv(), s, "people.csv");
  for (Eigen::Index j = 0; j < d.raw.cols(); ++j)
    EXPECT_TRUE(s.constraints().satisfied(d.raw.col(j))) << s.constraints().first_violation(d.raw.col(j));
}

TEST(Dependencies, NoRuleWhenARowDisagrees) {
  std::vector<std::string_view> a, b;
  for (int i = 0; i < 15; ++i) {
    a.push_back(i < 5 ? "1" : i < 10 ? "2" : "3");
    b.push_back(i < 5 ? "x" : i < 10 ? "y" : "z");
  }
  b[14] = "w";  // 3 -> z or w: a does not determine b (nor b a: w is seen once)
  const std::vector<DataColumn> cols = {{"a", true, &a}, {"b", false, &b}};
  EXPECT_TRUE(dependency_rules(cols).empty());
  b[14] = "z";
  const std::vector<ProposedRule> rules = dependency_rules(cols);
  ASSERT_EQ(rules.size(), 1U);
  EXPECT_EQ(rules.front().text, "a = map(b, {\"x\": 1, \"y\": 2, \"z\": 3})");  // towards the number
  EXPECT_TRUE(rules.front().one_to_one);
}

}  // namespace
}  // namespace witness

namespace witness {
namespace {

// `a <= b` between numeric columns: proposed when at most 1% of the rows break it (with the count),
// not when more do, not when the ranges already imply it, not for columns equal on every row.
TEST(Dependencies, OrdersThatHoldOnNearlyEveryRow) {
  std::vector<std::string> x_text, y_text, z_text, w_text;
  for (int r = 0; r < 1000; ++r) {
    const double x = (r % 97) / 100.0;
    x_text.push_back(fmt::format("{}", x));
    y_text.push_back(fmt::format("{}", r < 5 ? x - 0.5 : x + (r % 13) / 100.0));  // 5 rows break x <= y
    z_text.push_back(fmt::format("{}", 2 + r % 3));                               // always above x: implied
    w_text.push_back(fmt::format("{}", r % 2 == 0 ? x - 0.01 : x + 0.01));        // half the rows each way
  }
  auto views = [](const std::vector<std::string>& v) { return std::vector<std::string_view>(v.begin(), v.end()); };
  const auto xv = views(x_text), yv = views(y_text), zv = views(z_text), wv = views(w_text);
  const std::vector<DataColumn> cols = {{"x", true, &xv}, {"y", true, &yv}, {"z", true, &zv}, {"w", true, &wv}};
  const std::vector<ProposedRule> rules = order_rules(cols);
  ASSERT_EQ(rules.size(), 1U);
  EXPECT_EQ(rules[0].text, "x <= y");
  EXPECT_EQ(rules[0].broken, 5U);
  EXPECT_EQ(rules[0].rows, 1000U);
}

}  // namespace
}  // namespace witness
