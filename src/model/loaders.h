// Loading and saving models. load_model() picks the loader from the file's extension (.json, .h5,
// .onnx, .nnet, .ubj, .txt) and its content (an XGBoost JSON has a "learner" key, a LightGBM text
// model starts with the line `tree`), and, when the extension says nothing, from its first bytes:
//
//   witness::Model m = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   witness::save_onnx(m, "AC1.onnx");          // the same network as a standard ONNX graph
//   witness::Model back = witness::load_model("AC1.onnx");
//
// Every loader throws InputError (exit code 2) naming the file, the layer or node and what was
// expected, and UnsupportedError for well-formed files that use what witness does not support.
#pragma once

#include <string>

#include "core/file.h"
#include "model/model.h"

namespace witness {

Model load_model(const std::string& path);

Model load_mlp_json(const std::string& path);  // mlp-json-v1 (Fairify networks as JSON)
Model load_keras_h5(const std::string& path);  // Keras Sequential .h5 (Dense layers)
Model load_onnx(const std::string& path);      // ONNX, with ai.onnx.ml trees and linear classifiers
// .nnet text (Reluplex, Marabou, NeuroDiff, FairQuant): hidden layers Dense + ReLU, last Dense linear.
// With `apply_normalisation`, the file's means and ranges are applied as the format defines them:
// inputs (x - mean) / range, outputs y * range + mean, as exact Sub/Div and Mul/Add nodes. Without
// it they are ignored (as FairQuant does). The input minimums/maximums go to Model::input_bounds;
// inputs are never clipped to them.
Model load_nnet(const std::string& path, bool apply_normalisation = true);
// XGBoost Booster.save_model files (1.7 format), JSON or UBJSON (.ubj): gbtree boosters with the
// binary:logistic, binary:logitraw, binary:hinge, reg:logistic, multi:softprob or multi:softmax
// objective. Splits keep XGBoost's float32 semantics exactly; margins are summed in double.
Model load_xgboost_json(const std::string& path);
// LightGBM text models (Booster.save_model's model.txt): binary, cross_entropy, multiclass and
// multiclassova objectives, numerical and categorical splits, the three missing-value types.
Model load_lightgbm_text(const std::string& path);

// Parses mlp-json-v1 text; `path` is only used in messages.
Model parse_mlp_json(const std::string& text, const std::string& path);
// Parses ONNX bytes; `path` is only used in messages.
Model parse_onnx(const std::string& bytes, const std::string& path);
// Parse XGBoost JSON/UBJSON bytes and LightGBM model text; `path` is only used in messages.
Model parse_xgboost_json(const std::string& bytes, const std::string& path);
Model parse_lightgbm_text(const std::string& text, const std::string& path);
// Parses .nnet text; `path` is only used in messages and for the model's name.
Model parse_nnet(const std::string& text, const std::string& path, bool apply_normalisation = true);

// Writes a model as ONNX (opset 13, ai.onnx.ml 3); throws UnsupportedError for ops ONNX cannot
// express directly.
void save_onnx(const Model& model, const std::string& path);
// Writes a model made only of Dense and activation layers as mlp-json-v1.
void save_mlp_json(const Model& model, const std::string& path);

}  // namespace witness
