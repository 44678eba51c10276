#include "domain/infer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "domain/csv.h"

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
};

std::vector<std::string> distinct_sorted(const std::vector<std::string_view>& values) {
  std::set<std::string_view> set(values.begin(), values.end());
  return {set.begin(), set.end()};
}

}  // namespace

std::string infer_schema_toml(const std::string& csv_path, std::optional<std::string> label) {
  detail::CsvReader rd = detail::CsvReader::open(csv_path);
  std::vector<std::string_view> fields;
  if (!rd.next(fields)) throw InputError(csv_path, "", "empty file: expected a header row naming the columns");
  double unused = 0;
  if (std::all_of(fields.begin(), fields.end(),
                  [&](std::string_view f) { return detail::parse_number(detail::trim(f), unused); })) {
    throw InputError(csv_path, fmt::format("line {}", rd.line()),
                     "the first line looks like data: a header row naming the columns is required");
  }
  std::vector<Column> cols(fields.size());
  std::set<std::string, std::less<>> seen;
  for (std::size_t c = 0; c < fields.size(); ++c) {
    cols[c].name = std::string(detail::trim(fields[c]));
    if (cols[c].name.empty()) {
      throw InputError(csv_path, fmt::format("line {} (header)", rd.line()),
                       fmt::format("column {} has no name", c + 1));
    }
    if (!seen.insert(cols[c].name).second) {
      throw InputError(csv_path, fmt::format("line {} (header)", rd.line()),
                       fmt::format("column '{}' appears twice", cols[c].name));
    }
  }
  std::optional<std::size_t> label_col;
  if (!label.has_value()) {
    label_col = cols.size() - 1;
  } else if (!label->empty()) {
    for (std::size_t c = 0; c < cols.size(); ++c) {
      if (cols[c].name == *label) label_col = c;
    }
    if (!label_col) {
      std::string names;
      for (const Column& col : cols) names += (names.empty() ? "" : ", ") + col.name;
      throw InputError(csv_path, "header",
                       fmt::format("no column '{}' to use as the label (columns: {})", *label, names));
    }
  }
  if (cols.size() == (label_col ? 1U : 0U)) {
    throw InputError(csv_path, "header", "no feature columns (the only column is the label)");
  }

  std::size_t rows = 0;
  while (rd.next(fields)) {
    ++rows;
    if (fields.size() != cols.size()) {
      throw InputError(csv_path, fmt::format("row {} (line {})", rows, rd.line()),
                       fmt::format("{} fields, expected {} as in the header", fields.size(), cols.size()));
    }
    for (std::size_t c = 0; c < cols.size(); ++c) {
      Column& col = cols[c];
      const std::string_view t = detail::trim(fields[c]);
      if (t.empty()) {
        throw InputError(csv_path, fmt::format("row {} (line {}), column '{}'", rows, rd.line(), col.name),
                         "empty value: a schema has no missing values; drop or fill such rows first");
      }
      double v = 0;
      if (col.numeric && detail::parse_number(t, v)) {
        col.min = std::min(col.min, v);
        col.max = std::max(col.max, v);
        if (std::floor(v) != v || std::fabs(v) > 9007199254740992.0) col.integral = false;
      } else {
        col.numeric = false;
      }
      col.values.push_back(t);  // labels are needed if the column turns out non-numeric
    }
  }
  if (rows == 0) throw InputError(csv_path, "", "no data rows to infer a schema from");

  std::string name = std::filesystem::path(csv_path).stem().string();
  std::string out;
  out += fmt::format("# Schema inferred by witness from {} ({} data rows).\n",
                     std::filesystem::path(csv_path).filename().string(), rows);
  out += "# Review it: bounds are the data's min and max (widen them to the domain you mean to check),\n";
  out += "# categorical codes follow the sorted labels (sklearn LabelEncoder order), and `protected`\n";
  out += "# must name the features whose change should not change the decision.\n";
  out += fmt::format("name = {}\n", toml_string(name));
  if (label_col) {
    const Column& l = cols[*label_col];
    out += fmt::format("label = {}\n", toml_string(l.name));
    if (!l.numeric) {
      out += toml_string_array("label_classes", distinct_sorted(l.values));
    } else if (!l.integral) {
      throw InputError(csv_path, fmt::format("column '{}'", l.name),
                       "the label column holds non-integer numbers; name another label column, or none");
    }
  } else {
    out += "# no label column\n";
  }
  out += "protected = []\n";
  for (std::size_t c = 0; c < cols.size(); ++c) {
    if (label_col && c == *label_col) continue;
    const Column& col = cols[c];
    out += fmt::format("\n[[features]]\nname = {}\n", toml_string(col.name));
    if (!col.numeric) {
      out += "kind = \"categorical\"\n";
      out += toml_string_array("categories", distinct_sorted(col.values));
    } else if (col.integral) {
      out += fmt::format("kind = \"integer\"\nmin = {}\nmax = {}\n", static_cast<long long>(col.min),
                         static_cast<long long>(col.max));
    } else {
      out += fmt::format("kind = \"real\"\nmin = {}\nmax = {}\n", toml_real(col.min), toml_real(col.max));
    }
  }
  return out;
}

}  // namespace witness
