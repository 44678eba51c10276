#include "domain/infer.h"

#include <gtest/gtest.h>

#include "domain/dataset.h"
#include "domain/schema.h"
#include "test_util.h"

namespace witness {
namespace {

using test::has;
using test::input_error;
using test::repo_path;
using test::write_temp;

TEST(Infer, KindsBoundsAndLabelRoundTrip) {
  const std::string csv = write_temp("infer.csv",
                                     "age,job,flag,score,emp.var.rate,\"odd \"\"name\"\"\",outcome\n"
                                     "30,nurse,1,0.5,-2,x,>50K\n"
                                     "41,clerk,0,-1,1,y,<=50K\n"
                                     "7,\"engineer, senior\",1,3,0,x,>50K\n");
  const std::string toml = infer_schema_toml(csv, std::nullopt);
  const std::string path = write_temp("infer.toml", toml);
  Schema s = load_schema(path);
  EXPECT_EQ(s.name(), "infer");
  EXPECT_EQ(s.label(), "outcome");
  EXPECT_EQ(s.label_classes(), (std::vector<std::string>{"<=50K", ">50K"}));
  ASSERT_EQ(s.size(), 6);
  EXPECT_EQ(s.feature(0).kind, FeatureKind::Integer);
  EXPECT_EQ(s.feature(0).min, 7);
  EXPECT_EQ(s.feature(0).max, 41);
  EXPECT_EQ(s.feature(1).kind, FeatureKind::Categorical);
  EXPECT_EQ(s.feature(1).categories, (std::vector<std::string>{"clerk", "engineer, senior", "nurse"}));
  EXPECT_EQ(s.feature(2).kind, FeatureKind::Integer);  // {0, 1} stays an integer (documented)
  EXPECT_EQ(s.feature(2).max, 1);
  EXPECT_EQ(s.feature(3).kind, FeatureKind::Real);
  EXPECT_EQ(s.feature(3).min, -1.0);
  EXPECT_EQ(s.feature(3).max, 3.0);
  EXPECT_EQ(s.feature(4).name, "emp.var.rate");
  EXPECT_EQ(s.feature(4).min, -2);
  EXPECT_EQ(s.feature(5).name, "odd \"name\"");
  // The CSV reads back with the inferred schema.
  Dataset d = load_csv(csv, s);
  ASSERT_EQ(d.rows(), 3);
  EXPECT_EQ(d.labels, (std::vector<int>{1, 0, 1}));
  EXPECT_EQ(s.display_row(d.raw.col(2)),
            "age=7, job=\"engineer, senior\", flag=1, score=3, emp.var.rate=0, odd \"name\"=x");
}

TEST(Infer, LongCategoryListsWrapAndReadBack) {
  std::string csv = "country,y\n";
  for (int i = 49; i >= 0; --i)
    csv += "country-number-" + std::to_string(i) + ",\"c\\" + std::to_string(i % 3) + "\"\n";
  const std::string path = write_temp("long.csv", csv);
  const std::string toml = infer_schema_toml(path, std::nullopt);
  EXPECT_TRUE(has(toml, "categories = [\n"));
  Schema s = parse_schema(toml, "long.toml");
  ASSERT_EQ(s.feature(0).categories.size(), 50U);
  EXPECT_EQ(s.feature(0).categories[0], "country-number-0");
  EXPECT_EQ(s.feature(0).categories[1], "country-number-1");
  EXPECT_EQ(s.feature(0).categories[2], "country-number-10");  // bytewise order, as LabelEncoder
  EXPECT_EQ(s.label_classes(), (std::vector<std::string>{"c\\0", "c\\1", "c\\2"}));
  EXPECT_EQ(load_csv(path, s).rows(), 50);
}

TEST(Infer, LabelChoices) {
  const std::string csv = write_temp("labels.csv", "a,b,c\n1,2,3\n4,5,6\n");
  Schema none = parse_schema(infer_schema_toml(csv, ""), "none.toml");
  EXPECT_EQ(none.label(), "");
  EXPECT_EQ(none.size(), 3);
  Schema named = parse_schema(infer_schema_toml(csv, "a"), "named.toml");
  EXPECT_EQ(named.label(), "a");
  EXPECT_EQ(named.size(), 2);
  EXPECT_EQ(named.feature(0).name, "b");
  EXPECT_TRUE(has(input_error([&] { (void)infer_schema_toml(csv, "z"); }),
                  "no column 'z' to use as the label (columns: a, b, c)"));
}

TEST(Infer, Errors) {
  EXPECT_TRUE(has(input_error([] { (void)infer_schema_toml(write_temp("e1.csv", ""), std::nullopt); }), "empty file"));
  EXPECT_TRUE(
      has(input_error([] { (void)infer_schema_toml(write_temp("e2.csv", "a,b\n"), std::nullopt); }), "no data rows"));
  EXPECT_TRUE(has(input_error([] { (void)infer_schema_toml(write_temp("e0.csv", "1,2\n3,4\n"), std::nullopt); }),
                  "e0.csv: line 1: the first line looks like data"));
  const std::string e3 =
      input_error([] { (void)infer_schema_toml(write_temp("e3.csv", "a,b\n1,2\n,3\n"), std::nullopt); });
  EXPECT_TRUE(has(e3, "e3.csv: row 2 (line 3), column 'a': empty value"));
  EXPECT_TRUE(has(input_error([] { (void)infer_schema_toml(write_temp("e4.csv", "a,b\n1,2\n1\n"), std::nullopt); }),
                  "row 2 (line 3): 1 fields, expected 2"));
  EXPECT_TRUE(has(input_error([] { (void)infer_schema_toml(write_temp("e5.csv", "a,b\n1,0.5\n"), std::nullopt); }),
                  "non-integer"));
}

TEST(Infer, AdultCsvRoundTrip) {
  const std::string csv = repo_path("benchmarks/fairify/data/adult.csv");
  Schema s = parse_schema(infer_schema_toml(csv, std::nullopt), "adult-inferred.toml");
  EXPECT_EQ(s.label(), "income-per-year");
  ASSERT_EQ(s.size(), 13);
  for (const Feature& f : s.features()) EXPECT_EQ(f.kind, FeatureKind::Integer) << f.name;
  EXPECT_EQ(s.feature(0).min, 17);  // the data's range, not Fairify's
  EXPECT_EQ(s.feature(0).max, 90);
  EXPECT_EQ(load_csv(csv, s).rows(), 45222);
}

}  // namespace
}  // namespace witness
