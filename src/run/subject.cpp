#include "run/subject.h"

#include <fmt/format.h>

#include <utility>

#include "core/error.h"
#include "domain/infer.h"
#include "model/loaders.h"

namespace witness {
namespace {

std::string rows_name(const RowsSource& rows) { return !rows.path.empty() ? rows.path : rows.name; }

Dataset read_rows(const RowsSource& rows, const Schema& schema) {
  const std::string name = rows_name(rows);
  Dataset d;
  if (!rows.path.empty()) {
    d = load_csv(rows.path, schema);
  } else if (!rows.csv_text.empty()) {
    d = parse_csv(rows.csv_text, schema, name);
  } else {
    check_raw_rows(*rows.raw, schema, name);
    d.source = name;
    d.raw = *rows.raw;
  }
  if (d.rows() == 0) throw InputError(name, "", "no data rows");
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

Schema model_schema(const Model& model, const RowsSource& rows) {
  const std::string name = rows_name(rows);
  std::string toml;
  if (!rows.path.empty()) {
    toml = infer_schema_toml(rows.path, std::nullopt, &model);
  } else if (!rows.csv_text.empty()) {
    toml = infer_schema_toml_text(rows.csv_text, name, std::nullopt, &model);
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
  if (src.schema) {
    s.schema = *src.schema;
  } else if (!src.schema_path.empty()) {
    s.schema = load_schema(src.schema_path);
  } else if (const RowsSource& rows = src.data.given() ? src.data : src.seeds;
             own_schema && (!rows.path.empty() || !rows.csv_text.empty())) {
    s.schema = model_schema(*s.model, rows);
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
  if (s.model) check_schema_fits_model(s.schema, *s.model);

  s.protected_names = src.protected_names.empty() ? s.schema.protected_names() : src.protected_names;
  if (src.needs_protected && s.protected_names.empty())
    throw InputError(s.schema.source(), "",
                     "no protected attribute: name them (--protected A,B; protected=[...]) or set `protected` in the "
                     "schema");
  s.protected_features = s.schema.protected_indices(s.protected_names);
  if (src.data.given()) {
    s.data = read_rows(src.data, s.schema);
    s.data_name = rows_name(src.data);
  }
  if (src.seeds.given()) s.seeds = read_rows(src.seeds, s.schema);
  return s;
}

}  // namespace witness
