// Group metrics (fairness/group_metrics.h) and who is harmed in which direction
// (fairness/row_audit.h) as text, JSON and CSV, for the fair and bias answers that have data rows.
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/adult.toml");
//   witness::Dataset rows = witness::load_csv("benchmarks/fairify/data/adult.csv", schema);
//   witness::Outcome wanted = witness::resolve_outcome(model, schema, "");
//   witness::GroupMetrics g = witness::group_metrics(model, schema, rows, {{"sex", 8}}, wanted);
//   std::string table = witness::group_metrics_text(g);   // one table per column and intersection
//   const witness::FairnessProblem problem(model, schema, {"sex"});
//   witness::RowAudit a = witness::audit_rows(problem, rows.raw, wanted, "adult.csv");
//   std::string who = witness::harm_text(a, schema, 10);  // "9 of 403 rows with sex=Male were ..."
//   std::string csv = witness::flips_csv(a, schema, rows.raw);  // every flipped row, for --flips-out
#pragma once

#include <Eigen/Dense>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "domain/schema.h"
#include "fairness/group_metrics.h"
#include "fairness/row_audit.h"

namespace witness {

[[nodiscard]] std::string group_metrics_text(const GroupMetrics& g);
[[nodiscard]] nlohmann::json group_metrics_json(const GroupMetrics& g);

// One sentence per group and direction: "28 of 339 rows with afam=yes were decided deny and would
// have been decided approve with afam=no; 0 the other way".
[[nodiscard]] std::vector<std::string> harm_sentences(const RowAudit& a);
// The sentences, then the first `max_rows` flipped rows (row number, group, both decisions and
// scores).
[[nodiscard]] std::string harm_text(const RowAudit& a, const Schema& schema, std::size_t max_rows);
// {"favorable", "by_group": [...], "flips": [{row, group, decision, score, direction, others}]}.
[[nodiscard]] nlohmann::json harm_json(const RowAudit& a, std::size_t max_rows);
// Every flipped row: data row, group, decision, score, direction, the other group and its decision
// and score (one line per other group that decides otherwise), then the row's values as written.
[[nodiscard]] std::string flips_csv(const RowAudit& a, const Schema& schema, const Eigen::MatrixXd& raw);

}  // namespace witness
