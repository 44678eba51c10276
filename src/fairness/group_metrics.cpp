#include "fairness/group_metrics.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <compare>
#include <cstdlib>
#include <map>

#include "core/error.h"
#include "model/evaluator.h"

namespace witness {
namespace {

template <typename Get>
std::optional<double> spread(const std::vector<GroupRow>& groups, Get get) {
  std::optional<double> lo, hi;
  for (const GroupRow& g : groups) {
    const std::optional<Rate>& r = get(g);
    if (g.unknown || g.small || !r || r->n == 0) continue;
    lo = lo ? std::min(*lo, r->value) : r->value;
    hi = hi ? std::max(*hi, r->value) : r->value;
  }
  if (!lo) return std::nullopt;
  return *hi - *lo;
}

// The data's true labels as the model's class indices, or why there are none.
std::vector<int> true_labels(const Schema& schema, const Dataset& rows, const Outcome& outcome, std::string& why) {
  if (!rows.has_labels()) {
    why = rows.unread.empty()
              ? "the data has no label column (name it with --label)"
              : fmt::format("no label column was named (--label) among the {} columns not read", rows.unread.size());
    return {};
  }
  // Read against the model's classes (--label), or the schema's label_classes when they name the
  // same classes; otherwise matched by name.
  const std::vector<std::string>& named =
      rows.label_column == schema.label() ? schema.label_classes() : outcome.classes;
  if (named.empty() || named == outcome.classes) return rows.labels;
  std::vector<int> truth;
  truth.reserve(rows.labels.size());
  for (const int l : rows.labels) {
    const std::string& name = named[static_cast<std::size_t>(l)];
    const auto it = std::find(outcome.classes.begin(), outcome.classes.end(), name);
    if (it == outcome.classes.end()) {
      why =
          fmt::format("the data's label '{}' is not a class of the model ({})", name, fmt::join(outcome.classes, ", "));
      return {};
    }
    truth.push_back(static_cast<int>(it - outcome.classes.begin()));
  }
  return truth;
}

struct Counts {
  long long rows = 0, favored = 0, positives = 0, true_pos = 0, negatives = 0, false_pos = 0, correct = 0;
};

// How a cell sorts: numbers (a feature's raw value, a text that reads as one) by value, before
// other text by its bytes.
struct CellKey {
  bool text = false;
  double number = 0.0;
  std::string chars;
  auto operator<=>(const CellKey&) const = default;
};

// A group column's cells, as written and as they sort.
struct ColumnCells {
  std::vector<std::string> shown;
  std::vector<CellKey> keys;
};

ColumnCells cells_of(const GroupColumn& column, const Schema& schema, const Dataset& rows) {
  ColumnCells out;
  const auto n = static_cast<std::size_t>(rows.rows());
  out.shown.reserve(n);
  out.keys.reserve(n);
  if (column.feature >= 0) {
    for (Eigen::Index i = 0; i < rows.rows(); ++i) {
      const double v = rows.raw(column.feature, i);
      out.shown.push_back(schema.display(column.feature, v));
      out.keys.push_back({false, v, {}});
    }
    return out;
  }
  const auto it = rows.kept.find(column.name);
  if (it == rows.kept.end())
    throw InputError(rows.source, "", fmt::format("no column '{}' to group the rows by", column.name));
  out.shown = it->second;
  for (const std::string& v : out.shown) {
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    const bool number = !v.empty() && end != nullptr && *end == '\0';
    out.keys.push_back(number ? CellKey{false, d, {}} : CellKey{true, 0.0, v});
  }
  return out;
}

// One table: the rows' categories over `columns` (indices into all columns), counted.
GroupTable table_of(const std::vector<GroupColumn>& all, const std::vector<std::size_t>& columns,
                    const std::vector<ColumnCells>& cells, const std::vector<int>& decided,
                    const std::vector<int>& truth, int favorable) {
  GroupTable t;
  for (const std::size_t c : columns) t.columns.push_back(all[c].name);
  // Unknown categories sort last; known ones in the order of their values.
  struct Category {
    std::vector<std::string> shown;
    Counts counts;
  };
  std::map<std::pair<bool, std::vector<CellKey>>, Category> by;
  for (std::size_t i = 0; i < decided.size(); ++i) {
    std::vector<CellKey> key;
    bool unknown = false;
    for (const std::size_t c : columns) {
      key.push_back(cells[c].keys[i]);
      unknown = unknown || cells[c].shown[i].empty();
    }
    Category& cat = by[{unknown, std::move(key)}];
    if (cat.shown.empty())
      for (const std::size_t c : columns) cat.shown.push_back(cells[c].shown[i]);
    Counts& k = cat.counts;
    const bool favored = decided[i] == favorable;
    ++k.rows;
    k.favored += favored ? 1 : 0;
    if (!truth.empty()) {
      k.correct += truth[i] == decided[i] ? 1 : 0;
      if (truth[i] == favorable) {
        ++k.positives;
        k.true_pos += favored ? 1 : 0;
      } else {
        ++k.negatives;
        k.false_pos += favored ? 1 : 0;
      }
    }
  }
  for (auto& [key, cat] : by) {
    GroupRow g;
    g.unknown = key.first;
    g.values = std::move(cat.shown);
    for (std::size_t j = 0; j < columns.size(); ++j)
      g.group += fmt::format("{}{}={}", j == 0 ? "" : ", ", t.columns[j],
                             g.values[j].empty() ? "unknown" : quoted_value(g.values[j]));
    const Counts& k = cat.counts;
    g.rows = k.rows;
    g.favorable = make_rate(k.favored, k.rows);
    if (!truth.empty()) {
      g.tpr = make_rate(k.true_pos, k.positives);
      g.fpr = make_rate(k.false_pos, k.negatives);
      g.accuracy = make_rate(k.correct, k.rows);
    }
    t.groups.push_back(std::move(g));
  }
  // Categories under 2% of the known rows are shown but left out of the ratios (LL144's rule), unless
  // every category is that small.
  long long known = 0;
  for (const GroupRow& g : t.groups) known += g.unknown ? 0 : g.rows;
  bool any_large = false;
  for (GroupRow& g : t.groups) {
    g.small = !g.unknown && static_cast<double>(g.rows) < 0.02 * static_cast<double>(known);
    any_large = any_large || (!g.unknown && !g.small);
  }
  if (!any_large)
    for (GroupRow& g : t.groups) g.small = false;
  for (const GroupRow& g : t.groups) t.small_rows += g.small ? g.rows : 0;
  double lo = 1.0, hi = -1.0;
  for (const GroupRow& g : t.groups) {
    if (g.unknown || g.small) continue;
    lo = std::min(lo, g.favorable.value);
    if (g.favorable.value > hi) {
      hi = g.favorable.value;
      t.most_favored = g.group;
    }
  }
  if (hi < 0) return t;  // only unknowns
  for (GroupRow& g : t.groups)
    if (!g.unknown) g.impact_ratio = hi > 0 ? g.favorable.value / hi : 1.0;
  t.parity_difference = hi - lo;
  t.impact_ratio_min = hi > 0 ? lo / hi : 1.0;
  if (!truth.empty()) {
    // The gaps between true and false positive rates leave out the same categories.
    t.tpr_difference = spread(t.groups, [](const GroupRow& g) -> const std::optional<Rate>& { return g.tpr; });
    t.fpr_difference = spread(t.groups, [](const GroupRow& g) -> const std::optional<Rate>& { return g.fpr; });
    if (t.tpr_difference || t.fpr_difference)
      t.equalized_odds_difference = std::max(t.tpr_difference.value_or(0.0), t.fpr_difference.value_or(0.0));
  }
  return t;
}

}  // namespace

std::vector<GroupColumn> group_columns(const Schema& schema, const std::vector<std::string>& names) {
  std::vector<GroupColumn> out;
  for (const std::string& n : names) {
    if (std::any_of(out.begin(), out.end(), [&](const GroupColumn& c) { return c.name == n; }))
      throw InputError(fmt::format("--groups: '{}' is named twice", n));
    out.push_back({n, schema.find_feature(n).value_or(-1)});
  }
  return out;
}

GroupMetrics group_metrics(const Model& model, const Schema& schema, const Dataset& rows,
                           const std::vector<GroupColumn>& columns, const Outcome& outcome) {
  GroupMetrics out;
  out.outcome = outcome;
  if (rows.rows() == 0 || columns.empty()) return out;
  const Evaluation e = evaluate(model, rows.model_inputs(schema));
  out.measured = true;
  out.rows = rows.rows();
  out.label_column = rows.label_column;
  const std::vector<int> truth = true_labels(schema, rows, outcome, out.why_no_truth);
  if (!truth.empty()) {
    long long correct = 0;
    for (std::size_t i = 0; i < truth.size(); ++i) correct += truth[i] == e.labels[i] ? 1 : 0;
    out.accuracy = make_rate(correct, static_cast<long long>(truth.size()));
  }
  std::vector<ColumnCells> cells;
  cells.reserve(columns.size());
  for (const GroupColumn& c : columns) cells.push_back(cells_of(c, schema, rows));
  for (std::size_t c = 0; c < columns.size(); ++c)
    out.tables.push_back(table_of(columns, {c}, cells, e.labels, truth, outcome.favorable));
  if (columns.size() > 1) {
    std::vector<std::size_t> all(columns.size());
    for (std::size_t c = 0; c < all.size(); ++c) all[c] = c;
    out.tables.push_back(table_of(columns, all, cells, e.labels, truth, outcome.favorable));
  }
  return out;
}

}  // namespace witness
