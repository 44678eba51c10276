#include "domain/dataset.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "domain/csv.h"

namespace witness {

std::string row_name(const std::vector<std::string>& labels, std::int64_t row) {
  if (row >= 0 && static_cast<std::size_t>(row) < labels.size())
    return "index " + quoted_value(labels[static_cast<std::size_t>(row)]);
  return fmt::format("row {}", row + 1);
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}
namespace {

constexpr int kLabelColumn = -1;
constexpr int kIgnoredColumn = -2;

// A header whose fields all read as numbers is a data row: the file has no header.
bool looks_like_data(const std::vector<std::string_view>& fields) {
  double unused = 0;
  return std::all_of(fields.begin(), fields.end(),
                     [&](std::string_view f) { return detail::parse_number(detail::trim(f), unused); });
}

// What each column of the header is: a feature (its index), the label column, or ignored (kept
// for the caller, or listed as not read).
struct ColumnPlan {
  std::vector<int> target;
  std::vector<std::string> names;
  std::vector<std::size_t> kept_columns;
  std::string label;
  bool has_label = false;
};

ColumnPlan plan_columns(const detail::CsvReader& rd, const std::vector<std::string_view>& fields, const Schema& schema,
                        const CsvReading& reading, Dataset& d) {
  const std::string& file = rd.source();
  // Column -> feature index (or the label column, a kept or an unread one).
  ColumnPlan p;
  p.target.resize(fields.size());
  p.names.resize(fields.size());
  auto& target = p.target;
  auto& names = p.names;
  std::vector<bool> present(static_cast<std::size_t>(schema.size()), false);
  std::map<std::string, std::size_t, std::less<>> header;
  for (std::size_t c = 0; c < fields.size(); ++c) {
    names[c] = std::string(detail::trim(fields[c]));
    if (!header.emplace(names[c], c).second) {
      throw InputError(file, fmt::format("line {} (header)", rd.line()),
                       fmt::format("column '{}' appears twice", names[c]));
    }
  }
  p.label = reading.label.value_or(schema.label());
  const std::string& label = p.label;
  if (reading.label && !reading.label->empty() && !header.contains(label)) {
    throw InputError(
        file, fmt::format("line {} (header)", rd.line()),
        fmt::format("no column '{}' to read the true labels from (columns: {})", label, fmt::join(names, ", ")));
  }
  // Looked up by name: a file may hold a million columns the schema ignores.
  const std::unordered_set<std::string_view> kept(reading.keep.begin(), reading.keep.end());
  std::unordered_map<std::string_view, int> feature_of;
  for (int i = 0; i < schema.size(); ++i) feature_of.emplace(schema.feature(i).name, i);
  for (std::size_t c = 0; c < fields.size(); ++c) {
    if (!label.empty() && names[c] == label) {
      if (feature_of.contains(names[c]))
        throw InputError(file, fmt::format("line {} (header)", rd.line()),
                         fmt::format("column '{}' is a model input; it cannot be the true label too", names[c]));
      target[c] = kLabelColumn;
      p.has_label = true;
      continue;
    }
    if (const auto it = feature_of.find(names[c]); it != feature_of.end()) {
      target[c] = it->second;
      present[static_cast<std::size_t>(it->second)] = true;
      continue;
    }
    target[c] = kIgnoredColumn;
    if (kept.contains(names[c])) {
      p.kept_columns.push_back(c);
    } else {
      d.unread.push_back(names[c]);
    }
  }
  std::vector<std::string> missing;
  for (int i = 0; i < schema.size(); ++i) {
    if (!present[static_cast<std::size_t>(i)]) missing.push_back("'" + schema.feature(i).name + "'");
  }
  if (!missing.empty()) {
    if (looks_like_data(fields)) {
      throw InputError(file, fmt::format("line {}", rd.line()),
                       "the first line looks like data: a header row naming the columns is required");
    }
    throw InputError(file, fmt::format("line {} (header)", rd.line()),
                     fmt::format("missing column{} {} (feature{} of schema '{}')", missing.size() > 1 ? "s" : "",
                                 fmt::join(missing, ", "), missing.size() > 1 ? "s" : "", schema.name()));
  }
  return p;
}

// A true label: a class name, or an integer class index (below the class count when names are known).
int label_value(std::string_view t, const std::map<std::string, int, std::less<>>& classes,
                const std::vector<std::string>& class_names, const detail::CsvReader& rd, std::size_t row,
                const std::string& column) {
  double v = 0;
  if (auto it = classes.find(t); it != classes.end()) return it->second;
  if (detail::parse_number(t, v) && std::floor(v) == v && std::fabs(v) < 1e9 &&
      (classes.empty() || (v >= 0 && v < static_cast<double>(classes.size()))))
    return static_cast<int>(v);
  std::string expected = "an integer class index";
  if (!classes.empty())
    expected = fmt::format("a class of the model ({}) or an integer class index", fmt::join(class_names, ", "));
  throw InputError(rd.source(), fmt::format("row {} (line {}), column '{}'", row, rd.line(), column),
                   fmt::format("expected {}, got '{}'", expected, t));
}

Dataset read(detail::CsvReader& rd, const Schema& schema, const CsvReading& reading) {
  const std::string& file = rd.source();
  std::vector<std::string_view> fields;
  if (!rd.next(fields)) throw InputError(file, "", "empty file: expected a header row naming the columns");
  Dataset d;
  const ColumnPlan plan = plan_columns(rd, fields, schema, reading, d);
  const std::vector<int>& target = plan.target;
  const std::vector<std::string>& names = plan.names;
  const std::vector<std::size_t>& kept_columns = plan.kept_columns;
  const std::string& label = plan.label;
  const std::vector<std::string>& class_names = !reading.label_classes.empty() ? reading.label_classes
                                                : label == schema.label()      ? schema.label_classes()
                                                                               : reading.label_classes;
  std::map<std::string, int, std::less<>> classes;
  for (std::size_t k = 0; k < class_names.size(); ++k) classes.emplace(class_names[k], static_cast<int>(k));
  std::vector<std::vector<std::string>*> kept_values;
  kept_values.reserve(kept_columns.size());
  for (const std::size_t c : kept_columns) kept_values.push_back(&d.kept[names[c]]);

  const auto width = static_cast<std::size_t>(schema.size());
  std::vector<double> values;
  std::vector<int> labels;
  // A guess from the header's length avoids most regrowth on large files.
  values.reserve(rd.text_size() / std::max<std::size_t>(fields.size() * 2, 1) * width);
  std::size_t row = 0;
  while (rd.next(fields)) {
    ++row;
    if (fields.size() != names.size()) {
      throw InputError(file, fmt::format("row {} (line {})", row, rd.line()),
                       fmt::format("{} field{}, expected {} as in the header", fields.size(),
                                   fields.size() == 1 ? "" : "s", names.size()));
    }
    const std::size_t base = values.size();
    values.resize(base + width);
    for (std::size_t k = 0; k < kept_columns.size(); ++k)
      kept_values[k]->emplace_back(detail::trim(fields[kept_columns[k]]));
    for (std::size_t c = 0; c < fields.size(); ++c) {
      if (target[c] == kIgnoredColumn) continue;
      if (target[c] == kLabelColumn) {
        labels.push_back(label_value(detail::trim(fields[c]), classes, class_names, rd, row, names[c]));
        continue;
      }
      double v = 0;
      std::string err = schema.try_parse_value(target[c], fields[c], v);
      if (!err.empty()) {
        throw InputError(file, fmt::format("row {} (line {}), column '{}'", row, rd.line(), names[c]), err);
      }
      values[base + static_cast<std::size_t>(target[c])] = v;
    }
  }

  d.source = file;
  d.raw = Eigen::Map<const Eigen::MatrixXd>(values.data(), static_cast<Eigen::Index>(width),
                                            static_cast<Eigen::Index>(row));
  if (plan.has_label) {
    d.labels = std::move(labels);
    d.label_column = label;
  }
  return d;
}

}  // namespace

Eigen::MatrixXd Dataset::model_inputs(const Schema& schema) const {
  if (raw.rows() != schema.size()) {
    throw InputError(
        source, "",
        fmt::format("the data has {} features per row, schema '{}' has {}", raw.rows(), schema.name(), schema.size()));
  }
  return schema.to_model_columns(raw);
}

Dataset load_csv(const std::string& path, const Schema& schema, const CsvReading& reading) {
  detail::CsvReader rd = detail::CsvReader::open(path);
  return read(rd, schema, reading);
}

Dataset parse_csv(std::string text, const Schema& schema, const std::string& source, const CsvReading& reading) {
  detail::CsvReader rd(std::move(text), source);
  return read(rd, schema, reading);
}

}  // namespace witness
