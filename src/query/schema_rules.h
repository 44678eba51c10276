// A schema's constraints (docs/schema.md, "Constraints") as a condition of the query language, so
// that a query's scenarios are people who can exist: derived features follow their sources, every
// rule holds. Each feature is read from the query input holding its raw value (codes for categories).
//
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/adult_constrained.toml");
//   std::vector<std::string> names;  // the input of each feature: the model's x0, x1, ...
//   for (int f = 0; f < schema.size(); ++f) names.push_back("x" + std::to_string(f));
//   std::string text = witness::schema_rules_condition(schema, names);
//   // "((x2 == 13 && x3 == 1) || ...) && (!(x6 == 0) || x8 == 1) && ..."
#pragma once

#include <string>
#include <vector>

#include "domain/schema.h"

namespace witness {

// `input_names[f]`: the query input of schema feature f (only those the constraints name are read).
// "" when the schema has no constraints.
[[nodiscard]] std::string schema_rules_condition(const Schema& schema, const std::vector<std::string>& input_names);

}  // namespace witness
