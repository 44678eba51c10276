// The text answer of a quantified run: who the falsified individuals are, per feature, in the
// user's values; a real feature's bins as an interval rounded outward (a bin's end is no value anyone
// wrote: 28.587500000000002 printed whole once).
#include "report/fairness_report.h"

#include <gtest/gtest.h>

#include "domain/schema.h"
#include "model/model.h"

namespace witness {
namespace {

TEST(FairnessReport, ForWhomShowsARealFeatureAsARoundedInterval) {
  const Schema schema = parse_schema(R"(
name = "real_bins"
protected = ["p"]
features = [
  { name = "bmi", kind = "real", min = 18.0, max = 42.2 },
  { name = "age", kind = "integer", min = 20, max = 79 },
  { name = "p", kind = "boolean" },
]
)",
                                     "real_bins.toml");
  ModelBuilder b("m", schema.model_input_names());
  const int z = b.dense(b.input(), Eigen::MatrixXd::Ones(1, 3), Eigen::VectorXd::Zero(1));
  const Model model = b.finish(z, DecisionRule::threshold_on(z, 0.0));
  const FairnessProblem problem(model, schema, {});
  FairnessResult r;
  r.verdict = Verdict::Inconclusive;
  r.share.measured = true;
  r.share.certified = 0.5;
  r.share.falsified = 0.1;
  r.share.undecided = 0.4;
  // Two bins each: all the falsified individuals in the second.
  r.marginals.push_back({0, {18.0, 28.587500000000002}, {28.587500000000002, 42.2}, {0.0, 1.0}, {0.5, 0.5}});
  r.marginals.push_back({1, {20.0, 50.0}, {49.0, 79.0}, {0.0, 1.0}, {0.5, 0.5}});
  const std::string text = fairness_text({.problem = problem, .result = r, .quantify = true, .counters = {}});
  EXPECT_NE(text.find("    bmi in [28.58, 42.2]: 100% of them (50% of the domain)"), std::string::npos) << text;
  EXPECT_NE(text.find("    age 50..79: 100% of them (50% of the domain)"), std::string::npos) << text;
  EXPECT_EQ(text.find("28.5875"), std::string::npos) << text;
}

}  // namespace
}  // namespace witness
