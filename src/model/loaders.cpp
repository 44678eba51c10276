#include "model/loaders.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "core/error.h"

namespace witness {
namespace {
std::string lower_extension(const std::string& path) {
  const auto dot = path.find_last_of('.');
  const auto slash = path.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return {};
  std::string ext = path.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

// XGBoost's JSON has a top-level "learner" object; mlp-json-v1 says its format.
bool is_xgboost_json(const std::string& text) {
  return text.find("\"learner\"") != std::string::npos && text.find("\"mlp-json-v1\"") == std::string::npos;
}

// LightGBM's text models start with the line `tree`.
bool is_lightgbm_text(std::string_view head) {
  const auto first = head.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return false;
  head.remove_prefix(first);
  return head.starts_with("tree\n") || head.starts_with("tree\r\n");
}

// UBJSON objects start with '{' and then a length marker (text JSON: '"' or '}').
bool is_ubjson(std::string_view head) {
  return head.size() > 1 && head[0] == '{' && std::string_view("iUIlL$#").find(head[1]) != std::string_view::npos;
}
}  // namespace

Model load_model(const std::string& path) {
  const std::string ext = lower_extension(path);
  if (ext == "json") {
    const std::string text = read_file(path);
    return is_xgboost_json(text) ? parse_xgboost_json(text, path) : parse_mlp_json(text, path);
  }
  if (ext == "ubj") return load_xgboost_json(path);
  if (ext == "h5" || ext == "hdf5" || ext == "keras") return load_keras_h5(path);
  if (ext == "onnx") return load_onnx(path);
  if (ext == "nnet") return load_nnet(path);
  // Unknown extension: sniff. HDF5 files start with \x89HDF, JSON with '{', .nnet text with `//`
  // header comments or a digit (ONNX protobufs start with a field tag, 0x08 in practice).
  const std::string head = read_file(path).substr(0, 64);
  if (head.rfind("\x89HDF", 0) == 0) return load_keras_h5(path);
  if (is_lightgbm_text(head)) return load_lightgbm_text(path);
  if (is_ubjson(head)) return load_xgboost_json(path);
  const auto first = head.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && head[first] == '{') {
    const std::string text = read_file(path);
    return is_xgboost_json(text) ? parse_xgboost_json(text, path) : parse_mlp_json(text, path);
  }
  if (first != std::string::npos &&
      (head.compare(first, 2, "//") == 0 || std::isdigit(static_cast<unsigned char>(head[first])) != 0)) {
    return load_nnet(path);
  }
  if (head.empty()) {
    throw InputError(path, "", "empty file; expected a model (.json mlp-json-v1, Keras .h5, .onnx or .nnet)");
  }
  try {
    return load_onnx(path);
  } catch (const InputError& e) {
    // Not even a protobuf: say what was tried rather than blaming ONNX alone.
    if (std::string_view(e.what()).ends_with("not a valid ONNX protobuf")) {
      throw InputError(path, "",
                       "unrecognised model file: not HDF5, JSON, UBJSON, LightGBM or .nnet text, or an ONNX protobuf "
                       "(name it .h5, .json, "
                       ".nnet or .onnx to pick a loader)");
    }
    throw;
  }
}

}  // namespace witness
