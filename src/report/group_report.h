// Group metrics on data rows (fairness/group_metrics.h) as text and JSON, for the fair and bias
// answers that have data rows.
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/adult.toml");
//   witness::Dataset rows = witness::load_csv("benchmarks/fairify/data/adult.csv", schema);
//   witness::GroupMetrics g = witness::group_metrics(model, schema, {schema.feature_index("sex")}, rows);
//   std::string table = witness::group_metrics_text(g);   // "groups (45222 data rows, positive: 1): ..."
//   nlohmann::json doc = witness::group_metrics_json(g);  // {"positive": "1", "groups": [...], ...}
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "fairness/group_metrics.h"

namespace witness {

[[nodiscard]] std::string group_metrics_text(const GroupMetrics& g);
[[nodiscard]] nlohmann::json group_metrics_json(const GroupMetrics& g);

}  // namespace witness
