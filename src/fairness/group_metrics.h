// Group metrics on data rows, the auditor's first table (as Fairlearn's MetricFrame and AIF360
// give it): per group of protected values present in the data, the rows, the selection rate (the
// share labelled with the positive class) and, when the rows carry true labels, the true and false
// positive rates, each with a 95% Wilson interval; then the gaps between groups.
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/adult.toml");
//   witness::Dataset rows = witness::load_csv("benchmarks/fairify/data/adult.csv", schema);
//   witness::GroupMetrics g = witness::group_metrics(model, schema, {schema.feature_index("sex")}, rows);
//   double gap = g.parity_difference;          // max - min selection rate over the groups
//   const witness::GroupRow& first = g.groups.front();   // first.group == "sex=Female"
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "domain/dataset.h"
#include "domain/schema.h"
#include "model/model.h"

namespace witness {

// A share k / n with its 95% Wilson interval; n == 0 means undefined (no rows).
struct Rate {
  long long k = 0, n = 0;
  double value = 0.0, lo = 0.0, hi = 0.0;
};

struct GroupRow {
  std::string group;           // "sex=Female, race=Black"
  std::vector<double> values;  // raw values of the protected features
  long long rows = 0;
  Rate selection;                // predicted positive
  std::optional<Rate> tpr, fpr;  // with true labels: among actual positives / negatives
  std::optional<Rate> accuracy;  // with true labels
};

struct GroupMetrics {
  bool measured = false;
  std::string positive;            // the positive class, by name
  std::string why_no_truth;        // when true-label rates are missing, why ("" when they are there)
  std::vector<GroupRow> groups;    // groups with at least one row, in the order of their values
  double parity_difference = 0.0;  // max - min selection rate (demographic parity difference)
  double parity_ratio = 1.0;       // min / max selection rate (disparate impact ratio; 1 if max is 0)
  std::optional<double> tpr_difference, fpr_difference;  // max - min over groups with such rows
  std::optional<double> equalized_odds_difference;       // the larger of the two
};

// The positive class is the second class (index 1) of a binary model, or the one named; InputError
// for an unknown name. True labels come from the data's label column, matched to the model's
// classes by name (or by index when neither names them).
[[nodiscard]] GroupMetrics group_metrics(const Model& model, const Schema& schema,
                                         const std::vector<int>& protected_features, const Dataset& rows,
                                         const std::string& positive = "");

}  // namespace witness
