// Datasets: CSV files read through a schema into raw values, plus the optional label column.
//
//   witness::Schema s = witness::load_schema("benchmarks/fairify/adult.toml");
//   witness::Dataset d = witness::load_csv("benchmarks/fairify/data/adult.csv", s);
//   Eigen::MatrixXd x = d.model_inputs(s);      // [model width][rows], ready for Evaluator::run
//   std::string first = s.display_row(d.raw.col(0));
//   int y0 = d.labels[0];                        // when the CSV has the schema's label column
//
// CSV rules (docs/schema.md): a header row is required; every feature is a column, in any order;
// the label is the schema's label column (or the one named); other columns are kept as text when
// asked (group columns) or listed as unread; values go through Schema::parse_value.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/schema.h"

namespace witness {

struct Dataset {
  std::string source;
  // [features][rows] in schema order: column r is data row r + 1, the layout the evaluator takes.
  Eigen::MatrixXd raw;
  // Class index per row (label_classes map names to indices); empty when there is no label column.
  std::vector<int> labels;
  std::string label_column;  // the column the labels came from ("" when none)
  // Columns kept as written (CsvReading::keep: group columns a model need not read), by name; an
  // empty cell is an unknown value.
  std::map<std::string, std::vector<std::string>, std::less<>> kept;
  // The file's columns that were read as nothing (neither a feature, the label nor kept), in file
  // order: answers name them, so that a column the user meant as the label is not lost silently.
  std::vector<std::string> unread;
  // How the user names each row when not by its number: a DataFrame's index labels (empty: rows
  // are numbered from 1).
  std::vector<std::string> row_labels;

  [[nodiscard]] Eigen::Index rows() const { return raw.cols(); }
  [[nodiscard]] bool has_labels() const { return !labels.empty(); }
  // [schema.model_width()][rows]; throws InputError if the schema has a different feature count.
  [[nodiscard]] Eigen::MatrixXd model_inputs(const Schema& schema) const;
};

// How answers name row `row` (0-based) of rows labelled `labels` (Dataset::row_labels): "row 4"
// (numbered from 1) or, for a DataFrame's, "index 3" (its label, as pandas' df.loc takes it).
[[nodiscard]] std::string row_name(const std::vector<std::string>& labels, std::int64_t row);

// A CSV field as written: quoted (RFC 4180, "" for ") when it holds a comma, quote or line break.
[[nodiscard]] std::string csv_field(const std::string& text);

// Which of a file's other columns are read, and how.
struct CsvReading {
  // The label column: unset, the schema's label when the file has that column; "" none; else this
  // column (InputError when the file lacks it).
  std::optional<std::string> label;
  // The label's class names, code = index (the model's classes). Empty: the schema's label_classes
  // when the label is the schema's, else class indices.
  std::vector<std::string> label_classes;
  std::vector<std::string> keep;  // columns kept as text in Dataset::kept (those the file has)
};

// Throws InputError naming the file and, for data, "row R (line L), column 'name'": R counts data
// rows from 1, L is the file line where that row starts.
[[nodiscard]] Dataset load_csv(const std::string& path, const Schema& schema, const CsvReading& reading = {});
// Same, from text; `source` names it in messages.
[[nodiscard]] Dataset parse_csv(std::string text, const Schema& schema, const std::string& source = "<csv>",
                                const CsvReading& reading = {});

}  // namespace witness
