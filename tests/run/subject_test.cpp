#include "run/subject.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "../domain/test_util.h"
#include "core/error.h"
#include "model/evaluator.h"
#include "report/rows.h"

namespace witness {
namespace {

using test::input_error;

std::string repo(const std::string& rel) { return std::string(WITNESS_SOURCE_DIR) + "/" + rel; }

std::vector<std::string> lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

JobSubject pipeline(const std::string& name) {
  SubjectSource src;
  src.model_path = repo("tests/fixtures/pipelines/" + name + ".onnx");
  src.data.path = repo("tests/fixtures/pipelines/adult_600.csv");
  src.needs_protected = false;
  return load_subject(src);
}

// skl2onnx-shaped graphs over raw columns (tools/make_pipeline_fixtures.py): with the schema they
// bring, read off the data, every row is labelled as scikit-learn's Pipeline.predict labels it.
TEST(Subject, Skl2onnxPipelinesLabelEveryRowAsScikitLearn) {
  for (const char* name : {"lr", "mlp", "dt", "rf", "gb", "ordinal_minmax_lr", "drop_first_lr"}) {
    const JobSubject s = pipeline(name);
    ASSERT_FALSE(s.model->columns.empty()) << name;
    const Evaluation r = evaluate(*s.model, s.data->model_inputs(s.schema));
    const std::vector<std::string> expected = lines(repo(std::string("tests/fixtures/pipelines/") + name + ".labels"));
    ASSERT_EQ(expected.size(), r.labels.size()) << name;
    int differ = 0;
    for (std::size_t i = 0; i < expected.size(); ++i)
      differ += label_name(*s.model, s.schema, r.labels[i]) != expected[i];
    EXPECT_EQ(differ, 0) << name;
    EXPECT_EQ(s.schema.feature_index("education-num"), 4) << name;  // the data's name, not the graph input's
  }
}

TEST(Subject, TheSchemaComesWithThePipeline) {
  const JobSubject s = pipeline("lr");
  const Feature& age = s.schema.feature(s.schema.feature_index("age"));
  EXPECT_EQ(age.kind, FeatureKind::Integer);
  EXPECT_EQ(age.norm.form, Normalisation::Form::CenterScale);  // ai.onnx.ml Scaler: (x - offset) * scale
  const Feature& work = s.schema.feature(s.schema.feature_index("workclass"));
  EXPECT_TRUE(work.one_hot);
  EXPECT_EQ(work.missing, "Private");  // the string imputer's fill value
  // The label is never guessed from the data's layout: without --label there is none, and the
  // columns read as nothing are named.
  EXPECT_EQ(s.schema.label(), "");
  EXPECT_FALSE(s.data->has_labels());
  EXPECT_EQ(s.data->unread, (std::vector<std::string>{"income"}));
}

// --label names the column; its values must be the model's classes.
TEST(Subject, TheLabelIsTheColumnNamed) {
  SubjectSource src;
  src.model_path = repo("tests/fixtures/pipelines/lr.onnx");
  src.data.path = repo("tests/fixtures/pipelines/adult_600.csv");
  src.needs_protected = false;
  src.label = "income";
  const JobSubject s = load_subject(src);
  EXPECT_EQ(s.data->label_column, "income");
  EXPECT_EQ(s.data->labels.size(), 600U);
  EXPECT_TRUE(s.data->unread.empty());
  src.label = "sex";  // a model input
  EXPECT_NE(input_error([&] { (void)load_subject(src); }).find("--label sex: that column is a model input"),
            std::string::npos);
  src.label = "nothere";
  EXPECT_NE(input_error([&] { (void)load_subject(src); }).find("no column 'nothere'"), std::string::npos);
}

// A protected attribute the model does not read is a column of the data: kept, not an error.
TEST(Subject, AProtectedColumnTheModelDoesNotReadIsKept) {
  const std::string csv = testing::TempDir() + "/unaware.csv";
  {
    std::ifstream in(repo("tests/fixtures/pipelines/adult_600.csv"));
    std::ofstream out(csv);
    std::string line;
    std::getline(in, line);
    out << "afam," << line << "\n";
    for (int i = 0; std::getline(in, line); ++i)
      out << (i % 3 == 0 ? "yes" : i % 3 == 1 ? "no" : "") << "," << line << "\n";
  }
  SubjectSource src;
  src.model_path = repo("tests/fixtures/pipelines/lr.onnx");
  src.data.path = csv;
  src.protected_names = {"afam", "sex"};
  const JobSubject s = load_subject(src);
  EXPECT_EQ(s.protected_names, (std::vector<std::string>{"sex"}));
  EXPECT_EQ(s.unread_protected, (std::vector<std::string>{"afam"}));
  EXPECT_EQ(s.group_names, (std::vector<std::string>{"afam", "sex"}));
  ASSERT_TRUE(s.data->kept.contains("afam"));
  EXPECT_EQ(s.data->kept.at("afam")[2], "");  // an unknown value
  src.protected_names = {"zodiac"};
  EXPECT_NE(input_error([&] { (void)load_subject(src); }).find("unknown feature 'zodiac'"), std::string::npos);
}

// A user's schema that leaves out the scaler describes the same widths, and would give silently
// wrong answers: it is refused, naming the feature and what the model computes.
TEST(Subject, AWrongUserSchemaIsRefused) {
  const JobSubject good = pipeline("lr");
  std::string toml;
  {
    std::ostringstream text;
    text << "name = \"mine\"\nlabel = \"income\"\n";
    for (const Feature& f : good.schema.features()) {
      text << "[[features]]\nname = \"" << f.name << "\"\nkind = \"" << kind_name(f.kind) << "\"\n";
      if (f.kind == FeatureKind::Categorical) {
        text << "categories = [";
        for (const std::string& c : f.categories) text << "\"" << c << "\", ";
        text << "]\nencoding = \"one-hot\"\n";
      } else {
        text << "min = " << f.min << "\nmax = " << f.max << "\n";
      }
    }
    toml = text.str();
  }
  const std::string path = ::testing::TempDir() + "/no_scaler.toml";
  std::ofstream(path) << toml;
  SubjectSource src;
  src.model_path = repo("tests/fixtures/pipelines/lr.onnx");
  src.schema_path = path;
  src.protected_names = {"sex"};
  const std::string e = input_error([&] { (void)load_subject(src); });
  EXPECT_NE(e.find("feature 'age'"), std::string::npos) << e;
  EXPECT_NE(e.find("does not match the model's preprocessing"), std::string::npos) << e;
  EXPECT_NE(e.find("gives no normalisation"), std::string::npos) << e;
}

TEST(Subject, MissingPiecesAreNamed) {
  SubjectSource src;
  src.model_path = repo("tests/fixtures/pipelines/lr.onnx");
  EXPECT_NE(input_error([&] { (void)load_subject(src); }).find("carries its preprocessing: give the data"),
            std::string::npos);
  src.data.path = repo("tests/fixtures/pipelines/adult_600.csv");
  EXPECT_NE(input_error([&] { (void)load_subject(src); }).find("no protected attribute"), std::string::npos);
  src.protected_names = {"gender"};
  EXPECT_NE(input_error([&] { (void)load_subject(src); }).find("unknown feature 'gender'"), std::string::npos);
  SubjectSource plain;
  plain.model_path = repo("benchmarks/fairify/models/adult/AC1.h5");
  EXPECT_NE(input_error([&] { (void)load_subject(plain); }).find("a schema is required"), std::string::npos);
}

}  // namespace
}  // namespace witness
