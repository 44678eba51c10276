// A fairness verdict (witness fair) as text, JSON and CSV: one formatter for the CLI, the HTML
// report and witness serve.
//
//   const witness::Model model = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   const witness::Schema schema = witness::load_schema("benchmarks/fairify/adult.toml");
//   const witness::FairnessProblem problem(model, schema, {"sex"});
//   witness::Env env;
//   const witness::FairnessResult r = witness::run_fairness_engine("auto", problem, {}, env);
//   const witness::FairnessRun run{.problem = problem, .result = r, .quantify = false, .counters = {}};
//   std::string text = witness::fairness_text(run);                 // "witness: AC1 treats these ..."
//   nlohmann::json doc = witness::fairness_json(run);               // what --json prints
//   std::string csv = witness::witness_csv(run);                     // the pairs, one CSV row each
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "fairness/engine.h"
#include "fairness/row_audit.h"

namespace witness {

struct FairnessRun {
  const FairnessProblem& problem;  // the model, the schema and the protected features
  const FairnessResult& result;
  bool quantify = false;                   // regions and per-feature shares go into the JSON
  std::map<std::string, double> counters;  // the run's statistics (env.stats)
  const RowAudit* audit = nullptr;         // with data rows: who flips, in which direction
  std::size_t flips_shown = 20;            // flipped rows listed in the text (the JSON: up to 100,000)
};

[[nodiscard]] std::string fairness_text(const FairnessRun& run);
[[nodiscard]] nlohmann::json fairness_json(const FairnessRun& run);
// The witness pairs, as named rows with labels (at most `limit`), for the report.
[[nodiscard]] nlohmann::json witness_pairs_json(const FairnessRun& run, std::size_t limit);
// The witness pairs as CSV text (PairCsv's columns).
[[nodiscard]] std::string witness_csv(const FairnessRun& run);
// --quantify: the falsified and undecided regions, one CSV row each (rule, shares, ranges).
[[nodiscard]] std::string regions_csv(const FairnessRun& run);

}  // namespace witness
