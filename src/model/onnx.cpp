// Placeholder until the ONNX loader lands in this change.
#include "core/error.h"
#include "model/loaders.h"
namespace witness {
Model load_onnx(const std::string& path) { throw UnsupportedError(path, "", "ONNX loading is not built yet"); }
Model parse_onnx(const std::string&, const std::string& path) { throw UnsupportedError(path, "", "ONNX loading is not built yet"); }
void save_onnx(const Model&, const std::string& path) { throw UnsupportedError(path, "", "ONNX writing is not built yet"); }
}  // namespace witness
