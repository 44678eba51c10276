// Whether a fairness question can have a witness at all: some valid person whose twin (the same
// person with other protected values, proxies following) is valid too. Where the schema's rules
// leave no such pair (an empty domain, `sex == Male`), every engine's "verified" is vacuous, and
// the answer says so instead of certifying 100% of nobody.
//
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/adult_constrained.toml");
//   const std::vector<int> prot = {schema.feature_index("sex")};
//   witness::Twins t = witness::find_twins(schema, prot);          // Exist, NoPerson, NoTwins or Unknown
//   if (t == witness::Twins::NoTwins) std::cout << witness::vacuity_reason(t, schema, prot);
//   // "no two people in the domain differ only in sex"
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "domain/schema.h"

namespace witness {

enum class Twins : std::uint8_t {
  Exist,     // some valid person has a valid twin
  NoPerson,  // no point of the domain satisfies the schema's rules, whatever its protected values
  NoTwins,   // some may, but no two that differ only in the protected features (and their proxies)
  Unknown,   // the search gave up within its budget of boxes
};

// Branch and bound over boxes of the constrained non-protected features, deciding the rules for
// each protected combination exactly on boxes (Always / Never) and at points; at most `max_boxes`.
[[nodiscard]] Twins find_twins(const Schema& schema, const std::vector<int>& protected_features,
                               std::int64_t max_boxes = 200000);

// "no person in the domain satisfies the schema's rules" / "no two people in the domain differ only
// in sex" ("" for Exist and Unknown).
[[nodiscard]] std::string vacuity_reason(Twins twins, const Schema& schema, const std::vector<int>& protected_features);

}  // namespace witness
