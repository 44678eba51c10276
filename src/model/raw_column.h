// One raw column of a table as a model reads it: its values (numbers, or category labels), and the
// preprocessing that turns a value into model inputs (one-hot or ordinal code, then an affine map).
// Schemas (domain/schema.h) describe their features with the same parts; models converted from a
// scikit-learn Pipeline or a skl2onnx graph carry them (Model::columns, model/columns.h).
//
//   witness::Normalisation n{witness::Normalisation::Form::MeanStd, 38.6, 13.6};
//   double x = n.to_model(40.0);                 // (40 - 38.6) / 13.6, as StandardScaler computes it
//   std::string shown = n.describe("age");       // "(age - 38.6) / 13.6"
//   witness::RawColumn sex;
//   sex.name = "sex", sex.categorical = true, sex.categories = {"Female", "Male"}, sex.one_hot = true;
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace witness {

// Affine map from a raw value to a model input. It is kept in the form the source wrote, so the
// model sees exactly the double the training pipeline computed ((raw - mean) / std is not
// bit-identical to raw * (1 / std) - mean / std).
struct Normalisation {
  // ScaleOffset: raw * a + b (MinMaxScaler). MeanStd: (raw - a) / b (StandardScaler, RobustScaler,
  // MaxAbsScaler). CenterScale: (raw - a) * b (ONNX ai.onnx.ml Scaler).
  enum class Form : std::uint8_t { None, ScaleOffset, MeanStd, CenterScale };
  Form form = Form::None;
  double a = 1.0;
  double b = 0.0;

  [[nodiscard]] double to_model(double raw) const;
  [[nodiscard]] double to_raw(double model) const;
  // The map as a formula of `name`: "(age - 38.6) / 13.6"; "age" for None.
  [[nodiscard]] std::string describe(const std::string& name) const;
  // d model / d raw, and the model value of raw 0 (the map is slope * raw + intercept in exact
  // arithmetic; in doubles to_model is what the model computes).
  [[nodiscard]] double slope() const;
  [[nodiscard]] double intercept() const;
  friend bool operator==(const Normalisation&, const Normalisation&) = default;
};

struct RawColumn {
  std::string name;
  bool categorical = false;
  std::vector<std::string> categories;  // categorical: the labels, code = index
  bool one_hot = false;                 // categorical: one model input per category, exactly one is 1
  Normalisation norm;                   // of the number, or of the ordinal code (not with one_hot)
  // What an empty (missing) cell is read as, a category label or a number, as an imputer fills it;
  // empty: missing values are an error.
  std::string missing;
  std::string step;  // the preprocessing step that encodes it ("OneHotEncoder 'cat'"), for messages

  [[nodiscard]] int width() const { return one_hot ? static_cast<int>(categories.size()) : 1; }
};

}  // namespace witness
