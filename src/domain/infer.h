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
#pragma once

#include <optional>
#include <string>

namespace witness {

// label: std::nullopt = the last column, "" = no label column, otherwise a column name.
// Throws InputError naming the file, and the row and column for bad data.
[[nodiscard]] std::string infer_schema_toml(const std::string& csv_path, std::optional<std::string> label);

}  // namespace witness
