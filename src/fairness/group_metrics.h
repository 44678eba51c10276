// Group metrics on data rows, the auditor's table (as Fairlearn's MetricFrame, Aequitas and an NYC
// Local Law 144 bias audit give it): per category of each group column and per intersection of
// them, the rows (unknowns counted apart), the favourable rate, the impact ratio against the most
// favoured category and, when the rows carry true labels, the true and false positive rates, each
// rate with a 95% Wilson interval; then the gaps between the categories. Group columns may be
// features or columns of the data the model does not read.
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/adult.toml");
//   witness::Dataset rows = witness::load_csv("benchmarks/fairify/data/adult.csv", schema);
//   witness::Outcome wanted = witness::resolve_outcome(model, schema, "");
//   witness::GroupMetrics g = witness::group_metrics(model, schema, rows, {{"sex", 8}, {"race", 7}}, wanted);
//   const witness::GroupTable& by_sex = g.tables[0];      // then race, then sex x race
//   double ratio = by_sex.impact_ratio_min;               // least favoured rate / most favoured rate
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "domain/dataset.h"
#include "domain/schema.h"
#include "fairness/outcome.h"
#include "model/model.h"

namespace witness {

// A column that splits rows into groups: a feature of the schema (`feature` >= 0: its raw values,
// shown as the schema shows them) or a column the data kept as text (Dataset::kept; an empty
// cell is unknown).
struct GroupColumn {
  std::string name;
  int feature = -1;
};

struct GroupRow {
  std::string group;                // "sex=Female, race=Black"
  std::vector<std::string> values;  // one per column, as written ("" for unknown)
  bool unknown = false;             // some column's value is missing: counted, never compared
  bool small = false;               // under 2% of the known rows: shown, left out of the ratios (as LL144 allows)
  long long rows = 0;
  Rate favorable;                      // decided favourably
  std::optional<double> impact_ratio;  // favourable rate / the most favoured category's (known groups)
  std::optional<Rate> tpr, fpr;        // with true labels: among actual favourables / unfavourables
  std::optional<Rate> accuracy;        // with true labels
};

struct GroupTable {
  std::vector<std::string> columns;  // one column, or several for their intersection
  std::vector<GroupRow> groups;      // categories in the order of their values, unknowns last
  std::string most_favored;          // the category with the highest favourable rate (known, not small)
  double parity_difference = 0.0;    // max - min favourable rate over known categories that are not small
  double impact_ratio_min = 1.0;     // min / max favourable rate over the same (1 if max is 0)
  long long small_rows = 0;          // rows of the small categories
  std::optional<double> tpr_difference, fpr_difference;  // max - min over categories with such rows
  std::optional<double> equalized_odds_difference;       // the larger of the two
};

struct GroupMetrics {
  bool measured = false;
  Outcome outcome;                 // the favourable class the rates count
  std::string label_column;        // where the true labels came from ("" none)
  std::string why_no_truth;        // when true-label rates are missing, why ("" when they are there)
  std::vector<GroupTable> tables;  // each column alone, then (with two or more) all of them crossed
  long long rows = 0;
  std::optional<Rate> accuracy;  // with true labels: over every row
};

// True labels come from the data's label column, matched to the model's classes by name (or by
// index when neither names them).
[[nodiscard]] GroupMetrics group_metrics(const Model& model, const Schema& schema, const Dataset& rows,
                                         const std::vector<GroupColumn>& columns, const Outcome& outcome);

// The group columns named (features of the schema or columns the data kept), for group_metrics.
[[nodiscard]] std::vector<GroupColumn> group_columns(const Schema& schema, const std::vector<std::string>& names);

}  // namespace witness
