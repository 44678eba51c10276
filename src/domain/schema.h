// Input schema: the named, typed, bounded features a model reads, and the map between raw values
// (what a person writes: `sex=Female`, `age=37`) and model inputs (what the network computes on).
//
//   witness::Schema s = witness::load_schema("benchmarks/fairify/german.toml");
//   Eigen::VectorXd raw(s.size());
//   for (int i = 0; i < s.size(); ++i) raw[i] = s.feature(i).min;     // the lowest corner
//   raw[s.feature_index("sex")] = s.parse_value(s.feature_index("sex"), "female");
//   Eigen::VectorXd x = s.to_model(raw);                    // model_width() inputs
//   std::string text = s.display_row(s.from_model(x));      // "status=200+, month=0, ..."
//   witness::Schema box = s.with_box("fairify");            // Fairify's bounds instead of the data's
//
// The file format is described in docs/schema.md.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/constraints.h"
#include "model/raw_column.h"

namespace witness {

class Model;

namespace detail {
class SchemaParser;
}

enum class FeatureKind : std::uint8_t { Integer, Real, Categorical, Boolean };

// "integer", "real", "categorical", "boolean": the spelling used in schema files.
[[nodiscard]] const char* kind_name(FeatureKind kind);

struct Feature {
  std::string name;
  FeatureKind kind = FeatureKind::Real;
  double min = 0.0;  // inclusive raw bounds; integral for every kind but Real
  double max = 0.0;
  std::vector<std::string> categories;  // Categorical: label of code i (a box may allow more codes)
  Normalisation norm;
  bool one_hot = false;  // Categorical only: one model input per category, exactly one is 1
  int model_offset = 0;  // index of this feature's first model input
  int model_width = 1;   // categories.size() when one_hot
  // What an empty (or NaN) cell of a data file is read as, as an imputer fills it: a category label
  // or a number (`missing` in the file); empty: a missing value is an error.
  std::string missing;
  double missing_value = 0.0;  // the raw value of `missing`

  [[nodiscard]] bool integral() const { return kind != FeatureKind::Real; }
};

class Schema {
 public:
  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const std::string& source() const { return source_; }  // file, for messages
  [[nodiscard]] const std::string& label() const { return label_; }    // CSV label column; "" = none
  // Names of the label values, code = index; empty means the label column holds class indices.
  [[nodiscard]] const std::vector<std::string>& label_classes() const { return label_classes_; }
  // Columns a data file may hold that are neither features nor the label (`ignore`: those a
  // pipeline drops); any other unknown column is an error.
  [[nodiscard]] const std::vector<std::string>& ignored_columns() const { return ignored_; }
  [[nodiscard]] const std::vector<Feature>& features() const { return features_; }
  [[nodiscard]] const Feature& feature(int i) const { return features_.at(static_cast<std::size_t>(i)); }
  [[nodiscard]] int size() const { return static_cast<int>(features_.size()); }

  // Index of a feature; throws InputError "unknown feature 'x' (known: ...)".
  [[nodiscard]] int feature_index(std::string_view name) const;
  [[nodiscard]] std::optional<int> find_feature(std::string_view name) const;  // nullopt: no such feature
  // The schema's default protected features, or the named ones. Throws InputError for unknown
  // names, duplicates and Real features (a protected attribute must take finitely many values).
  [[nodiscard]] const std::vector<std::string>& protected_names() const { return protected_; }
  [[nodiscard]] std::vector<int> protected_indices() const { return protected_indices(protected_); }
  [[nodiscard]] std::vector<int> protected_indices(const std::vector<std::string>& names) const;
  // Per feature: whether it is one of `features` (e.g. the protected ones).
  [[nodiscard]] std::vector<bool> feature_mask(const std::vector<int>& features) const;
  // Per model input: whether it encodes one of `features` (every one-hot column of a category).
  [[nodiscard]] std::vector<bool> input_mask(const std::vector<int>& features) const;
  // The model inputs that encode `features`, ascending.
  [[nodiscard]] std::vector<int> inputs_of(const std::vector<int>& features) const;

  // Named alternative bounds. with_box returns a copy whose bounds for the box's features are
  // replaced; throws InputError listing the available boxes when `box` is unknown.
  [[nodiscard]] std::vector<std::string> box_names() const;
  [[nodiscard]] const std::string& active_box() const { return active_box_; }  // "" = main bounds
  [[nodiscard]] Schema with_box(const std::string& box) const;
  // A copy whose bounds are lo..hi (raw values per feature, within the schema's own bounds), active
  // box `name` (the box around one data row, for --near-data).
  [[nodiscard]] Schema with_bounds(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi, const std::string& name) const;

  // Raw row (one value per feature, schema order) <-> model input vector.
  [[nodiscard]] int model_width() const { return model_width_; }
  [[nodiscard]] std::vector<std::string> model_input_names() const;  // one-hot: "workclass=Private"
  // Throws InputError if a one-hot feature's code has no model input.
  [[nodiscard]] Eigen::VectorXd to_model(const Eigen::Ref<const Eigen::VectorXd>& raw) const;
  // Column-wise: raw [size()][n] -> model [model_width()][n].
  [[nodiscard]] Eigen::MatrixXd to_model_columns(const Eigen::Ref<const Eigen::MatrixXd>& raw) const;
  // Inverse of to_model. One-hot: the largest input wins (ties: lowest code). Integral kinds are
  // rounded to the nearest integer, since undoing a normalisation in floating point is off by ulps.
  [[nodiscard]] Eigen::VectorXd from_model(const Eigen::Ref<const Eigen::VectorXd>& model) const;

  // Category label (or the code, if it has none), integer without ".0", boolean true/false, or
  // the shortest decimal that reads back as the same double.
  [[nodiscard]] std::string display(int feature, double raw) const;
  [[nodiscard]] std::string display_row(const Eigen::Ref<const Eigen::VectorXd>& raw) const;  // "a=1, b=x"
  // display() as quoted_value() writes it, as in display_row, so that every list of values in
  // text output reads back the same way.
  [[nodiscard]] std::string display_quoted(int feature, double raw) const;
  // Parses a category label (labels win over codes), a numeric code or number, or true/false;
  // checks integrality and the bounds. Throws InputError naming the feature.
  [[nodiscard]] double parse_value(int feature, std::string_view text) const;
  // Non-throwing form for bulk loading: returns "" and sets `value`, or returns what was wrong.
  [[nodiscard]] std::string try_parse_value(int feature, std::string_view text, double& value) const;

  [[nodiscard]] bool contains(const Eigen::Ref<const Eigen::VectorXd>& raw) const;
  // Derived features and validity rules (`constraints` in the file): who can exist.
  [[nodiscard]] const Constraints& constraints() const { return constraints_; }
  // Number of points: the product of the integral features' value counts; +infinity when a Real
  // feature has min < max.
  [[nodiscard]] long double domain_size() const;

 private:
  friend class detail::SchemaParser;
  void finish();  // computes model offsets and lookup tables

  std::string name_;
  std::string source_;
  std::string label_;
  std::vector<std::string> label_classes_;
  std::vector<std::string> ignored_;
  std::vector<Feature> features_;
  std::vector<std::string> protected_;
  std::map<std::string, std::vector<std::pair<int, std::pair<double, double>>>, std::less<>> boxes_;
  std::string active_box_;
  Constraints constraints_;
  int model_width_ = 0;
  std::map<std::string, int, std::less<>> index_;
  std::vector<std::map<std::string, int, std::less<>>> codes_;  // per feature: label -> code
  std::vector<bool> numeric_labels_;                            // per feature: some label reads as a number
};

// Reads a TOML schema. Every error is an InputError naming the file, the line and column where
// known, and the feature.
[[nodiscard]] Schema load_schema(const std::string& path);
// load_schema, then the named box (if `box` is not empty), then a check that the schema describes
// the model's inputs (InputError naming the schema otherwise).
[[nodiscard]] Schema load_schema_for(const Model& model, const std::string& path, const std::string& box);
// InputError naming the schema unless it describes the model's inputs: the same width, and for a
// model that carries its preprocessing (Model::columns) the same columns in the same order with
// the same categories, encodings, normalisations and imputed values.
void check_schema_fits_model(const Schema& schema, const Model& model);
// Same, from text; `source` names it in messages.
[[nodiscard]] Schema parse_schema(std::string_view toml_text, const std::string& source = "<schema>");

// A value (a category label, a row's index label) as text output lists it: as written, or in
// double quotes when it holds a space, comma, '=', quote or control character ("1-4 years"), with
// \" \\ \n \r \t and \xHH escaped inside, so that one value neither reads as two nor starts a line.
[[nodiscard]] std::string quoted_value(std::string_view text);

}  // namespace witness
