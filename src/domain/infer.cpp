#include "domain/infer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "domain/csv.h"
#include "domain/dependencies.h"
#include "model/columns.h"
#include "model/model.h"

namespace witness {
namespace {

std::string toml_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          out += fmt::format("\\u{:04X}", static_cast<unsigned>(static_cast<unsigned char>(c)));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// A TOML float literal (an integral value gets ".0" so it reads back as a float).
std::string toml_real(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

// `key = [...]` with long lists wrapped, one line per ~100 characters.
std::string toml_string_array(const std::string& key, const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  std::size_t total = key.size() + 5;
  for (const std::string& s : items) {
    quoted.push_back(toml_string(s));
    total += quoted.back().size() + 2;
  }
  std::string out = key + " = [";
  if (total <= 100) {
    for (std::size_t i = 0; i < quoted.size(); ++i) out += (i == 0 ? "" : ", ") + quoted[i];
    return out + "]\n";
  }
  out += "\n";
  std::string line;
  for (const std::string& q : quoted) {
    if (!line.empty() && line.size() + q.size() + 3 > 100) {
      out += "  " + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + q + ",";
  }
  return out + "  " + line + "\n]\n";
}

struct Column {
  std::string name;
  bool numeric = true;
  bool integral = true;
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  std::vector<std::string_view> values;  // views into the reader's buffer, for the labels
  std::size_t present = 0;               // non-empty values
  std::string first_missing;             // "row R (line L)" of the first empty value
};

std::vector<std::string> distinct_sorted(const std::vector<std::string_view>& values) {
  std::set<std::string_view> set(values.begin(), values.end());
  set.erase(std::string_view());
  return {set.begin(), set.end()};
}

// Whether `s` is UTF-8 as TOML requires (no overlong forms, surrogates or code points past U+10FFFF).
bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    unsigned char lo = 0x80;
    unsigned char hi = 0xBF;
    if (b < 0x80) {
      ++i;
      continue;
    }
    if (b >= 0xC2 && b <= 0xDF) {
      n = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      n = 2;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      n = 3;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;  // cut short
    for (std::size_t k = 1; k <= n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if (c < (k == 1 ? lo : 0x80) || c > (k == 1 ? hi : 0xBF)) return false;
    }
    i += n + 1;
  }
  return true;
}

constexpr const char* kNotUtf8 =
    "not valid UTF-8, which a schema (TOML) must be: convert the file (e.g. iconv -f latin1 -t utf-8)";

// The header and every value of a CSV file, column by column.
struct Table {
  std::string source;
  std::vector<Column> cols;
  std::size_t rows = 0;
};

Table read_table(detail::CsvReader& rd) {
  const std::string& path = rd.source();
  std::vector<std::string_view> fields;
  if (!rd.next(fields)) throw InputError(path, "", "empty file: expected a header row naming the columns");
  double unused = 0;
  if (std::all_of(fields.begin(), fields.end(),
                  [&](std::string_view f) { return detail::parse_number(detail::trim(f), unused); })) {
    throw InputError(path, fmt::format("line {}", rd.line()),
                     "the first line looks like data: a header row naming the columns is required");
  }
  Table t{.source = path, .cols = std::vector<Column>(fields.size()), .rows = 0};
  std::set<std::string, std::less<>> seen;
  for (std::size_t c = 0; c < fields.size(); ++c) {
    t.cols[c].name = std::string(detail::trim(fields[c]));
    if (t.cols[c].name.empty()) {
      throw InputError(path, fmt::format("line {} (header)", rd.line()), fmt::format("column {} has no name", c + 1));
    }
    if (!valid_utf8(t.cols[c].name)) {
      throw InputError(path, fmt::format("line {} (header)", rd.line()), fmt::format("column {}: {}", c + 1, kNotUtf8));
    }
    if (!seen.insert(t.cols[c].name).second) {
      throw InputError(path, fmt::format("line {} (header)", rd.line()),
                       fmt::format("column '{}' appears twice", t.cols[c].name));
    }
  }
  while (rd.next(fields)) {
    ++t.rows;
    if (fields.size() != t.cols.size()) {
      throw InputError(path, fmt::format("row {} (line {})", t.rows, rd.line()),
                       fmt::format("{} fields, expected {} as in the header", fields.size(), t.cols.size()));
    }
    for (std::size_t c = 0; c < t.cols.size(); ++c) {
      Column& col = t.cols[c];
      const std::string_view v = detail::trim(fields[c]);
      col.values.push_back(v);  // labels are needed if the column turns out non-numeric
      if (v.empty()) {
        if (col.first_missing.empty()) col.first_missing = fmt::format("row {} (line {})", t.rows, rd.line());
        continue;
      }
      ++col.present;
      if (!valid_utf8(v)) {
        throw InputError(path, fmt::format("row {} (line {}), column '{}'", t.rows, rd.line(), col.name), kNotUtf8);
      }
      double x = 0;
      if (col.numeric && detail::parse_number(v, x)) {
        col.min = std::min(col.min, x);
        col.max = std::max(col.max, x);
        if (std::floor(x) != x || std::fabs(x) > 9007199254740992.0) col.integral = false;
      } else {
        col.numeric = false;
      }
    }
  }
  if (t.rows == 0) throw InputError(path, "", "no data rows to infer a schema from");
  return t;
}

std::optional<std::size_t> label_column(const Table& t, const std::optional<std::string>& label,
                                        const std::vector<RawColumn>& model_columns) {
  auto read_by_model = [&](const std::string& name) {
    return std::any_of(model_columns.begin(), model_columns.end(),
                       [&](const RawColumn& c) { return same_column(name, c.name); });
  };
  if (!label.has_value()) {
    // The last column, unless the model reads it.
    if (read_by_model(t.cols.back().name)) return std::nullopt;
    return t.cols.size() - 1;
  }
  if (label->empty()) return std::nullopt;
  for (std::size_t c = 0; c < t.cols.size(); ++c) {
    if (t.cols[c].name == *label) return c;
  }
  std::string names;
  for (const Column& col : t.cols) names += (names.empty() ? "" : ", ") + col.name;
  throw InputError(t.source, "header", fmt::format("no column '{}' to use as the label (columns: {})", *label, names));
}

std::string header_lines(const Table& t, const std::string& what) {
  std::string out;
  out += fmt::format("# Schema inferred by witness from {}{} ({} data rows).\n",
                     std::filesystem::path(t.source).filename().string(), what, t.rows);
  out += "# Review it: bounds are the data's min and max (widen them to the domain you mean to check),\n";
  if (what.empty()) {
    out += "# categorical codes follow the sorted labels (sklearn LabelEncoder order), and `protected`\n";
  } else {
    out += "# categories and encodings are the model's own (do not edit them), and `protected`\n";
  }
  out += "# must name the features whose change should not change the decision.\n";
  out += fmt::format("name = {}\n", toml_string(std::filesystem::path(t.source).stem().string()));
  return out;
}

std::string label_lines(const Table& t, std::optional<std::size_t> label_col, const std::vector<std::string>& classes,
                        bool guessed) {
  if (!label_col) return "# no label column\n";
  const Column& l = t.cols[*label_col];
  std::string out = guessed ? fmt::format(
                                  "label = {}  # the last column, taken as the true label: check it (--label "
                                  "names another; answers never guess it)\n",
                                  toml_string(l.name))
                            : fmt::format("label = {}\n", toml_string(l.name));
  if (!classes.empty()) return out + toml_string_array("label_classes", classes);
  if (!l.numeric) return out + toml_string_array("label_classes", distinct_sorted(l.values));
  if (!l.integral) {
    throw InputError(t.source, fmt::format("column '{}'", l.name),
                     "the label column holds non-integer numbers; name another label column, or none");
  }
  // As load_csv reads a label without label_classes: an integer class index below 1e9 in magnitude.
  if (l.present > 0 && (std::fabs(l.min) >= 1e9 || std::fabs(l.max) >= 1e9)) {
    throw InputError(t.source, fmt::format("column '{}'", l.name),
                     fmt::format("the label column holds {}, too large for a class index (below 1e9); name another "
                                 "label column, or none",
                                 std::fabs(l.min) >= 1e9 ? l.min : l.max));
  }
  return out;
}

std::string number_lines(const Column& col) {
  if (col.integral) {
    return fmt::format("kind = \"integer\"\nmin = {}\nmax = {}\n", static_cast<long long>(col.min),
                       static_cast<long long>(col.max));
  }
  return fmt::format("kind = \"real\"\nmin = {}\nmax = {}\n", toml_real(col.min), toml_real(col.max));
}

// A value of the TOML file for a number or a label given as text.
std::string toml_value(const std::string& text, bool numeric) {
  double v = 0;
  if (numeric && detail::parse_number(text, v)) return fmt::format("{}", v);
  return toml_string(text);
}

std::string normalisation_lines(const Normalisation& n) {
  // Shortest round-trip decimals: the file reads back as the same doubles.
  switch (n.form) {
    case Normalisation::Form::None: return {};
    case Normalisation::Form::ScaleOffset:
      return fmt::format("scale = {}\noffset = {}\n", toml_real(n.a), toml_real(n.b));
    case Normalisation::Form::MeanStd: return fmt::format("mean = {}\nstd = {}\n", toml_real(n.a), toml_real(n.b));
    case Normalisation::Form::CenterScale:
      return fmt::format("center = {}\nmultiply = {}\n", toml_real(n.a), toml_real(n.b));
  }
  return {};
}

// The dependencies and orders the data shows, commented out: the data cannot tell design from
// chance, nor a rule from a data-entry slip.
std::string constraint_lines(const std::vector<ProposedRule>& rules) {
  if (rules.empty()) return {};
  std::string out =
      "\n# The data's rows satisfy these rules (docs/schema.md, Constraints), every row unless a count says\n"
      "# otherwise. Keep the ones that hold by design, not by chance of the sample, by removing their '#':\n"
      "# [constraints]\n# rules = [\n";
  for (const ProposedRule& r : rules) {
    std::string note = r.one_to_one ? "  # one-to-one" : "";
    if (r.broken > 0) note = fmt::format("  # broken by {} of {} rows", r.broken, r.rows);
    out += fmt::format("#   '{}',{}\n", r.text, note);
  }
  return out + "# ]\n";
}

std::vector<ProposedRule> proposed_rules(const std::vector<DataColumn>& columns) {
  std::vector<ProposedRule> rules = dependency_rules(columns);
  for (ProposedRule& r : order_rules(columns)) rules.push_back(std::move(r));
  return rules;
}

// The schema of a model that carries its preprocessing: its columns, encodings and classes, with
// the data's ranges.
std::string model_schema(const Table& t, const std::optional<std::string>& label, const Model& model) {
  // The data column of each model column (by name, or by the name skl2onnx gives a graph input).
  std::vector<std::optional<std::size_t>> data_col;
  for (const RawColumn& rc : model.columns) {
    std::optional<std::size_t> found;
    for (std::size_t c = 0; c < t.cols.size() && !found; ++c) {
      if (t.cols[c].name == rc.name) found = c;
    }
    for (std::size_t c = 0; c < t.cols.size() && !found; ++c) {
      if (same_column(t.cols[c].name, rc.name)) found = c;
    }
    if (!found) throw InputError(t.source, "header", fmt::format("no column '{}', which the model reads", rc.name));
    data_col.push_back(found);
  }
  const std::optional<std::size_t> label_col = label_column(t, label, model.columns);
  std::string out = header_lines(t, fmt::format(" and the preprocessing of {}", model.source));
  out += label_lines(t, label_col, model.rule.class_labels, !label.has_value());
  std::vector<std::string> ignored;
  for (std::size_t c = 0; c < t.cols.size(); ++c) {
    const bool read = std::find(data_col.begin(), data_col.end(), std::optional<std::size_t>(c)) != data_col.end();
    if (!read && c != label_col) ignored.push_back(t.cols[c].name);
  }
  if (!ignored.empty()) out += "# columns of the data the model does not read\n" + toml_string_array("ignore", ignored);
  out += "protected = []\n";
  for (std::size_t k = 0; k < model.columns.size(); ++k) {
    const RawColumn& rc = model.columns[k];
    const Column& col = t.cols[*data_col[k]];
    const std::string where = fmt::format("column '{}'", col.name);
    out += fmt::format("\n[[features]]\nname = {}\n", toml_string(col.name));
    if (!rc.step.empty()) out += fmt::format("description = {}\n", toml_string("encoded by " + rc.step));
    if (!col.first_missing.empty() && rc.missing.empty()) {
      throw InputError(t.source, fmt::format("{}, {}", col.first_missing, where),
                       "empty value, but the model has no imputer for this column; drop or fill such rows first");
    }
    if (rc.categorical) {
      std::set<std::string_view> known(rc.categories.begin(), rc.categories.end());
      for (std::size_t r = 0; r < col.values.size(); ++r) {
        const std::string_view v = col.values[r];
        if (v.empty() || known.contains(v)) continue;
        throw InputError(t.source, fmt::format("row {}, {}", r + 1, where),
                         fmt::format("'{}' is not a category the model knows ({}); the model's encoder was fitted "
                                     "on other data",
                                     v, fmt::join(rc.categories, ", ")));
      }
      out += "kind = \"categorical\"\n" + toml_string_array("categories", rc.categories);
      if (rc.one_hot) out += "encoding = \"one-hot\"\n";
    } else {
      if (col.present == 0) throw InputError(t.source, where, "no values to take bounds from");
      if (!col.numeric) {
        throw InputError(t.source, where, "the model reads numbers here, but the data holds text");
      }
      Column bounded = col;
      double fill = 0;
      if (!rc.missing.empty() && !col.first_missing.empty() && detail::parse_number(rc.missing, fill)) {
        // Rows with missing values are read as the imputed value: it lies in the domain too.
        bounded.min = std::min(bounded.min, fill);
        bounded.max = std::max(bounded.max, fill);
        if (std::floor(fill) != fill) bounded.integral = false;
      }
      out += number_lines(bounded);
    }
    out += normalisation_lines(rc.norm);
    if (!rc.missing.empty()) out += fmt::format("missing = {}\n", toml_value(rc.missing, !rc.categorical));
  }
  std::vector<DataColumn> features;
  for (std::size_t k = 0; k < model.columns.size(); ++k) {
    const Column& col = t.cols[*data_col[k]];
    features.push_back({col.name, col.numeric && !model.columns[k].categorical, &col.values});
  }
  out += constraint_lines(proposed_rules(features));
  return out;
}

std::string data_schema(const Table& t, const std::optional<std::string>& label) {
  const std::optional<std::size_t> label_col = label_column(t, label, {});
  if (t.cols.size() == (label_col ? 1U : 0U)) {
    throw InputError(t.source, "header", "no feature columns (the only column is the label)");
  }
  for (const Column& col : t.cols) {
    if (!col.first_missing.empty()) {
      throw InputError(t.source, fmt::format("{}, column '{}'", col.first_missing, col.name),
                       "empty value: a schema has no missing values; drop or fill such rows first");
    }
  }
  std::string out = header_lines(t, "");
  out += label_lines(t, label_col, {}, !label.has_value());
  out += "protected = []\n";
  for (std::size_t c = 0; c < t.cols.size(); ++c) {
    if (label_col && c == *label_col) continue;
    const Column& col = t.cols[c];
    out += fmt::format("\n[[features]]\nname = {}\n", toml_string(col.name));
    if (!col.numeric) {
      out += "kind = \"categorical\"\n";
      out += toml_string_array("categories", distinct_sorted(col.values));
    } else {
      out += number_lines(col);
    }
  }
  std::vector<DataColumn> features;
  for (std::size_t c = 0; c < t.cols.size(); ++c) {
    if (!label_col || c != *label_col) features.push_back({t.cols[c].name, t.cols[c].numeric, &t.cols[c].values});
  }
  out += constraint_lines(proposed_rules(features));
  return out;
}

std::string infer(detail::CsvReader& rd, const std::optional<std::string>& label, const Model* model) {
  const Table t = read_table(rd);
  if (model != nullptr && !model->columns.empty()) return model_schema(t, label, *model);
  return data_schema(t, label);
}

}  // namespace

std::string infer_schema_toml(const std::string& csv_path, const std::optional<std::string>& label,
                              const Model* model) {
  detail::CsvReader rd = detail::CsvReader::open(csv_path);
  return infer(rd, label, model);
}

std::string infer_schema_toml_text(std::string csv_text, const std::string& source,
                                   const std::optional<std::string>& label, const Model* model) {
  detail::CsvReader rd(std::move(csv_text), source);
  return infer(rd, label, model);
}

}  // namespace witness
