#include "report/runs.h"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <utility>

#include "core/error.h"
#include "model/loaders.h"
#include "program/program.h"
#include "report/bias_report.h"
#include "report/fairness_report.h"
#include "report/html_report.h"
#include "report/query_report.h"
#include "report/rows.h"
#include "report/testing_report.h"

namespace witness {

RunOutput run_fair(const FairnessProblem& problem, const std::string& engine, const EngineSettings& settings, Env& env,
                   const std::string& command) {
  const FairnessResult r = run_fairness_engine(engine, problem, settings, env);
  const FairnessRun run{.problem = problem, .result = r, .quantify = settings.quantify, .counters = env.stats.all()};
  RunOutput out{.result = fairness_json(run),
                .text = fairness_text(run),
                .report = nullptr,
                .pairs_csv = witness_csv(run),
                .regions_csv = settings.quantify ? regions_csv(run) : ""};
  out.report = report_envelope("fair", command, out.text, out.result, schema_json(problem.schema()),
                               witness_pairs_json(run, kReportPairs));
  return out;
}

RunOutput run_testing(LabelOracle& oracle, const Schema& schema, const std::vector<std::string>& protected_names,
                      TestOptions options, Env& env, const std::string& command, std::size_t max_csv_pairs) {
  const Model* model = oracle.model();
  auto label_of = [&](int label) { return model ? label_name(*model, schema, label) : label_name(schema, label); };
  std::vector<DiscriminatoryPair> pairs;
  PairTable csv(schema, options.protected_features);
  std::size_t csv_rows = 0;
  auto on_pair = options.on_pair;
  options.on_pair = [&](const DiscriminatoryPair& p) {
    if (pairs.size() < kReportPairs) pairs.push_back(p);
    if (csv_rows++ < max_csv_pairs) csv.add(p.x, p.x_prime, label_of(p.label), label_of(p.label_prime));
    if (on_pair) on_pair(p);
  };
  const TestResult r = run_test(oracle, schema, options, env);
  const TestingRun run{.schema = schema,
                       .model = model,
                       .command = model ? "" : oracle.name(),
                       .protected_names = protected_names,
                       .protected_features = options.protected_features,
                       .budget = options.budget,
                       .seed = env.seed(),
                       .result = r,
                       .pairs = std::move(pairs),
                       .pairs_csv = "",
                       .pairs_written = 0};
  RunOutput out{.result = testing_json(run),
                .text = testing_text(run),
                .report = nullptr,
                .pairs_csv = csv.text(),
                .regions_csv = ""};
  out.report = report_envelope("test", command, out.text, out.result, schema_json(schema), testing_pairs_json(run));
  return out;
}

RunOutput run_bias(const Model& model, const Schema& schema, const std::vector<std::string>& protected_names,
                   const BiasOptions& options, Env& env, const std::string& command, const std::string& data) {
  const BiasEstimate b = estimate_bias(model, schema, schema.protected_indices(protected_names), options);
  const BiasRun run{.model = model,
                    .schema = schema,
                    .protected_names = protected_names,
                    .estimate = b,
                    .seed = options.seed,
                    .data = data,
                    .seconds = env.elapsed_seconds()};
  RunOutput out{
      .result = bias_json(run), .text = bias_text(run), .report = nullptr, .pairs_csv = "", .regions_csv = ""};
  out.report = report_envelope("bias", command, out.text, out.result, schema_json(schema), bias_pairs_json(run));
  return out;
}

RunOutput run_queries(const std::vector<Query>& queries, const QueryOptions& options, const std::string& given,
                      const std::function<void(const Query&, const QueryAnswer&)>& on_answer) {
  std::map<std::string, std::unique_ptr<Model>> models;
  std::map<std::pair<std::string, std::string>, std::unique_ptr<Program>> programs;
  RunOutput out{.result = nullptr, .text = "", .report = nullptr, .pairs_csv = "", .regions_csv = ""};
  nlohmann::json all = nlohmann::json::array();
  for (const Query& q : queries) {
    // Cancelled: the queries not yet asked are left out (each would compile or encode first).
    if (options.cancel != nullptr && options.cancel->load()) break;
    QueryAnswer a;
    if (q.program_path.empty()) {
      auto& m = models[q.model_path];
      if (!m) {
        try {
          m = std::make_unique<Model>(load_model(q.model_path));
        } catch (const InputError& e) {
          // Name the query file too: the model path came from it (or from `given`).
          throw InputError(fmt::format("{} (model of {})", e.what(), given.empty() ? q.model_where : given));
        }
      }
      a = answer_query(*m, q, options);
    } else {
      auto& p = programs[{q.program_path, q.function}];
      if (!p)
        p = std::make_unique<Program>(
            Program::compile(q.program_path, q.function, given.empty() ? q.model_where : given));
      a = answer_query(*p, q, options);
    }
    all.push_back(query_json(q, a));
    out.text += query_text(q, a);
    if (on_answer) on_answer(q, a);
  }
  out.result = {{"queries", all}};
  return out;
}

}  // namespace witness
