// Reads one constraint of a schema's `constraints` list (internal to the schema parser; the
// language is in docs/schema.md, "Constraints").
//
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/adult.toml");
//   witness::Constraints c;
//   witness::parse_constraint("relationship in {Husband} -> sex == Male", schema, "adult.toml", "line 9", c);
//   witness::parse_constraint("2 * age - hours-per-week >= 0", schema, "adult.toml", "line 10", c);
#pragma once

#include <string>

#include "domain/constraints.h"

namespace witness {

class Schema;

// Adds the constraint to `out`. Throws InputError(file, where, what) for a syntax error, an
// unknown feature or category, or a type error (a category in arithmetic, a real in a set).
void parse_constraint(const std::string& text, const Schema& schema, const std::string& file, const std::string& where,
                      Constraints& out);

}  // namespace witness
