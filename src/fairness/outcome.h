// The outcome a person wants, and shares of rows with their intervals: what every answer about
// data rows states its rates, ratios and harms in.
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/adult.toml");
//   witness::Outcome o = witness::resolve_outcome(model, schema, "");   // the second class, assumed
//   std::string wanted = o.name();                                      // o.assumed is true
//   witness::Rate r = witness::make_rate(28, 339);                      // 8.26% [5.78%, 11.7%]
#pragma once

#include <string>
#include <vector>

#include "domain/schema.h"
#include "model/model.h"

namespace witness {

// A share k / n with its 95% Wilson interval; n == 0 means undefined (no rows).
struct Rate {
  long long k = 0, n = 0;
  double value = 0.0, lo = 0.0, hi = 0.0;
};
[[nodiscard]] Rate make_rate(long long k, long long n);

struct Outcome {
  std::vector<std::string> classes;  // the model's class names (its own, the schema's, or "0", "1", ...)
  int favorable = 1;                 // index into classes
  bool assumed = true;               // not named by the user (--favorable): the second class was taken

  [[nodiscard]] const std::string& name() const { return classes[static_cast<std::size_t>(favorable)]; }
  [[nodiscard]] const std::string& name(int label) const;  // a class's name ("?" outside the classes)
  // "favourable outcome: >50K (assumed: the second class; name it with --favorable)" or
  // "favourable outcome: >50K": said once in every answer about rows.
  [[nodiscard]] std::string sentence() const;
};

// The class named `favorable`, or the second class (index 1) of the model when it is "" (assumed).
// InputError naming --favorable and the classes for a name that is not a class.
[[nodiscard]] Outcome resolve_outcome(const Model& model, const Schema& schema, const std::string& favorable);

}  // namespace witness
