// A starting schema guessed from a CSV file, as TOML text that load_schema reads back.
//
//   #include <fstream>
//   std::string toml = witness::infer_schema_toml("data/credit.csv", std::nullopt);  // label = last column
//   std::ofstream("credit.toml") << toml;   // then review bounds, kinds and `protected`
//   witness::Schema s = witness::load_schema("credit.toml");
//
// Rules: a column whose values all read as numbers is `integer` when they are all integral (a 0/1
// column too: it is more often a code than a truth value) and `real` otherwise, with the data's
// min and max as bounds; any other column is `categorical` with its distinct labels sorted
// bytewise, which is sklearn's LabelEncoder order. A non-numeric label column gets `label_classes`
// in the same order. Empty values are an error (schemas have no missing values).
//
// With a model that carries its preprocessing (Model::columns: a scikit-learn Pipeline, a skl2onnx
// graph), the features are the model's columns with its categories, encodings, normalisations,
// imputed values and class names; the data gives the kinds and ranges of numbers, and its other
// columns are listed as `ignore`. The label then defaults to the last column unless the model
// reads it.
#pragma once

#include <optional>
#include <string>

namespace witness {

class Model;

// label: std::nullopt = the last column, "" = no label column, otherwise a column name.
// Throws InputError naming the file, and the row and column for bad data.
[[nodiscard]] std::string infer_schema_toml(const std::string& csv_path, const std::optional<std::string>& label,
                                            const Model* model = nullptr);
// The same for CSV text (a DataFrame written by the Python module); `source` names it.
[[nodiscard]] std::string infer_schema_toml_text(std::string csv_text, const std::string& source,
                                                 const std::optional<std::string>& label, const Model* model = nullptr);

}  // namespace witness
