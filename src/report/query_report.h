// A counterfactual query's answer (witness query) as text and JSON: one formatter for the CLI and
// witness serve.
//
//   std::vector<witness::Query> queries = witness::load_query_file("examples/soid/diabetes/weight.toml");
//   const witness::Model model = witness::load_model(queries[0].model_path);
//   witness::QueryAnswer a = witness::answer_query(model, queries[0]);
//   std::string text = witness::query_text(queries[0], a);     // "weight (might label == 1, float64): yes: ..."
//   nlohmann::json doc = witness::query_json(queries[0], a);   // one element of --json's "queries"
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "query/query.h"

namespace witness {

// "yes: a scenario shows the behavior", "no: ...", "unknown: ...".
[[nodiscard]] std::string query_verdict_text(const QueryAnswer& a);
[[nodiscard]] std::string query_text(const Query& q, const QueryAnswer& a);
[[nodiscard]] nlohmann::json query_json(const Query& q, const QueryAnswer& a);

}  // namespace witness
