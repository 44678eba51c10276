#include "domain/dataset.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace witness {
namespace {

using test::has;
using test::input_error;
using test::write_temp;

// The schema is a file so that its text is written once (tests/fixtures/schemas).
const char* const kSchema = WITNESS_SOURCE_DIR "/tests/fixtures/schemas/people.toml";

Schema people() { return load_schema(kSchema); }

TEST(Dataset, ReadsReorderedQuotedCrlfColumns) {
  // Columns in another order, a quoted label with a comma, a quoted "" escape in a header,
  // CRLF line ends, a code instead of a label, and a trailing empty line.
  const std::string path = write_temp("good.csv",
                                      "\xEF\xBB\xBF"
                                      "job,y, score ,age\r\n"
                                      "\"engineer, senior\",yes,0.5,30\r\n"
                                      "nurse,0,-1,41\r\n"
                                      "0,1,1,  7 \r\n"
                                      "\r\n");
  Schema s = people();
  Dataset d = load_csv(path, s);
  EXPECT_EQ(d.source, path);
  ASSERT_EQ(d.rows(), 3);
  ASSERT_EQ(d.raw.rows(), 3);
  EXPECT_EQ(d.raw.col(0), Eigen::Vector3d(30, 1, 0.5));
  EXPECT_EQ(d.raw.col(1), Eigen::Vector3d(41, 2, -1));
  EXPECT_EQ(d.raw.col(2), Eigen::Vector3d(7, 0, 1));
  EXPECT_EQ(d.labels, (std::vector<int>{1, 0, 1}));
  Eigen::MatrixXd x = d.model_inputs(s);
  ASSERT_EQ(x.rows(), 5);
  ASSERT_EQ(x.cols(), 3);
  for (Eigen::Index j = 0; j < 3; ++j) EXPECT_EQ(x.col(j), s.to_model(d.raw.col(j)));
  EXPECT_EQ(s.display_row(d.raw.col(0)), "age=30, job=\"engineer, senior\", score=0.5");
}

TEST(Dataset, QuotedNewlinesAndNoLabelColumn) {
  Schema s = parse_schema(R"(
[[features]]
name = "note"
kind = "categorical"
categories = ["a\nb", "say \"hi\""]
[[features]]
name = "n"
kind = "integer"
min = 0
max = 9
)");
  Dataset d = parse_csv("note,n\n\"a\nb\",1\n\"say \"\"hi\"\"\",2\n", s, "mem.csv");
  ASSERT_EQ(d.rows(), 2);
  EXPECT_EQ(d.raw(0, 0), 0);
  EXPECT_EQ(d.raw(0, 1), 1);
  EXPECT_FALSE(d.has_labels());
  // The row after a quoted newline is reported at its real file line.
  const std::string e = input_error([&] { (void)parse_csv("note,n\n\"a\nb\",1\nx,2\n", s, "mem.csv"); });
  EXPECT_TRUE(has(e, "mem.csv: row 2 (line 4), column 'note'"));
}

TEST(Dataset, HeaderOnlyIsEmptyDataset) {
  Dataset d = parse_csv("age,job,score\n", people(), "h.csv");
  EXPECT_EQ(d.rows(), 0);
  EXPECT_EQ(d.raw.rows(), 3);
}

struct BadCsv {
  const char* name;
  const char* text;
  std::vector<std::string> expected;
};

class MalformedCsv : public ::testing::TestWithParam<BadCsv> {};

TEST_P(MalformedCsv, IsInputErrorNamingFileRowAndColumn) {
  const BadCsv& c = GetParam();
  const std::string path = write_temp(std::string(c.name) + ".csv", c.text);
  const std::string what = input_error([&] { (void)load_csv(path, people()); });
  EXPECT_TRUE(has(what, path + ": "));
  for (const std::string& e : c.expected) EXPECT_TRUE(has(what, e)) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MalformedCsv,
    ::testing::Values(
        BadCsv{"empty", "", {"empty file: expected a header row"}}, BadCsv{"blank", "\n\r\n\n", {"empty file"}},
        BadCsv{"no_header", "30,0,0.5,1\n31,1,0.5,0\n", {"line 1", "looks like data: a header row"}},
        BadCsv{"missing_column", "age,y\n30,1\n", {"line 1 (header)", "missing columns 'job', 'score'"}},
        BadCsv{"duplicate_column", "age,job,score,age\n", {"column 'age' appears twice"}},
        BadCsv{"non_numeric",
               "age,job,score\n30,nurse,0.5\nold,nurse,0.5\n",
               {"row 2 (line 3), column 'age'", "expected an integer in [0, 120], got 'old'"}},
        BadCsv{"non_integer", "age,job,score\n30.5,nurse,0.5\n", {"row 1 (line 2), column 'age'", "got '30.5'"}},
        BadCsv{"out_of_range_code",
               "age,job,score\n30,3,0.5\n",
               {"row 1 (line 2), column 'job'", "or a code in [0, 2], got '3'"}},
        BadCsv{"unknown_category",
               "age,job,score\n30,pilot,0.5\n",
               {"row 1 (line 2), column 'job'", "expected a category of 'job' (clerk, engineer, senior, nurse)"}},
        BadCsv{"real_out_of_range",
               "age,job,score\n30,nurse,1.5\n",
               {"row 1 (line 2), column 'score'", "expected a number in [-1, 1], got '1.5'"}},
        BadCsv{"empty_value", "age,job,score\n30,,0.5\n", {"row 1 (line 2), column 'job'", "empty value"}},
        BadCsv{"ragged_short",
               "age,job,score\n30,nurse,0.5\n31,nurse\n",
               {"row 2 (line 3)", "2 fields, expected 3 as in the header"}},
        BadCsv{"ragged_long", "age,job,score\n30,nurse,0.5,9\n", {"row 1 (line 2)", "4 fields, expected 3"}},
        BadCsv{"bad_label",
               "age,job,score,y\n30,nurse,0.5,maybe\n",
               {"row 1 (line 2), column 'y'",
                "expected a class of the model (no, yes) or an integer class index, got 'maybe'"}},
        BadCsv{"unterminated_quote", "age,job,score\n30,\"nurse,0.5\n", {"line 2", "unterminated quoted field"}},
        BadCsv{"junk_after_quote", "age,job,score\n30,\"nurse\"x,0.5\n", {"line 2", "after a closing quote"}}),
    [](const ::testing::TestParamInfo<BadCsv>& p) { return std::string(p.param.name); });

TEST(Dataset, MissingFile) {
  EXPECT_TRUE(
      has(input_error([] { (void)load_csv("/nonexistent/d.csv", people()); }), "/nonexistent/d.csv: cannot open"));
}

// Columns that are neither features nor the label are read as nothing and named (a label column
// is never guessed); those asked for are kept as text, an empty cell an unknown value.
TEST(Dataset, OtherColumnsAreNamedOrKept) {
  Schema s = parse_schema("[[features]]\nname = \"a\"\nkind = \"boolean\"\n", "nolabel.toml");
  const Dataset d = parse_csv("zip,a,y,g\n123,1,0,x\n456,0,1,\n", s, "x.csv",
                              CsvReading{.label = {}, .label_classes = {}, .keep = {"g"}});
  EXPECT_EQ(d.unread, (std::vector<std::string>{"zip", "y"}));
  EXPECT_FALSE(d.has_labels());
  EXPECT_EQ(d.kept.at("g"), (std::vector<std::string>{"x", ""}));
  const Dataset l =
      parse_csv("zip,a,y\n123,1,0\n456,0,1\n", s, "x.csv", CsvReading{.label = "y", .label_classes = {}, .keep = {}});
  EXPECT_EQ(l.labels, (std::vector<int>{0, 1}));
  EXPECT_EQ(l.label_column, "y");
  EXPECT_TRUE(has(input_error([&] {
                    (void)parse_csv("a,y\n1,0\n", s, "x.csv",
                                    CsvReading{.label = "z", .label_classes = {}, .keep = {}});
                  }),
                  "no column 'z' to read the true labels from (columns: a, y)"));
  EXPECT_TRUE(has(input_error([&] {
                    (void)parse_csv("a,y\n1,maybe\n", s, "x.csv",
                                    CsvReading{.label = "y", .label_classes = {"no", "yes"}, .keep = {}});
                  }),
                  "expected a class of the model (no, yes)"));
}

}  // namespace
}  // namespace witness
