#include "model/loaders.h"

#include <algorithm>

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
}  // namespace

Model load_model(const std::string& path) {
  const std::string ext = lower_extension(path);
  if (ext == "json") return load_mlp_json(path);
  if (ext == "h5" || ext == "hdf5" || ext == "keras") return load_keras_h5(path);
  if (ext == "onnx") return load_onnx(path);
  // Unknown extension: sniff. HDF5 files start with \x89HDF, JSON with '{'.
  const std::string head = read_file(path).substr(0, 8);
  if (head.rfind("\x89HDF", 0) == 0) return load_keras_h5(path);
  const auto first = head.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && head[first] == '{') return load_mlp_json(path);
  if (!head.empty()) return load_onnx(path);
  throw InputError(path, "", "empty file; expected a model (.json mlp-json-v1, Keras .h5 or .onnx)");
}

}  // namespace witness
