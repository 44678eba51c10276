// A Bias% estimate (witness bias) as text and JSON: one formatter for the CLI, the HTML report and
// witness serve.
//
//   const witness::Model model = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   const witness::Schema schema = witness::load_schema("benchmarks/fairify/adult.toml");
//   const witness::BiasEstimate b = witness::estimate_bias(model, schema, schema.protected_indices({"sex"}), {});
//   const witness::BiasRun run{.model = model, .schema = schema, .protected_names = {"sex"},
//                              .estimate = b, .seed = 1, .data = "", .seconds = 0.4};
//   std::string text = witness::bias_text(run);         // "Bias% of AC1 for sex: 1.234% (95% CI ...)"
//   nlohmann::json doc = witness::bias_json(run);       // what --json prints
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fairness/bias.h"

namespace witness {

struct BiasRun {
  const Model& model;
  const Schema& schema;
  std::vector<std::string> protected_names;
  const BiasEstimate& estimate;
  std::uint64_t seed = 0;
  std::string data;  // the CSV the inputs were drawn from; empty: uniform in the domain
  double seconds = 0.0;
};

[[nodiscard]] std::string bias_text(const BiasRun& run);
[[nodiscard]] nlohmann::json bias_json(const BiasRun& run);
// The example pair (if any) as the report's pairs.
[[nodiscard]] nlohmann::json bias_pairs_json(const BiasRun& run);

}  // namespace witness
