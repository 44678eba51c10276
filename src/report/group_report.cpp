#include "report/group_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "domain/dataset.h"
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

std::string table_text(const GroupTable& t, bool truth) {
  std::ostringstream out;
  std::size_t width = 5;
  for (const GroupRow& r : t.groups) width = std::max(width, r.group.size());
  auto line = [&](const std::string& group, const std::string& rows_text, const std::string& rate,
                  const std::string& ratio, const std::string& tpr, const std::string& fpr) {
    std::string l = fmt::format("  {:<{}}  {:>7}  {:<30}  {:<12}", group, width, rows_text, rate, ratio);
    if (truth) l += fmt::format("  {:<30}  {}", tpr, fpr);
    l.erase(l.find_last_not_of(' ') + 1);
    out << l << "\n";
  };
  line(fmt::format("{}", fmt::join(t.columns, " x ")), "rows", "favourable rate", "impact ratio", "true positive rate",
       "false positive rate");
  for (const GroupRow& r : t.groups) {
    const std::string ratio = !r.impact_ratio ? std::string("-")
                              : r.small       ? fmt::format("({:.3f})", *r.impact_ratio)
                                              : fmt::format("{:.3f}", *r.impact_ratio);
    line(r.group, std::to_string(r.rows), rate_text(r.favorable), ratio, rate_text(r.tpr), rate_text(r.fpr));
  }
  if (!t.most_favored.empty()) {
    out << fmt::format("  most favoured {}; lowest impact ratio {:.3f}; parity difference {}", t.most_favored,
                       t.impact_ratio_min, percent(t.parity_difference));
    if (t.equalized_odds_difference)
      out << fmt::format("; equalized odds difference {}", percent(*t.equalized_odds_difference));
    out << "\n";
  }
  if (t.small_rows > 0)
    out << fmt::format(
        "  (ratios in parentheses: categories under 2% of the rows, {} rows in all, left out of the "
        "most favoured and the gaps, as NYC LL144 allows)\n",
        t.small_rows);
  return out.str();
}

const char* direction_name(FlipDirection d) {
  switch (d) {
    case FlipDirection::ToFavorable: return "to favourable";
    case FlipDirection::ToUnfavorable: return "to unfavourable";
    case FlipDirection::Between: return "between unfavourable classes";
  }
  return "";
}

// "with sex=Male" or "with race=White (12), race=Black (3)" for the combinations that turn a
// group's rows the given way.
std::string with_whom(const RowAudit& a, const std::vector<std::int64_t>& counts) {
  std::vector<std::string> parts;
  std::int64_t kinds = 0;
  for (const std::int64_t n : counts) kinds += n > 0 ? 1 : 0;
  for (std::size_t c = 0; c < counts.size(); ++c) {
    if (counts[c] == 0) continue;
    parts.push_back(kinds > 1 ? fmt::format("{} ({})", a.combo_names[c], counts[c]) : a.combo_names[c]);
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string score_text(double s) { return fmt::format("{:.4g}", s); }

}  // namespace

std::string group_metrics_text(const GroupMetrics& g) {
  if (!g.measured) return {};
  std::ostringstream out;
  const bool truth = g.why_no_truth.empty();
  out << fmt::format("groups ({} data rows; favourable rate = share decided {}; {}; 95% Wilson intervals):\n", g.rows,
                     g.outcome.name(),
                     truth ? fmt::format("true labels from column '{}'", g.label_column)
                           : fmt::format("no true/false positive rates: {}", g.why_no_truth));
  if (g.accuracy) out << fmt::format("  accuracy on the labelled rows: {}\n", rate_text(g.accuracy));
  for (std::size_t k = 0; k < g.tables.size(); ++k) out << (k == 0 ? "" : "\n") << table_text(g.tables[k], truth);
  return out.str();
}

nlohmann::json group_metrics_json(const GroupMetrics& g) {
  if (!g.measured) return nullptr;
  nlohmann::json tables = nlohmann::json::array();
  for (const GroupTable& t : g.tables) {
    nlohmann::json groups = nlohmann::json::array();
    for (const GroupRow& r : t.groups) {
      groups.push_back({{"group", r.group},
                        {"values", r.values},
                        {"unknown", r.unknown},
                        {"small", r.small},
                        {"rows", r.rows},
                        {"favorable_rate", rate_json(r.favorable)},
                        {"impact_ratio", optional_number(r.impact_ratio)},
                        {"true_positive_rate", rate_json(r.tpr)},
                        {"false_positive_rate", rate_json(r.fpr)},
                        {"accuracy", rate_json(r.accuracy)}});
    }
    tables.push_back({{"columns", t.columns},
                      {"groups", groups},
                      {"most_favored", t.most_favored},
                      {"parity_difference", t.parity_difference},
                      {"impact_ratio_min", t.impact_ratio_min},
                      {"small_rows", t.small_rows},
                      {"true_positive_rate_difference", optional_number(t.tpr_difference)},
                      {"false_positive_rate_difference", optional_number(t.fpr_difference)},
                      {"equalized_odds_difference", optional_number(t.equalized_odds_difference)}});
  }
  return {{"favorable", g.outcome.name()},
          {"favorable_assumed", g.outcome.assumed},
          {"rows", g.rows},
          {"label", g.label_column.empty() ? nlohmann::json() : nlohmann::json(g.label_column)},
          {"accuracy", rate_json(g.accuracy)},
          {"tables", tables},
          {"no_true_labels", g.why_no_truth.empty() ? nlohmann::json() : nlohmann::json(g.why_no_truth)}};
}

std::vector<std::string> harm_sentences(const RowAudit& a) {
  std::vector<std::string> out;
  const int fav = a.outcome.favorable;
  // The unfavourable decision, by name when there is one other class.
  const std::string unfav = a.outcome.classes.size() == 2 ? a.outcome.name(1 - fav) : "not " + a.outcome.name();
  for (const GroupHarm& g : a.groups) {
    const std::string rows_word = g.rows == 1 ? "row" : "rows";
    if (g.to_favorable.k > 0) {
      out.push_back(
          fmt::format("{} of {} {} with {} were decided {} and would have been decided {} with {}; {} the "
                      "other way",
                      g.to_favorable.k, g.rows, rows_word, g.group, unfav, a.outcome.name(),
                      with_whom(a, g.to_favorable_with), g.to_unfavorable.k));
    } else if (g.to_unfavorable.k > 0) {
      out.push_back(
          fmt::format("{} of {} {} with {} were decided {} and would have been decided {} with {}; 0 the "
                      "other way",
                      g.to_unfavorable.k, g.rows, rows_word, g.group, a.outcome.name(), unfav,
                      with_whom(a, g.to_unfavorable_with)));
    } else {
      out.push_back(fmt::format("0 of {} {} with {} would have been decided otherwise", g.rows, rows_word, g.group));
    }
  }
  return out;
}

std::string harm_text(const RowAudit& a, const Schema& schema, std::size_t max_rows) {
  (void)schema;
  if (!a.measured) return {};
  std::ostringstream out;
  out << "  who would have been decided otherwise (each row decided with every other protected value):\n";
  const std::vector<std::string> sentences = harm_sentences(a);
  std::int64_t calm_groups = 0, calm_rows = 0;
  for (std::size_t k = 0; k < a.groups.size(); ++k) {
    const GroupHarm& g = a.groups[k];
    if (g.to_favorable.k + g.to_unfavorable.k == 0 && a.groups.size() > 2) {
      ++calm_groups;
      calm_rows += g.rows;
      continue;
    }
    out << "    " << sentences[k] << "\n";
  }
  if (calm_groups > 0)
    out << fmt::format("    no row of the other {} groups ({} rows) would have been decided otherwise\n", calm_groups,
                       calm_rows);
  if (a.outside > 0)
    out << fmt::format("    {} rows break the schema's rules (no such person) and were not compared\n", a.outside);
  if (a.flips.empty()) return out.str();
  const std::size_t shown = std::min(max_rows, a.flips.size());
  out << fmt::format("  rows that flip ({}{}; score: {}):\n", shown < a.flips.size() ? "the first " : "",
                     shown < a.flips.size()
                         ? fmt::format("{} of {}; every one with --flips-out FILE.csv", shown, a.flips.size())
                         : fmt::format("{}", a.flips.size()),
                     a.score_name);
  for (std::size_t k = 0; k < shown; ++k) {
    const RowFlip& f = a.flips[k];
    std::vector<std::string> others;
    for (const RowFlip::Other& o : f.others)
      others.push_back(fmt::format("{} ({}) with {}", a.outcome.name(o.label), score_text(o.score),
                                   a.combo_names[static_cast<std::size_t>(o.combo)]));
    out << fmt::format("    {}  {}: {} ({}) -> {}\n", row_name(a.row_labels, f.row),
                       a.combo_names[static_cast<std::size_t>(f.combo)], a.outcome.name(f.label), score_text(f.score),
                       fmt::join(others, "; "));
  }
  return out.str();
}

nlohmann::json harm_json(const RowAudit& a, std::size_t max_rows) {
  if (!a.measured) return nullptr;
  nlohmann::json groups = nlohmann::json::array();
  const std::vector<std::string> sentences = harm_sentences(a);
  for (std::size_t k = 0; k < a.groups.size(); ++k) {
    const GroupHarm& g = a.groups[k];
    nlohmann::json fav = nlohmann::json::object(), unfav = nlohmann::json::object();
    for (std::size_t c = 0; c < a.combos.size(); ++c) {
      if (g.to_favorable_with[c] > 0) fav[a.combo_names[c]] = g.to_favorable_with[c];
      if (g.to_unfavorable_with[c] > 0) unfav[a.combo_names[c]] = g.to_unfavorable_with[c];
    }
    groups.push_back({{"group", g.group},
                      {"rows", g.rows},
                      {"to_favorable", rate_json(g.to_favorable)},
                      {"to_unfavorable", rate_json(g.to_unfavorable)},
                      {"to_favorable_with", fav},
                      {"to_unfavorable_with", unfav},
                      {"sentence", sentences[k]}});
  }
  nlohmann::json flips = nlohmann::json::array();
  for (std::size_t k = 0; k < a.flips.size() && k < max_rows; ++k) {
    const RowFlip& f = a.flips[k];
    nlohmann::json others = nlohmann::json::array();
    for (const RowFlip::Other& o : f.others)
      others.push_back({{"group", a.combo_names[static_cast<std::size_t>(o.combo)]},
                        {"decision", a.outcome.name(o.label)},
                        {"score", o.score}});
    flips.push_back({{"row", f.row + 1},
                     {"group", a.combo_names[static_cast<std::size_t>(f.combo)]},
                     {"decision", a.outcome.name(f.label)},
                     {"score", f.score},
                     {"direction", direction_name(f.direction)},
                     {"others", others}});
    if (!a.row_labels.empty()) flips.back()["index"] = a.row_labels[static_cast<std::size_t>(f.row)];
  }
  return {{"favorable", a.outcome.name()},
          {"score", a.score_name},
          {"rows", a.rows},
          {"outside_rules", a.outside},
          {"by_group", groups},
          {"flipped", a.flips.size()},
          {"flips", flips},
          {"flips_listed", flips.size()}};
}

std::string flips_csv(const RowAudit& a, const Schema& schema, const Eigen::MatrixXd& raw) {
  // A DataFrame's rows are also named by their index labels, in a column of their own.
  const bool labelled = !a.row_labels.empty();
  std::string out = labelled ? "row,index," : "row,";
  out += "group,decision,score,direction,other_group,other_decision,other_score";
  for (const Feature& f : schema.features()) out += "," + csv_field(f.name);
  out += "\n";
  for (const RowFlip& f : a.flips) {
    std::string values;
    for (int j = 0; j < schema.size(); ++j) values += "," + csv_field(schema.display(j, raw(j, f.row)));
    const std::string row =
        labelled ? fmt::format("{},{}", f.row + 1, csv_field(a.row_labels[static_cast<std::size_t>(f.row)]))
                 : fmt::format("{}", f.row + 1);
    for (const RowFlip::Other& o : f.others) {
      out +=
          fmt::format("{},{},{},{},{},{},{},{}{}\n", row, csv_field(a.combo_names[static_cast<std::size_t>(f.combo)]),
                      csv_field(a.outcome.name(f.label)), f.score, direction_name(f.direction),
                      csv_field(a.combo_names[static_cast<std::size_t>(o.combo)]), csv_field(a.outcome.name(o.label)),
                      o.score, values);
    }
  }
  return out;
}

}  // namespace witness
