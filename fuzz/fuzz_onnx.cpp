// libFuzzer target: any bytes must give parse_onnx a Model or a witness::Error, never a crash.
// A model that loads is also evaluated, so that the IR the loader built is exercised too.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "fuzz_common.h"
#include "model/evaluator.h"
#include "model/loaders.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  witness::fuzz::run_one([&] {
    const witness::Model m = witness::parse_onnx(witness::fuzz::text_of(data, size), "fuzz.onnx");
    if (m.input_width() <= 4096) {
      Eigen::MatrixXd x(m.input_width(), 2);
      x.col(0).setZero();
      x.col(1).setOnes();
      (void)witness::evaluate(m, x);
    }
  });
  return 0;
}
