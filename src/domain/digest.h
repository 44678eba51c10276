// The content hash of a schema as a question reads it: each feature's kind, bounds (the active
// box's), categories and encoding, and every derivation and validity rule. Saved searches name
// the schema by it, so that a state saved under other bounds or rules is never continued.
//
//   witness::Schema s = witness::load_schema("benchmarks/fairify/adult_constrained.toml");
//   std::string h = witness::schema_digest(s);   // 64 hex digits of SHA-256
//   witness::Schema other = s.with_box("fairify");
//   bool differs = witness::schema_digest(other) != h;  // when the box changes a bound
#pragma once

#include <string>

#include "domain/schema.h"

namespace witness {

[[nodiscard]] std::string schema_digest(const Schema& schema);

}  // namespace witness
