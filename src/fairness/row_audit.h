// Who in the data is harmed, in which direction: every row decided with its own protected values
// and with every other combination that makes a person who can exist (derived proxies follow the
// protected values; ReLU networks are decided in exact arithmetic where double rounding could
// cross the threshold). A row flips when some other combination changes its decision; it flips
// towards the favourable outcome (harmed: it would have been favoured had it been in another
// group) or away from it (advantaged by its group).
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/german/GC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/german.toml");
//   witness::Dataset rows = witness::load_csv("benchmarks/fairify/data/german.csv", schema);
//   witness::Outcome wanted = witness::resolve_outcome(model, schema, "");
//   const witness::FairnessProblem problem(model, schema, {"age"});
//   witness::RowAudit a = witness::audit_rows(problem, rows.raw, wanted);
//   long long harmed = a.groups[0].to_favorable.k;          // rows of the first age group denied by it
//   const witness::RowFlip& first = a.flips.front();        // the lowest row number that flips
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <vector>

#include "domain/schema.h"
#include "fairness/outcome.h"
#include "fairness/problem.h"
#include "fairness/verdict.h"
#include "model/model.h"

namespace witness {

enum class FlipDirection : std::uint8_t {
  ToFavorable,    // decided unfavourably; another group's values would have been favoured
  ToUnfavorable,  // decided favourably; another group's values would not have been
  Between,        // between two unfavourable classes (more than two classes)
};

struct RowFlip {
  std::int64_t row = 0;  // 0-based column of the data (data row row + 1)
  int combo = 0;         // the row's own protected combination
  int label = 0;         // its decision, and the score the model gave the favourable class
  double score = 0.0;
  FlipDirection direction = FlipDirection::ToFavorable;
  struct Other {
    int combo = 0, label = 0;
    double score = 0.0;
  };
  std::vector<Other> others;  // every valid combination that decides otherwise, in combination order
};

// Rows of one protected group (one combination of protected values present in the data).
struct GroupHarm {
  int combo = 0;
  std::string group;  // "sex=Female"
  std::int64_t rows = 0;
  Rate to_favorable;    // rows decided unfavourably that another group's values would have favoured
  Rate to_unfavorable;  // rows decided favourably that another group's values would not have
  // Per other combination: how many of the group's rows it would have turned favourable /
  // unfavourable ("with sex=Male").
  std::vector<std::int64_t> to_favorable_with, to_unfavorable_with;
};

struct RowAudit {
  bool measured = false;
  std::string source;                   // how answers name the rows
  std::vector<std::string> row_labels;  // and each row, when not by number (Dataset::row_labels)
  std::int64_t rows = 0;
  std::int64_t outside = 0;  // rows that break the schema's rules: no person, not compared
  Outcome outcome;
  std::vector<int> protected_features;
  std::vector<Eigen::VectorXd> combos;   // the protected combinations
  std::vector<std::string> combo_names;  // "sex=Female"
  std::vector<RowFlip> flips;            // rows that flip, by row number
  std::vector<GroupHarm> groups;         // groups present in the data, in combination order
  std::string score_name;                // what score is: "output for class >50K"
};

[[nodiscard]] RowAudit audit_rows(const FairnessProblem& problem, const Eigen::MatrixXd& raw, const Outcome& outcome,
                                  const std::string& source = "");

// The share of rows that flip, as the answer's `data` reports it.
[[nodiscard]] DataShare data_share(const RowAudit& audit);

// The first `max` flipping rows as witness pairs (each replayed on the model from the raw values;
// the twin is the first other combination that decides otherwise), in row order. Adds the
// evaluations to stats.tests and failed replays to stats.rejected.
[[nodiscard]] std::vector<WitnessPair> row_witnesses(const RowAudit& audit, const FairnessProblem& problem,
                                                     const Eigen::MatrixXd& raw, int max, SearchStats& stats);

}  // namespace witness
