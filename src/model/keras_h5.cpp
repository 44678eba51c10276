// Placeholder until the Keras loader lands in this change.
#include "core/error.h"
#include "model/loaders.h"
namespace witness {
Model load_keras_h5(const std::string& path) { throw UnsupportedError(path, "", "Keras .h5 loading is not built yet"); }
}  // namespace witness
