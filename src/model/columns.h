// How the raw columns of a table become a model's inputs: the preprocessing of a scikit-learn
// Pipeline or a skl2onnx graph (encoders, scalers, imputers), carried with the model so that every
// answer speaks in raw values (`race=Black`, `age=23`), never in one-hot or standardised units.
//
//   witness::ModelBuilder b("clf", {"age'", "race=Black", "race=White"});   // the transformed features
//   const int z = b.dense(b.input(), Eigen::RowVector3d(0.5, -1.0, 1.0), Eigen::VectorXd::Zero(1));
//   const witness::Model inner = b.finish(z, witness::DecisionRule::threshold_on(z, 0.0));
//   witness::RawColumn race, age;
//   race.name = "race", race.categorical = true, race.categories = {"Black", "White"}, race.one_hot = true;
//   age.name = "age", age.norm = {witness::Normalisation::Form::MeanStd, 38.6, 13.6};
//   // inputs [race=Black, race=White, age]; feature 0 of `inner` is age, 1 and 2 are race's
//   const witness::Model m = witness::with_raw_columns(inner, {race, age}, {{2}, {0}, {1}});
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"
#include "model/raw_column.h"

namespace witness {

// The layout of the inputs a list of columns gives: column c's first input and the input names
// ("race=Black" for a one-hot category, else the column's name).
[[nodiscard]] std::vector<int> raw_column_offsets(const std::vector<RawColumn>& columns);
[[nodiscard]] std::vector<std::string> raw_column_input_names(const std::vector<RawColumn>& columns);

// A model over the columns' inputs from `inner`, which reads transformed features: feature k of
// `inner` is the sum of the inputs sources[k] (one input for a numeric column or a one-hot
// category, several for a group of infrequent categories, none for a constant 0). The input map is
// folded into the Dense layers or trees that read the input where that is exact (a Dense's columns
// are gathered, a tree's features renamed); otherwise a 0/1 Dense layer is put in front, which is
// exact too since every input it sums but one is 0. InputError when the sources do not fit.
[[nodiscard]] Model with_raw_columns(const Model& inner, std::vector<RawColumn> columns,
                                     const std::vector<std::vector<int>>& sources);

// The same model over one input per raw column (a category's code, a number), its preprocessing
// made IR ops: one-hot as Equal(code, 0..k-1), normalisations as the Sub/Div/Mul/Add they are, in
// the order to_model computes them (so every value is the same double). For questions asked in raw
// values (counterfactual queries); model.columns, in order, describe its inputs.
[[nodiscard]] Model raw_input_model(const Model& model);

// Whether a data column (or schema feature) is the model's raw column `model_name`: the same name,
// or the name skl2onnx makes of it for a graph input (every character but [A-Za-z0-9_+] becomes
// '_': "education-num" is read by the input "education_num").
[[nodiscard]] bool same_column(std::string_view data_name, std::string_view model_name);

// The columns as JSON (the metadata save_onnx writes and load_onnx reads back) and back;
// InputError naming `source` for malformed JSON.
[[nodiscard]] nlohmann::json raw_columns_json(const std::vector<RawColumn>& columns);
[[nodiscard]] std::vector<RawColumn> raw_columns_from_json(const nlohmann::json& j, const std::string& source);

// InputError naming the model unless its columns describe exactly its inputs (widths, categories
// listed once, normalisations invertible).
void check_raw_columns(const Model& model);

}  // namespace witness
