// A black-box testing run (witness test) as text and JSON: one formatter for the CLI, the HTML
// report and witness serve.
//
//   const witness::Model model = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   const witness::Schema schema = witness::load_schema("benchmarks/fairify/adult.toml");
//   witness::Env env;
//   witness::ModelOracle oracle(model, schema, 1);
//   const witness::TestResult r = witness::run_test(oracle, schema, {}, env);
//   witness::TestingRun run{.schema = schema, .model = &model, .command = "", .protected_names = {"sex"},
//                           .protected_features = {9}, .budget = 1000, .seed = 0, .result = r,
//                           .pairs = {}, .pairs_csv = "", .pairs_written = 0};
//   std::string text = witness::testing_text(run);
//   nlohmann::json doc = witness::testing_json(run);   // what --json prints
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fairness/blackbox.h"

namespace witness {

struct TestingRun {
  const Schema& schema;
  const Model* model = nullptr;  // null when a program (--cmd) gave the labels
  std::string command;           // that program
  std::vector<std::string> protected_names;
  std::vector<int> protected_features;
  std::int64_t budget = 0;
  std::uint64_t seed = 0;
  const TestResult& result;
  std::vector<DiscriminatoryPair> pairs;  // the first pairs found (the first is the example)
  std::string pairs_csv;                  // where all pairs were written, if anywhere
  std::int64_t pairs_written = 0;
};

[[nodiscard]] std::string testing_label(const TestingRun& run, int label);
[[nodiscard]] std::string testing_text(const TestingRun& run);
[[nodiscard]] nlohmann::json testing_json(const TestingRun& run);
[[nodiscard]] nlohmann::json testing_pairs_json(const TestingRun& run);

}  // namespace witness
