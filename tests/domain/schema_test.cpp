#include "domain/schema.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "domain/dataset.h"
#include "test_util.h"

namespace witness {
namespace {

using test::has;
using test::input_error;
using test::write_temp;

// The schema is a file so that its text is written once (tests/fixtures/schemas).
const char* const kMixed = WITNESS_SOURCE_DIR "/tests/fixtures/schemas/mixed.toml";

TEST(Schema, ParsesKindsWidthsAndNames) {
  Schema s = load_schema(kMixed);
  EXPECT_EQ(s.name(), "mixed");
  EXPECT_EQ(s.label(), "y");
  ASSERT_EQ(s.size(), 5);
  EXPECT_EQ(s.feature(0).kind, FeatureKind::Integer);
  EXPECT_EQ(s.feature(1).kind, FeatureKind::Real);
  EXPECT_EQ(s.feature(2).kind, FeatureKind::Categorical);
  EXPECT_EQ(s.feature(2).max, 1.0);
  EXPECT_TRUE(s.feature(3).one_hot);
  EXPECT_EQ(s.feature(4).kind, FeatureKind::Boolean);
  EXPECT_EQ(s.model_width(), 7);  // age, income, sex, group x3, member
  EXPECT_EQ(s.feature(3).model_offset, 3);
  EXPECT_EQ(s.feature(4).model_offset, 6);
  EXPECT_EQ(s.model_input_names(),
            (std::vector<std::string>{"age", "income", "sex", "group=a", "group=b", "group=c", "member"}));
  EXPECT_EQ(s.feature_index("group"), 3);
  EXPECT_EQ(s.protected_indices(), (std::vector<int>{2, 3}));
  EXPECT_EQ(s.box_names(), (std::vector<std::string>{"narrow"}));
}

TEST(Schema, NormalisationAndOneHotRoundTrip) {
  Schema s = load_schema(kMixed);
  Eigen::VectorXd raw(5);
  raw << 37, 12345.5, 1, 2, 1;
  Eigen::VectorXd x = s.to_model(raw);
  ASSERT_EQ(x.size(), 7);
  EXPECT_EQ(x[0], (37 - 40.5) / 12.25);  // exactly the mean/std form
  EXPECT_EQ(x[1], 12345.5 * 1e-4 + -0.5);
  EXPECT_EQ(x[2], 1.0);
  EXPECT_EQ(x[3], 0.0);
  EXPECT_EQ(x[4], 0.0);
  EXPECT_EQ(x[5], 1.0);
  EXPECT_EQ(x[6], 1.0);
  Eigen::VectorXd back = s.from_model(x);
  EXPECT_EQ(back[0], 37);
  EXPECT_NEAR(back[1], 12345.5, 1e-9);
  EXPECT_EQ(back.tail(3), raw.tail(3));

  // Every integer age survives the round trip exactly (from_model rounds integral kinds).
  for (int age = 18; age <= 90; ++age) {
    raw[0] = age;
    EXPECT_EQ(s.from_model(s.to_model(raw))[0], age);
  }
  // One-hot: the largest input wins, ties go to the lowest code.
  x.segment(3, 3) << 0.2, 0.7, 0.7;
  EXPECT_EQ(s.from_model(x)[3], 1);

  Eigen::MatrixXd cols(5, 2);
  cols.col(0) = raw;
  cols.col(1) = raw;
  cols(3, 1) = 0;
  Eigen::MatrixXd xs = s.to_model_columns(cols);
  EXPECT_EQ(xs.col(0), s.to_model(cols.col(0)));
  EXPECT_EQ(xs.col(1), s.to_model(cols.col(1)));

  raw[3] = 3;  // no one-hot input for code 3
  EXPECT_TRUE(has(input_error([&] { (void)s.to_model(raw); }), "feature 'group'"));
}

TEST(Schema, DisplayAndParseValues) {
  Schema s = load_schema(kMixed);
  EXPECT_EQ(s.display(0, 37), "37");
  EXPECT_EQ(s.display(1, 0.25), "0.25");
  EXPECT_EQ(s.display(2, 0), "Female");
  EXPECT_EQ(s.display(2, 5), "5");
  EXPECT_EQ(s.display(4, 1), "true");
  Eigen::VectorXd raw(5);
  raw << 37, 0.5, 0, 1, 0;
  EXPECT_EQ(s.display_row(raw), "age=37, income=0.5, sex=Female, group=b, member=false");
  // In a list, a value that could read as two, or start a line of its own, is quoted and escaped.
  EXPECT_EQ(quoted_value("Some-college"), "Some-college");
  EXPECT_EQ(quoted_value("1-4 years"), "\"1-4 years\"");
  EXPECT_EQ(quoted_value("a=b"), "\"a=b\"");
  EXPECT_EQ(quoted_value("x\nverdict: fair"), "\"x\\nverdict: fair\"");
  EXPECT_EQ(quoted_value("say \"hi\"\\\r\t\x01"), "\"say \\\"hi\\\"\\\\\\r\\t\\x01\"");
  EXPECT_EQ(row_name({"app-17", "a\nb"}, 0), "index app-17");
  EXPECT_EQ(row_name({"app-17", "a\nb"}, 1), "index \"a\\nb\"");
  EXPECT_EQ(row_name({}, 4), "row 5");

  EXPECT_EQ(s.parse_value(0, " 42 "), 42);
  EXPECT_EQ(s.parse_value(0, "42.0"), 42);
  EXPECT_EQ(s.parse_value(1, "1.5e3"), 1500);
  EXPECT_EQ(s.parse_value(2, "Male"), 1);
  EXPECT_EQ(s.parse_value(2, "0"), 0);
  EXPECT_EQ(s.parse_value(4, "true"), 1);
  EXPECT_EQ(s.parse_value(4, "0"), 0);
  const std::string e1 = input_error([&] { (void)s.parse_value(0, "42.5"); });
  EXPECT_TRUE(has(e1, "feature 'age'"));
  EXPECT_TRUE(has(e1, "expected an integer in [18, 90], got '42.5'"));
  EXPECT_TRUE(has(input_error([&] { (void)s.parse_value(0, "91"); }), "[18, 90]"));
  EXPECT_TRUE(has(input_error([&] { (void)s.parse_value(0, "abc"); }), "got 'abc'"));
  EXPECT_TRUE(has(input_error([&] { (void)s.parse_value(0, ""); }), "empty value"));
  EXPECT_TRUE(has(input_error([&] { (void)s.parse_value(1, "nan"); }), "expected a number"));
  EXPECT_TRUE(has(input_error([&] { (void)s.parse_value(2, "Other"); }),
                  "expected a category of 'sex' (Female, Male) or a code in [0, 1], got 'Other'"));
  EXPECT_TRUE(has(input_error([&] { (void)s.parse_value(2, "2"); }), "got '2'"));
  EXPECT_TRUE(has(input_error([&] { (void)s.parse_value(4, "yes"); }), "expected true, false, 0 or 1"));
}

TEST(Schema, LabelsWinOverCodes) {
  Schema s = parse_schema(R"(
[[features]]
name = "f"
kind = "categorical"
categories = ["1", "0", "x"]
)");
  EXPECT_EQ(s.parse_value(0, "1"), 0);  // the label "1" is code 0
  EXPECT_EQ(s.parse_value(0, "0"), 1);
  EXPECT_EQ(s.parse_value(0, "2"), 2);  // not a label: a code
  EXPECT_EQ(s.name(), "<schema>");
}

TEST(Schema, ContainsAndDomainSize) {
  Schema s = load_schema(kMixed);
  Eigen::VectorXd raw(5);
  raw << 37, 0.5, 0, 1, 0;
  EXPECT_TRUE(s.contains(raw));
  raw[0] = 37.5;
  EXPECT_FALSE(s.contains(raw));
  raw[0] = 17;
  EXPECT_FALSE(s.contains(raw));
  raw[0] = 18;
  raw[3] = 3;
  EXPECT_FALSE(s.contains(raw));
  EXPECT_FALSE(s.contains(Eigen::VectorXd::Zero(4)));
  EXPECT_TRUE(std::isinf(s.domain_size()));  // a real feature with min < max

  Schema ints = parse_schema(R"(
[[features]]
name = "a"
kind = "integer"
min = -3
max = 1
[[features]]
name = "b"
kind = "categorical"
categories = ["x", "y", "z"]
[[features]]
name = "c"
kind = "boolean"
)");
  EXPECT_EQ(ints.domain_size(), 5.0L * 3 * 2);
}

TEST(Schema, BoxesReplaceBounds) {
  Schema s = load_schema(kMixed);
  Schema b = s.with_box("narrow");
  EXPECT_EQ(b.active_box(), "narrow");
  EXPECT_EQ(s.active_box(), "");
  EXPECT_EQ(b.feature(0).min, 20);
  EXPECT_EQ(b.feature(0).max, 30);
  EXPECT_EQ(b.feature(2).max, 3);   // codes beyond the labels
  EXPECT_EQ(s.feature(0).min, 18);  // the original is untouched
  EXPECT_EQ(b.parse_value(2, "3"), 3);
  EXPECT_EQ(b.display(2, 3), "3");
  EXPECT_TRUE(has(input_error([&] { (void)b.parse_value(0, "19"); }),
                  "expected an integer in [20, 30] (box 'narrow'), got '19'"));
  const std::string e = input_error([&] { (void)s.with_box("wide"); });
  EXPECT_TRUE(has(e, "mixed.toml"));
  EXPECT_TRUE(has(e, "unknown box 'wide' (available: narrow)"));
  Schema plain = parse_schema("[[features]]\nname = \"a\"\nkind = \"boolean\"\n", "p.toml");
  EXPECT_TRUE(has(input_error([&] { (void)plain.with_box("x"); }), "defines no [boxes.*] tables"));
}

TEST(Schema, QuotedDottedNamesInBoxes) {
  Schema s = parse_schema(
      "[[features]]\nname = \"emp.var.rate\"\nkind = \"integer\"\nmin = -3\nmax = 1\n"
      "[boxes.b]\n\"emp.var.rate\" = [-1, 0]\n");
  EXPECT_EQ(s.with_box("b").feature(0).min, -1);
  EXPECT_EQ(s.with_box("b").feature(0).max, 0);
}

TEST(Schema, UnknownFeatureAndProtectedNames) {
  Schema s = load_schema(kMixed);
  EXPECT_TRUE(has(input_error([&] { (void)s.feature_index("gender"); }),
                  "unknown feature 'gender' (known: age, income, sex, group, member)"));
  EXPECT_EQ(s.protected_indices({"member", "age"}), (std::vector<int>{4, 0}));
  EXPECT_TRUE(has(input_error([&] { (void)s.protected_indices({"sex", "sex"}); }), "listed twice"));
  EXPECT_TRUE(has(input_error([&] { (void)s.protected_indices({"income"}); }), "is real"));
}

TEST(Schema, LoadSchemaFileErrors) {
  EXPECT_TRUE(has(input_error([] { (void)load_schema("/nonexistent/x.toml"); }), "/nonexistent/x.toml: cannot open"));
}

// Each malformed schema: the message names the file, the position and (where there is one) the feature.
struct BadSchema {
  const char* name;
  const char* text;
  std::vector<std::string> expected;  // substrings of what()
};

class MalformedSchema : public ::testing::TestWithParam<BadSchema> {};

TEST_P(MalformedSchema, IsInputErrorNamingFileAndPlace) {
  const BadSchema& c = GetParam();
  const std::string path = write_temp(std::string(c.name) + ".toml", c.text);
  const std::string what = input_error([&] { (void)load_schema(path); });
  EXPECT_TRUE(has(what, path + ": "));
  for (const std::string& e : c.expected) EXPECT_TRUE(has(what, e)) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MalformedSchema,
    ::testing::Values(
        BadSchema{"syntax", "name = \"x\"\n\n[[features]\nname = \"a\"\n", {"line 3", "TOML syntax error"}},
        BadSchema{"syntax_value", "name = \"x\"\nlabel = \n", {"line 2", "TOML syntax error"}},
        BadSchema{"unknown_kind",
                  "[[features]]\nname = \"a\"\nkind = \"text\"\n",
                  {"line 3, column 8", "feature 'a'", "unknown kind 'text'"}},
        BadSchema{"min_gt_max",
                  "[[features]]\nname = \"a\"\nkind = \"integer\"\nmin = 5\nmax = 3\n",
                  {"line 4", "feature 'a'", "'min' (5) is greater than 'max' (3)"}},
        BadSchema{"missing_categories",
                  "[[features]]\nname = \"c\"\nkind = \"categorical\"\n",
                  {"line 1", "feature 'c'", "needs 'categories'"}},
        BadSchema{"empty_categories",
                  "[[features]]\nname = \"c\"\nkind = \"categorical\"\ncategories = []\n",
                  {"line 4", "feature 'c'", "'categories' is empty"}},
        BadSchema{"duplicate_category",
                  "[[features]]\nname = \"c\"\nkind = \"categorical\"\ncategories = [\"x\", \"x\"]\n",
                  {"line 4", "feature 'c'", "category 'x' is listed twice"}},
        BadSchema{"duplicate_feature",
                  "[[features]]\nname = \"a\"\nkind = \"boolean\"\n[[features]]\nname = \"a\"\nkind = \"boolean\"\n",
                  {"line 5", "feature 'a' is defined twice (first at line 2, column 8)"}},
        BadSchema{"unknown_protected",
                  "protected = [\"sex\"]\n[[features]]\nname = \"a\"\nkind = \"boolean\"\n",
                  {"line 1", "'protected': unknown feature 'sex' (known: a)"}},
        BadSchema{"unknown_box_feature",
                  "[[features]]\nname = \"a\"\nkind = \"boolean\"\n[boxes.f]\nb = [0, 1]\n",
                  {"line 5", "box 'f': unknown feature 'b' (known: a)"}},
        BadSchema{"non_integer_bound",
                  "[[features]]\nname = \"a\"\nkind = \"integer\"\nmin = 0.5\nmax = 3\n",
                  {"line 4", "feature 'a'", "'min' = 0.5 is not an integer"}},
        BadSchema{"dotted_box_key",
                  "[[features]]\nname = \"a.b\"\nkind = \"boolean\"\n[boxes.f]\na.b = [0, 1]\n",
                  {"line 5", "unknown feature 'a'", "quote a name with dots"}},
        BadSchema{"non_integer_box",
                  "[[features]]\nname = \"a\"\nkind = \"integer\"\nmin = 0\nmax = 3\n[boxes.f]\na = [0, 2.5]\n",
                  {"line 7", "box 'f', feature 'a'", "must be integers"}},
        BadSchema{"box_lo_gt_hi",
                  "[[features]]\nname = \"a\"\nkind = \"boolean\"\n[boxes.f]\na = [1, 0]\n",
                  {"line 5", "lo (1) is greater than hi (0)"}},
        BadSchema{"box_not_pair",
                  "[[features]]\nname = \"a\"\nkind = \"boolean\"\n[boxes.f]\na = 1\n",
                  {"line 5", "expected [lo, hi]"}},
        BadSchema{"box_one_hot_too_wide",
                  "[[features]]\nname = \"c\"\nkind = \"categorical\"\ncategories = [\"x\", \"y\"]\n"
                  "encoding = \"one-hot\"\n[boxes.f]\nc = [0, 2]\n",
                  {"line 7", "exactly 2 codes"}},
        BadSchema{"missing_bounds",
                  "[[features]]\nname = \"a\"\nkind = \"real\"\nmin = 0\n",
                  {"line 1", "feature 'a'", "needs 'min' and 'max'"}},
        BadSchema{"categorical_with_min",
                  "[[features]]\nname = \"c\"\nkind = \"categorical\"\ncategories = [\"x\"]\nmin = 0\n",
                  {"line 5", "feature 'c'", "takes no 'min'"}},
        BadSchema{"unknown_feature_key",
                  "[[features]]\nname = \"a\"\nkind = \"boolean\"\ncatgories = [\"x\"]\n",
                  {"line 4", "unknown key 'catgories'"}},
        BadSchema{"unknown_top_key", "nmae = \"x\"\n", {"line 1", "unknown key 'nmae'"}},
        BadSchema{"no_features", "name = \"x\"\n", {"no features"}},
        BadSchema{"missing_name", "[[features]]\nkind = \"boolean\"\n", {"line 1", "features[0]: missing 'name'"}},
        BadSchema{"missing_kind", "[[features]]\nname = \"a\"\n", {"line 1", "feature 'a': missing 'kind'"}},
        BadSchema{"kind_not_string", "[[features]]\nname = \"a\"\nkind = 3\n", {"line 3", "must be a string"}},
        BadSchema{"one_hot_integer",
                  "[[features]]\nname = \"a\"\nkind = \"integer\"\nmin = 0\nmax = 3\nencoding = \"one-hot\"\n",
                  {"line 6", "feature 'a'", "only a categorical feature can be one-hot"}},
        BadSchema{"bad_encoding",
                  "[[features]]\nname = \"c\"\nkind = \"categorical\"\ncategories = [\"x\"]\nencoding = \"onehot\"\n",
                  {"line 5", "unknown encoding 'onehot'"}},
        BadSchema{"zero_std",
                  "[[features]]\nname = \"a\"\nkind = \"real\"\nmin = 0\nmax = 1\nstd = 0\n",
                  {"line 6", "feature 'a'", "'std' must be positive"}},
        BadSchema{"both_normalisations",
                  "[[features]]\nname = \"a\"\nkind = \"real\"\nmin = 0\nmax = 1\nscale = 2\nmean = 1\n",
                  {"feature 'a'", "not two"}},
        BadSchema{"label_is_feature",
                  "label = \"a\"\n[[features]]\nname = \"a\"\nkind = \"boolean\"\n",
                  {"line 1", "also a feature"}},
        BadSchema{"protected_real",
                  "protected = [\"a\"]\n[[features]]\nname = \"a\"\nkind = \"real\"\nmin = 0\nmax = 1\n",
                  {"line 1", "is real"}}),
    [](const ::testing::TestParamInfo<BadSchema>& p) { return std::string(p.param.name); });

// The protected masks every engine uses: per feature, and per model input (a one-hot category
// owns all its columns).
TEST(Schema, ProtectedMasksCoverEveryColumnOfAFeature) {
  const Schema s = load_schema(kMixed);
  const std::vector<int> prot = s.protected_indices();  // sex, group
  const std::vector<bool> features = s.feature_mask(prot);
  ASSERT_EQ(features.size(), static_cast<std::size_t>(s.size()));
  for (int f = 0; f < s.size(); ++f) {
    const bool want = s.feature(f).name == "sex" || s.feature(f).name == "group";
    EXPECT_EQ(features[static_cast<std::size_t>(f)], want) << s.feature(f).name;
  }
  const std::vector<int> inputs = s.inputs_of({s.feature_index("group"), s.feature_index("sex")});
  const Feature& group = s.feature(s.feature_index("group"));
  const Feature& sex = s.feature(s.feature_index("sex"));
  std::vector<int> want = {sex.model_offset};
  for (int k = 0; k < group.model_width; ++k) want.push_back(group.model_offset + k);
  std::sort(want.begin(), want.end());
  EXPECT_EQ(inputs, want);  // ascending, whatever the order of the features
  EXPECT_EQ(group.model_width, 3);
  const std::vector<bool> mask = s.input_mask(prot);
  ASSERT_EQ(mask.size(), static_cast<std::size_t>(s.model_width()));
  for (int i = 0; i < s.model_width(); ++i) {
    EXPECT_EQ(mask[static_cast<std::size_t>(i)], std::find(want.begin(), want.end(), i) != want.end()) << i;
  }
}

}  // namespace
}  // namespace witness
