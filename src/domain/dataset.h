// Datasets: CSV files read through a schema into raw values, plus the optional label column.
//
//   witness::Schema s = witness::load_schema("benchmarks/fairify/adult.toml");
//   witness::Dataset d = witness::load_csv("benchmarks/fairify/data/adult.csv", s);
//   Eigen::MatrixXd x = d.model_inputs(s);      // [model width][rows], ready for Evaluator::run
//   std::string first = s.display_row(d.raw.col(0));
//   int y0 = d.labels[0];                        // when the CSV has the schema's label column
//
// CSV rules (docs/schema.md): a header row is required; every feature is a column, in any order;
// the only other column allowed is the schema's label; values go through Schema::parse_value.
#pragma once

#include <Eigen/Dense>
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

  [[nodiscard]] Eigen::Index rows() const { return raw.cols(); }
  [[nodiscard]] bool has_labels() const { return !labels.empty(); }
  // [schema.model_width()][rows]; throws InputError if the schema has a different feature count.
  [[nodiscard]] Eigen::MatrixXd model_inputs(const Schema& schema) const;
};

// A CSV field as written: quoted (RFC 4180, "" for ") when it holds a comma, quote or line break.
[[nodiscard]] std::string csv_field(const std::string& text);

// Throws InputError naming the file and, for data, "row R (line L), column 'name'": R counts data
// rows from 1, L is the file line where that row starts.
[[nodiscard]] Dataset load_csv(const std::string& path, const Schema& schema);
// Same, from text; `source` names it in messages.
[[nodiscard]] Dataset parse_csv(std::string text, const Schema& schema, const std::string& source = "<csv>");

}  // namespace witness
