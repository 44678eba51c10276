// What a fair, test or bias job runs on, loaded and checked once for the CLI, the Python module
// and witness serve: the model, the schema (the model's own, from the data, when the model carries
// its preprocessing and no schema is given), the protected attributes and the data and seed rows.
//
//   witness::SubjectSource src;
//   src.model_path = "tests/fixtures/pipelines/lr.onnx";          // a skl2onnx pipeline: raw columns
//   src.data.path = "tests/fixtures/pipelines/adult_600.csv";     // no schema: the model's own + the data
//   src.protected_names = {"sex"};
//   const witness::JobSubject s = witness::load_subject(src);
//   const long rows = s.data ? s.data->rows() : 0;                // 600
//   const std::string first = s.schema.feature(0).name;           // "age"
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "domain/dataset.h"
#include "domain/schema.h"
#include "model/model.h"

namespace witness {

// Rows to read through the schema: a CSV file, CSV text, or raw rows already read.
struct RowsSource {
  std::string path;                     // a CSV file, or
  std::string csv_text;                 // CSV text (a DataFrame written by the Python module), or
  std::optional<Eigen::MatrixXd> raw;   // raw values [features][rows] in schema order
  std::string name;                     // how messages and answers name the rows ("--data", "data")
  std::vector<std::string> row_labels;  // a DataFrame's index labels, one per row (none: numbered from 1)

  [[nodiscard]] bool given() const { return !path.empty() || !csv_text.empty() || raw.has_value(); }
};

struct SubjectSource {
  std::string model_path;              // a model file, or
  std::shared_ptr<const Model> model;  // a model loaded already, or neither (witness test --cmd)
  std::string model_name;              // if set, how answers name the model (witness serve: the path under its root)
  std::string schema_path;             // a schema file, or
  std::optional<Schema> schema;        // a schema read already, or neither: the model's own, over `data`
  std::string box;                     // a named box of the schema
  std::vector<std::string> protected_names;  // empty: the schema's
  bool needs_protected = true;
  // The data's true-label column (--label): unset, the schema's label when the data has that
  // column; "" none. Never guessed from the data's layout.
  std::optional<std::string> label;
  // Columns for group metrics and intersections (--groups), read by the model or not; empty: the
  // protected attributes.
  std::vector<std::string> group_names;
  RowsSource data;   // rows to measure (fair), draw from (bias) or audit by group
  RowsSource seeds;  // rows the search starts from (fair's dual/concolic engines, test)
};

struct JobSubject {
  std::shared_ptr<const Model> model;  // null when labels come from a program (witness test --cmd)
  Schema schema;
  std::vector<std::string> protected_names;  // those the model reads: the flip question's
  std::vector<int> protected_features;
  // Protected attributes the model does not read (columns of the data only: an "unaware" model);
  // no change of theirs can change a decision, and they still split the data into groups.
  std::vector<std::string> unread_protected;
  std::vector<std::string> group_names;  // --groups, else every protected attribute (read or not)
  std::optional<Dataset> data;
  std::optional<Dataset> seeds;
  std::string data_name;  // where the data rows came from, as answers name it
  // Every input read, with its content's SHA-256 (of the file's bytes, as sha256sum prints it; of
  // the CSV text for a DataFrame): the report's provenance.
  struct InputFile {
    std::string role;  // "model", "schema", "data", "seeds"
    std::string name;
    std::string sha256;
    std::uintmax_t bytes = 0;
  };
  std::vector<InputFile> files;
};

// InputError (exit 2) naming the file or option for everything that does not fit: an unreadable
// model or schema, a schema that does not describe the model's inputs or contradicts its
// preprocessing, no schema and nothing to take one from, unknown or missing protected attributes,
// rows that do not read.
[[nodiscard]] JobSubject load_subject(const SubjectSource& source);

// Raw rows [features][rows] checked against the schema's features and bounds (InputError naming
// `name` and the row otherwise).
void check_raw_rows(const Eigen::MatrixXd& raw, const Schema& schema, const std::string& name);

// The schema a model that carries its preprocessing comes with, over the rows of a CSV (file or
// text): the model's columns and encodings, the data's ranges (domain/infer.h); `label` names the
// true-label column ("" none).
[[nodiscard]] Schema model_schema(const Model& model, const RowsSource& rows, const std::string& label = "");

}  // namespace witness
