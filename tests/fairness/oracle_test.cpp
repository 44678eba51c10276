#include "fairness/oracle.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "domain/sampler.h"
#include "model/evaluator.h"
#include "model/loaders.h"
#include "support/paths.h"
#include "support/tiny_networks.h"

namespace witness::test {
namespace {

// Debian's python3 (with numpy), which the example black box needs.
std::string python() { return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3"; }

class OracleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = load_model(source_path("benchmarks/fairify/models/adult/AC1.json"));
    schema_ = load_schema(source_path("benchmarks/fairify/adult.toml"));
  }
  Model model_;
  Schema schema_;
};

TEST_F(OracleTest, ModelOracleMatchesTheEvaluatorWithAnyThreadCount) {
  const Eigen::MatrixXd raw = Sampler(schema_, 3).points(20000);
  const std::vector<int> expected = evaluate(model_, schema_.to_model_columns(raw)).labels;
  for (unsigned threads : {1U, 2U, 3U}) {
    ModelOracle oracle(model_, schema_, threads);
    std::vector<int> got;
    oracle.labels(raw, got);
    EXPECT_EQ(got, expected) << threads << " threads";
    EXPECT_EQ(oracle.rows(), 20000);
  }
}

TEST_F(OracleTest, ExampleProgramGivesTheNativeLabels) {
  CommandOptions o;
  o.max_batch = 1000;  // several exchanges per call
  CommandOracle program(python() + " " + source_path("examples/blackbox/predict.py"), schema_, o);
  ModelOracle native(model_, schema_, 1);
  Sampler sampler(schema_, 4);
  for (int round = 0; round < 3; ++round) {
    const Eigen::MatrixXd raw = sampler.points(round == 1 ? 1 : 2500);
    std::vector<int> a;
    std::vector<int> b;
    native.labels(raw, a);
    program.labels(raw, b);
    EXPECT_EQ(a, b) << "round " << round;
  }
  EXPECT_EQ(program.rows(), 5001);
}

void expect_error(const std::string& command, const std::string& needle, double seconds = 10) {
  const Schema s = schema_of(kBoolLast);
  CommandOptions o;
  o.batch_seconds = seconds;
  try {
    CommandOracle program(command, s, o);
    std::vector<int> labels;
    program.labels(Sampler(s, 1).points(5), labels);
    program.labels(Sampler(s, 2).points(5), labels);
    ADD_FAILURE() << command << ": no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(needle), std::string::npos) << what;
    EXPECT_NE(what.find(command.substr(0, 10)), std::string::npos) << "names the command: " << what;
  }
}

TEST(CommandOracle, BadProgramsGiveClearErrors) {
  // Garbage instead of labels.
  expect_error("while read -r line; do [ -z \"$line\" ] && printf 'yes\\nno\\nyes\\nno\\nyes\\n'; done",
               "expected a class index");
  // A label far outside any class.
  expect_error("while read -r line; do [ -z \"$line\" ] && printf '1\\n-1\\n0\\n1\\n0\\n'; done", "got '-1'");
  // Dies at once, dies half-way, never answers.
  expect_error("exit 3", "exited with status 3");
  expect_error("read -r h; read -r a; echo 1; echo 0", "stopped answering after 2 of 5");
  expect_error("/nonexistent/program", "status 127");
  const auto start = std::chrono::steady_clock::now();
  expect_error("sleep 30", "no complete answer within 0.5 s", 0.5);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(CommandOracle, WritesTheHeaderOnceAndCategoryNamesOnRequest) {
  const Schema s = schema_of(kCategoricalMiddle);
  CommandOptions o;
  o.category_names = true;
  // Answers 1 for rows whose g is "z", else 0; the header must be first and only once.
  const std::string script =
      "read -r h; [ \"$h\" = 'a,g,b' ] || exit 9; "
      "while read -r line; do if [ -z \"$line\" ]; then printf \"$out\"; out=''; "
      "else case $line in *,z,*) out=\"${out}1\\n\";; a,g,b) exit 8;; *) out=\"${out}0\\n\";; esac; fi; done";
  CommandOracle program(script, s, o);
  Eigen::MatrixXd raw(3, 3);
  raw << 0, 1, 2, 0, 1, 2, 0, 1, 2;
  for (int round = 0; round < 2; ++round) {
    std::vector<int> labels;
    program.labels(raw, labels);
    EXPECT_EQ(labels, (std::vector<int>{0, 0, 1}));
  }
}

}  // namespace
}  // namespace witness::test
