#include "report/group_report.h"

#include <fmt/format.h>

#include <sstream>

#include "report/rows.h"

namespace witness {
namespace {

std::string rate_text(const std::optional<Rate>& r) {
  if (!r || r->n == 0) return "-";
  return fmt::format("{} [{}, {}]", percent(r->value), percent(r->lo), percent(r->hi));
}

nlohmann::json rate_json(const std::optional<Rate>& r) {
  if (!r) return nullptr;
  if (r->n == 0) return {{"k", 0}, {"n", 0}, {"rate", nullptr}, {"ci95", nullptr}};
  return {{"k", r->k}, {"n", r->n}, {"rate", r->value}, {"ci95", {r->lo, r->hi}}};
}

nlohmann::json optional_number(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

}  // namespace

std::string group_metrics_text(const GroupMetrics& g) {
  if (!g.measured) return {};
  long long rows = 0;
  for (const GroupRow& r : g.groups) rows += r.rows;
  std::ostringstream out;
  out << fmt::format("groups ({} data rows; positive class {}; rates with 95% intervals):\n", rows, g.positive);
  std::size_t width = 5;
  for (const GroupRow& r : g.groups) width = std::max(width, r.group.size());
  const bool truth = g.why_no_truth.empty();
  auto line = [&](const std::string& group, const std::string& rows_text, const std::string& selection,
                  const std::string& tpr, const std::string& fpr) {
    std::string l = fmt::format("  {:<{}}  {:>7}  {:<30}", group, width, rows_text, selection);
    if (truth) l += fmt::format("  {:<30}  {}", tpr, fpr);
    l.erase(l.find_last_not_of(' ') + 1);
    out << l << "\n";
  };
  line("group", "rows", "selection rate", "true positive rate", "false positive rate");
  for (const GroupRow& r : g.groups)
    line(r.group, std::to_string(r.rows), rate_text(r.selection), rate_text(r.tpr), rate_text(r.fpr));
  out << fmt::format("  demographic parity difference {}, ratio {:.3f}", percent(g.parity_difference), g.parity_ratio);
  if (g.equalized_odds_difference)
    out << fmt::format("; equalized odds difference {}", percent(*g.equalized_odds_difference));
  out << "\n";
  if (!truth) out << fmt::format("  (no true/false positive rates: {})\n", g.why_no_truth);
  return out.str();
}

nlohmann::json group_metrics_json(const GroupMetrics& g) {
  if (!g.measured) return nullptr;
  nlohmann::json groups = nlohmann::json::array();
  for (const GroupRow& r : g.groups) {
    groups.push_back({{"group", r.group},
                      {"rows", r.rows},
                      {"selection_rate", rate_json(r.selection)},
                      {"true_positive_rate", rate_json(r.tpr)},
                      {"false_positive_rate", rate_json(r.fpr)},
                      {"accuracy", rate_json(r.accuracy)}});
  }
  return {{"positive", g.positive},
          {"groups", groups},
          {"demographic_parity_difference", g.parity_difference},
          {"demographic_parity_ratio", g.parity_ratio},
          {"true_positive_rate_difference", optional_number(g.tpr_difference)},
          {"false_positive_rate_difference", optional_number(g.fpr_difference)},
          {"equalized_odds_difference", optional_number(g.equalized_odds_difference)},
          {"no_true_labels", g.why_no_truth.empty() ? nlohmann::json() : nlohmann::json(g.why_no_truth)}};
}

}  // namespace witness
