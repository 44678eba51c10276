// A whole run of fair, test or bias on a loaded model: the engine, then every form of its answer
// (the CLI's --json and text, the HTML report's envelope, the pairs as CSV). witness serve and the
// Python module run jobs through these, so their answers are the CLI's.
//
//   const witness::Model model = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   const witness::Schema schema = witness::load_schema_for(model, "benchmarks/fairify/adult.toml", "");
//   witness::Env env;
//   witness::EngineSettings settings;
//   const witness::FairnessProblem problem(model, schema, {"sex"});
//   witness::RunOutput out = witness::run_fair(problem, "auto", settings, env, "witness fair AC1.h5 ...");
//   std::string verdict = out.result["verdict"];    // "witness"
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/env.h"
#include "fairness/bias.h"
#include "fairness/blackbox.h"
#include "fairness/engine.h"
#include "fairness/oracle.h"
#include "query/query.h"

namespace witness {

struct RunOutput {
  nlohmann::json result;    // the CLI's --json document
  std::string text;         // the CLI's text output
  nlohmann::json report;    // the HTML report's envelope (null for queries)
  std::string pairs_csv;    // witness or discriminatory pairs (the CLI's --out columns; empty if none)
  std::string regions_csv;  // fair --quantify: the falsified and undecided regions (--regions-out)
};

// `command` is the CLI line that does the same, shown in the report.
RunOutput run_fair(const FairnessProblem& problem, const std::string& engine, const EngineSettings& settings, Env& env,
                   const std::string& command);

// Black-box testing through `oracle` (replayed on oracle.model() when it has one); `options` name
// the protected features. At most `max_csv_pairs` pairs go into pairs_csv.
RunOutput run_testing(LabelOracle& oracle, const Schema& schema, const std::vector<std::string>& protected_names,
                      TestOptions options, Env& env, const std::string& command, std::size_t max_csv_pairs);

// The Bias% estimate; options.rows set means drawn from those rows (`data` names them).
RunOutput run_bias(const Model& model, const Schema& schema, const std::vector<std::string>& protected_names,
                   const BiasOptions& options, Env& env, const std::string& command, const std::string& data = "");

// Answers queries in order, loading (compiling) each model and program once. `given` names where
// the model or program paths came from when not from the query files (e.g. "--model"), for
// messages. on_answer (if set) sees each answer as it comes. result = {"queries": [...]}.
RunOutput run_queries(const std::vector<Query>& queries, const QueryOptions& options, const std::string& given = "",
                      const std::function<void(const Query&, const QueryAnswer&)>& on_answer = {});

}  // namespace witness
