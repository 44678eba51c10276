// Functional dependencies found in a data table, written as schema constraints for the user to
// keep or drop (`witness schema infer DATA.csv` prints them commented out).
//
//   std::vector<std::string_view> age = {"24", "30", "50"}, age_cat = {"Less than 25", "25 - 45", "Greater than 45"};
//   // (a real table has many rows per value: a source needs 5 rows per value on average)
//   std::vector<witness::DataColumn> cols = {{"age", true, &age}, {"age_cat", false, &age_cat}};
//   std::vector<witness::ProposedRule> rules = witness::dependency_rules(cols);
//   // rules[0].text: age_cat = bucket(age, [30, 50], ["Less than 25", "25 - 45", "Greater than 45"])
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace witness {

struct DataColumn {
  std::string name;
  bool numeric = false;                           // every value reads as a number
  const std::vector<std::string_view>* values{};  // one per row
};

struct ProposedRule {
  std::string text;         // a rule of the constraint language (docs/schema.md)
  bool one_to_one = false;  // the source also follows the target (education <-> education-num)
  std::size_t broken = 0;   // rows that break it (order rules may; dependencies never do)
  std::size_t rows = 0;     // rows it was checked on
};

// For each pair of columns where one determines the other on every row (and the source is no row
// identifier or chance: 2 to 1000 values, each seen on 5 rows on average), a derived-feature rule:
// `bucket` when a numeric source's sorted values fall into contiguous runs of the target's values,
// else `map` (sources of at most 64 values). A one-to-one pair is proposed once, in the direction
// that ends at a numeric column when one side is numeric. At most one rule per target (a bucket,
// else a one-to-one map, else the map from the fewest values), in column order.
[[nodiscard]] std::vector<ProposedRule> dependency_rules(const std::vector<DataColumn>& columns);

// For each pair of numeric columns, `a <= b` when it holds on all but at most 1% of the rows that
// have both values, and the columns' ranges overlap (else the bounds already say it): housing
// cost never above the total debt ratio, a start year never after an end year. Columns with one
// value, and tables of more than 64 numeric columns, give none.
[[nodiscard]] std::vector<ProposedRule> order_rules(const std::vector<DataColumn>& columns);

}  // namespace witness
