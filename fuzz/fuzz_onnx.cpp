// libFuzzer target: any bytes must give parse_onnx a Model or a witness::Error, never a crash.
// A model that loads is also evaluated, so that the IR the loader built is exercised too.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "model/evaluator.h"
#include "model/loaders.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const witness::Model m = witness::parse_onnx(std::string(reinterpret_cast<const char*>(data), size), "fuzz.onnx");
    if (m.input_width() <= 4096) {
      Eigen::MatrixXd x(m.input_width(), 2);
      x.col(0).setZero();
      x.col(1).setOnes();
      (void)witness::evaluate(m, x);
    }
  } catch (const witness::Error&) {
    // Rejecting the input is the expected outcome for most of them.
  }
  return 0;
}
