#include "run/jobs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../domain/test_util.h"
#include "core/error.h"
#include "model/evaluator.h"

namespace witness {
namespace {

// The first `rows` rows of the bundled census data (encoded: one model input per feature).
std::string census_rows(int rows) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("witness_jobs_test_" + std::to_string(rows) + ".csv")).string();
  std::ifstream in(test::repo_path("benchmarks/fairify/data/adult.csv"));
  std::ofstream out(path);
  std::string line;
  for (int k = 0; k <= rows && std::getline(in, line); ++k) out << line << "\n";
  return path;
}

JobSubject ac1_with_rows(const std::string& data) {
  SubjectSource src;
  src.model_path = test::repo_path("benchmarks/fairify/models/adult/AC1.h5");
  src.schema_path = test::repo_path("benchmarks/fairify/adult.toml");
  src.protected_names = {"sex"};
  src.data.path = data;
  return load_subject(src);
}

TEST(Jobs, RunOptionsGoToTheEnvAndJobOptionsToTheJob) {
  Env env;
  FairJob job;
  set_job_options(fair_options(), job, env, {{"seed", "7"}, {"max-witnesses", "3"}, {"favorable", "1"}});
  EXPECT_EQ(env.options.get_int("seed"), 7);
  EXPECT_EQ(job.settings.max_witnesses, 3);
  EXPECT_EQ(job.favorable, "1");
  EXPECT_THROW(set_job_options(fair_options(), job, env, {{"no-such-option", "1"}}), InputError);
  EXPECT_THROW(set_job_options(fair_options(), job, env, {{"max-witnesses", "many"}}), InputError);
}

// With data rows, run_fair decides every row with the other sex: the rows it lists as flipping, by
// group and direction, are exactly those whose label changes when the sex input is flipped by hand;
// the first witness is such a row; text, JSON and provenance say the same run.
TEST(Jobs, FairWithDataRowsListsExactlyTheRowsThatFlipByGroupAndDirection) {
  const JobSubject subject = ac1_with_rows(census_rows(600));
  Env env;
  FairJob job;
  set_job_options(fair_options(), job, env, {{"favorable", "1"}, {"seed", "1"}});
  const RunOutput out = run_fair(subject, job, env, "witness fair AC1.h5 ...");

  const Eigen::MatrixXd inputs = subject.data->model_inputs(subject.schema);  // [input][row]
  ASSERT_EQ(inputs.rows(), static_cast<Eigen::Index>(subject.schema.features().size()));
  const int sex = subject.schema.feature_index("sex");
  Eigen::MatrixXd twins = inputs;
  twins.row(sex) = (1.0 - inputs.row(sex).array()).matrix();  // two codes: 0 and 1
  const Evaluation own = evaluate(*subject.model, inputs), other = evaluate(*subject.model, twins);
  int flipped = 0, to_favorable = 0, to_unfavorable = 0;
  for (Eigen::Index i = 0; i < inputs.cols(); ++i) {
    if (own.labels[i] == other.labels[i]) continue;
    ++flipped;
    ++(own.labels[i] == 1 ? to_unfavorable : to_favorable);
  }
  ASSERT_GT(flipped, 0);
  const nlohmann::json& data = out.result["data"];
  EXPECT_EQ(data["unfair"].get<int>(), flipped);
  int listed_favorable = 0, listed_unfavorable = 0;
  for (const nlohmann::json& g : data["by_group"]) {
    listed_favorable += g["to_favorable"]["k"].get<int>();
    listed_unfavorable += g["to_unfavorable"]["k"].get<int>();
  }
  EXPECT_EQ(listed_favorable, to_favorable);
  EXPECT_EQ(listed_unfavorable, to_unfavorable);
  EXPECT_EQ(data["flips"].size(), static_cast<std::size_t>(flipped));

  EXPECT_EQ(out.result["verdict"], "witness");
  const int first = out.result["witness"]["nearest_row"]["row"].get<int>();
  EXPECT_TRUE(out.result["witness"]["nearest_row"]["differs"].empty());
  EXPECT_NE(own.labels[first - 1], other.labels[first - 1]) << "row " << first << " (1-based) does not flip";
  EXPECT_NE(out.text.find("x is a person of the data: row " + std::to_string(first)), std::string::npos) << out.text;
  EXPECT_EQ(out.result["provenance"]["files"][0]["role"], "model");
  EXPECT_EQ(out.result["provenance"]["files"][0]["sha256"].get<std::string>().size(), 64U);
  EXPECT_FALSE(out.flips_csv.empty());
}

// The same input and options give the same verdict and the same first witness, 1 thread or 2.
TEST(Jobs, FairWithDataRowsGivesTheSameFirstWitnessOnEveryRun) {
  const JobSubject subject = ac1_with_rows(census_rows(300));
  std::vector<std::string> firsts;
  for (const char* threads : {"1", "2", "2"}) {
    Env env;
    FairJob job;
    set_job_options(fair_options(), job, env, {{"threads", threads}});
    const RunOutput out = run_fair(subject, job, env, "");
    EXPECT_EQ(out.result["verdict"], "witness");
    firsts.push_back(out.result["witness"]["x_named"].dump());
  }
  EXPECT_EQ(firsts[0], firsts[1]);
  EXPECT_EQ(firsts[1], firsts[2]);
}

TEST(Jobs, BiasIsTheSameForTheSameSeed) {
  SubjectSource src;
  src.model_path = test::repo_path("benchmarks/fairify/models/adult/AC1.h5");
  src.schema_path = test::repo_path("benchmarks/fairify/adult.toml");
  src.protected_names = {"sex"};
  const JobSubject subject = load_subject(src);
  std::vector<nlohmann::json> answers;
  for (int k = 0; k < 2; ++k) {
    Env env;
    BiasJob job;
    set_job_options(bias_options(), job, env, {{"samples", "20000"}, {"seed", "3"}});
    answers.push_back(run_bias(subject, job, env, "").result);
  }
  EXPECT_EQ(answers[0]["samples"], 20000);
  EXPECT_EQ(answers[0]["discriminatory"], answers[1]["discriminatory"]);
}

TEST(Jobs, QueryOverridesAreChecked) {
  Query q;
  q.name = "weight";
  QueryJob job;
  job.only = "weight,nothere";
  EXPECT_THROW(job_queries({q}, job), InputError);
  job.only = "";
  job.model = "a.onnx";
  job.program = "a.c";
  EXPECT_THROW(job_queries({q}, job), InputError);
  job.model = "";
  EXPECT_THROW(job_queries({q}, job), InputError);  // a program without its function
}

TEST(Jobs, ATrustNoteReachesTextJsonAndReport) {
  RunOutput out;
  out.result = {{"verdict", "witness"}};
  out.report = {{"result", nlohmann::json::object()}};
  add_trust_note(out, "merged from 4 parts");
  EXPECT_EQ(out.result["trusted"], "merged from 4 parts");
  EXPECT_EQ(out.report["result"]["trusted"], "merged from 4 parts");
  EXPECT_NE(out.text.find("merged from 4 parts"), std::string::npos);
}

}  // namespace
}  // namespace witness
