#include "domain/digest.h"

#include "core/sha256.h"

namespace witness {

std::string schema_digest(const Schema& schema) {
  Sha256 h;
  h.add_field("witness schema v1");
  h.add_integer(schema.size());
  for (const Feature& f : schema.features()) {
    h.add_field(f.name);
    h.add_integer(static_cast<std::int64_t>(f.kind));
    h.add_number(f.min);
    h.add_number(f.max);
    h.add_integer(static_cast<std::int64_t>(f.categories.size()));
    for (const std::string& c : f.categories) h.add_field(c);
    h.add_integer(static_cast<std::int64_t>(f.norm.form));
    h.add_number(f.norm.a);
    h.add_number(f.norm.b);
    h.add_integer(f.one_hot ? 1 : 0);
  }
  // The rules by what they say: derivations field by field, validity rules by their text (the
  // parsed form follows from it and the features).
  const Constraints& c = schema.constraints();
  h.add_integer(static_cast<std::int64_t>(c.derived().size()));
  for (const DerivedFeature& d : c.derived()) {
    h.add_integer(d.target);
    h.add_integer(d.source);
    h.add_integer(static_cast<std::int64_t>(d.kind));
    for (const std::vector<double>* v : {&d.edges, &d.values}) {
      h.add_integer(static_cast<std::int64_t>(v->size()));
      for (double x : *v) h.add_number(x);
    }
    h.add_integer(static_cast<std::int64_t>(d.table.size()));
    for (const auto& [from, to] : d.table) h.add_number(from), h.add_number(to);
  }
  h.add_integer(static_cast<std::int64_t>(c.rules().size()));
  for (const ValidityRule& r : c.rules()) h.add_field(r.text);
  return h.hex();
}

}  // namespace witness
