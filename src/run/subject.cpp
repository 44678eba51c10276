#include "run/subject.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <utility>

#include "core/error.h"
#include "core/sha256.h"
#include "domain/infer.h"
#include "model/digest.h"
#include "model/loaders.h"

namespace witness {
namespace {

std::string rows_name(const RowsSource& rows) { return !rows.path.empty() ? rows.path : rows.name; }

// A file's (or a text's) SHA-256 for the provenance; a file read a moment ago and gone since is
// named with an empty hash rather than failing the answer.
JobSubject::InputFile input_file(const std::string& role, const std::string& path, const std::string& text = "") {
  JobSubject::InputFile f{.role = role, .name = path, .sha256 = "", .bytes = 0};
  if (!text.empty() || path.empty()) {
    f.sha256 = sha256_hex(text);
    f.bytes = text.size();
    return f;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return f;
  Sha256 h;
  std::array<char, 1 << 16> buffer{};
  while (in) {
    in.read(buffer.data(), buffer.size());
    h.add(buffer.data(), static_cast<std::size_t>(in.gcount()));
    f.bytes += static_cast<std::uintmax_t>(in.gcount());
  }
  f.sha256 = h.hex();
  return f;
}

void add_rows_file(JobSubject& s, const std::string& role, const RowsSource& rows) {
  if (!rows.path.empty()) {
    s.files.push_back(input_file(role, rows.path));
  } else if (!rows.csv_text.empty()) {
    s.files.push_back(input_file(role, rows.name + " (CSV text)", rows.csv_text));
  }
}

std::vector<std::string> feature_names(const Schema& schema) {
  std::vector<std::string> out;
  for (const Feature& f : schema.features()) out.push_back(f.name);
  return out;
}

Dataset read_rows(const RowsSource& rows, const Schema& schema, const CsvReading& reading = {}) {
  const std::string name = rows_name(rows);
  Dataset d;
  if (!rows.path.empty()) {
    d = load_csv(rows.path, schema, reading);
  } else if (!rows.csv_text.empty()) {
    d = parse_csv(rows.csv_text, schema, name, reading);
  } else {
    if (reading.label && !reading.label->empty())
      throw InputError(name, "", fmt::format("--label {}: rows given as values have no label column", *reading.label));
    check_raw_rows(*rows.raw, schema, name);
    d.source = name;
    d.raw = *rows.raw;
  }
  if (d.rows() == 0) throw InputError(name, "", "no data rows");
  if (!rows.row_labels.empty() && static_cast<Eigen::Index>(rows.row_labels.size()) != d.rows())
    throw InputError(name, "", fmt::format("{} row labels for {} rows", rows.row_labels.size(), d.rows()));
  d.row_labels = rows.row_labels;
  return d;
}

}  // namespace

void check_raw_rows(const Eigen::MatrixXd& raw, const Schema& schema, const std::string& name) {
  if (raw.rows() != schema.size())
    throw InputError(name, "",
                     fmt::format("{} values a row, but the schema has {} features", raw.rows(), schema.size()));
  for (Eigen::Index j = 0; j < raw.cols(); ++j) {
    if (!schema.contains(raw.col(j)))
      throw InputError(name, fmt::format("row {}", j + 1),
                       fmt::format("({}) lies outside the schema's bounds", schema.display_row(raw.col(j))));
  }
}

Schema model_schema(const Model& model, const RowsSource& rows, const std::string& label) {
  const std::string name = rows_name(rows);
  std::string toml;
  if (!rows.path.empty()) {
    toml = infer_schema_toml(rows.path, label, &model);
  } else if (!rows.csv_text.empty()) {
    toml = infer_schema_toml_text(rows.csv_text, name, label, &model);
  } else {
    throw InputError(name, "", "the model's schema is read off data with the raw columns (a CSV or a DataFrame)");
  }
  return parse_schema(toml, fmt::format("<schema of {} over {}>", model.source, name));
}

JobSubject load_subject(const SubjectSource& src) {
  JobSubject s;
  if (src.model) {
    s.model = src.model;
  } else if (!src.model_path.empty()) {
    s.model = std::make_shared<const Model>(load_model(src.model_path));
  }
  if (s.model && !src.model_name.empty()) {
    auto renamed = std::make_shared<Model>(*s.model);
    renamed->source = src.model_name;
    s.model = std::move(renamed);
  }
  const bool own_schema = s.model && !s.model->columns.empty();
  auto label_is_input = [&src] {
    return InputError(
        fmt::format("--label {}: that column is a model input; the true label is a column the model "
                    "does not read",
                    *src.label));
  };
  if (own_schema && src.label)
    for (const RawColumn& c : s.model->columns)
      if (c.name == *src.label) throw label_is_input();
  if (src.schema) {
    s.schema = *src.schema;
  } else if (!src.schema_path.empty()) {
    s.schema = load_schema(src.schema_path);
  } else if (const RowsSource& rows = src.data.given() ? src.data : src.seeds;
             own_schema && (!rows.path.empty() || !rows.csv_text.empty())) {
    s.schema = model_schema(*s.model, rows, src.label.value_or(""));
  } else if (own_schema) {
    throw InputError(s.model->source, "",
                     "the model carries its preprocessing: give the data (--data DATA.csv, data=DataFrame) to read "
                     "its schema off, or a schema (--schema)");
  } else {
    throw InputError(s.model ? s.model->source : std::string("the job"), "",
                     "a schema is required (--schema S.toml): the model reads encoded inputs, not raw columns; "
                     "`witness schema infer DATA.csv` writes a starting schema");
  }
  if (!src.box.empty()) s.schema = s.schema.with_box(src.box);
  if (src.label && s.schema.find_feature(*src.label)) throw label_is_input();
  if (s.model) check_schema_fits_model(s.schema, *s.model);

  const std::vector<std::string> asked = src.protected_names.empty() ? s.schema.protected_names() : src.protected_names;
  if (src.needs_protected && asked.empty())
    throw InputError(s.schema.source(), "",
                     "no protected attribute: name them (--protected A,B; protected=[...]) or set `protected` in the "
                     "schema");
  // A name the schema lacks is a column of the data that the model does not read.
  std::vector<std::string> keep;
  for (const std::string& n : asked) (s.schema.find_feature(n) ? s.protected_names : s.unread_protected).push_back(n);
  s.group_names = src.group_names.empty() ? asked : src.group_names;
  for (const std::string& n : s.group_names)
    if (!s.schema.find_feature(n)) keep.push_back(n);
  for (const std::string& n : s.unread_protected)
    if (std::find(keep.begin(), keep.end(), n) == keep.end()) keep.push_back(n);
  if (src.label && !src.label->empty() && !src.data.given())
    throw InputError(fmt::format("--label {}: there are no data rows to read labels from (--data)", *src.label));
  if (src.data.given()) {
    CsvReading reading{.label = src.label, .label_classes = {}, .keep = keep};
    if (src.label && !src.label->empty() && s.model) reading.label_classes = s.model->rule.class_labels;
    s.data = read_rows(src.data, s.schema, reading);
    s.data_name = rows_name(src.data);
  }
  for (const std::string& n : keep) {
    if (s.data && s.data->kept.contains(n)) continue;
    const bool is_group = std::find(s.group_names.begin(), s.group_names.end(), n) != s.group_names.end() &&
                          std::find(asked.begin(), asked.end(), n) == asked.end();
    throw InputError(
        s.schema.source(), "",
        fmt::format("unknown {} '{}': not a feature of schema '{}' (features: {}){}",
                    is_group ? "group column" : "feature", n, s.schema.name(), fmt::join(feature_names(s.schema), ", "),
                    s.data ? fmt::format(" nor a column of {}", s.data_name)
                           : "; a column the model does not read can be audited with the data (--data)"));
  }
  s.protected_features = s.schema.protected_indices(s.protected_names);
  if (src.seeds.given()) s.seeds = read_rows(src.seeds, s.schema);
  // A model or schema handed over in memory (Python) is named by the file it was read from, when
  // there is one, else by the SHA-256 of its content as witness reads it (model/digest.h).
  std::error_code ec;
  if (!src.model_path.empty()) {
    s.files.push_back(input_file("model", src.model_path));
  } else if (s.model && std::filesystem::is_regular_file(s.model->source, ec)) {
    s.files.push_back(input_file("model", s.model->source));
  } else if (s.model) {
    s.files.push_back({.role = "model",
                       .name = s.model->source + " (in memory; SHA-256 of its content)",
                       .sha256 = model_digest(*s.model),
                       .bytes = 0});
  }
  if (!src.schema_path.empty()) {
    s.files.push_back(input_file("schema", src.schema_path));
  } else if (src.schema && std::filesystem::is_regular_file(s.schema.source(), ec)) {
    s.files.push_back(input_file("schema", s.schema.source()));
  }
  add_rows_file(s, "data", src.data);
  add_rows_file(s, "seeds", src.seeds);
  return s;
}

}  // namespace witness
