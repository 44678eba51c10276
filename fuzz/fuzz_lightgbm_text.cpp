// libFuzzer target: any text must give parse_lightgbm_text a Model or a witness::Error, never a
// crash. A model that loads is evaluated on a few rows (zeros, ones, NaN for the missing-value
// types, tiny values for the zero band, large values for the category bitsets).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "core/error.h"
#include "fuzz_common.h"
#include "model/evaluator.h"
#include "model/loaders.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  witness::fuzz::run_one([&] {
    const witness::Model m = witness::parse_lightgbm_text(witness::fuzz::text_of(data, size), "fuzz.txt");
    if (m.input_width() <= 4096) {
      Eigen::MatrixXd x(m.input_width(), 5);
      x.col(0).setZero();
      x.col(1).setOnes();
      x.col(2).setConstant(std::numeric_limits<double>::quiet_NaN());
      x.col(3).setConstant(1e-36);
      x.col(4).setConstant(1e9);
      (void)witness::evaluate(m, x);
    }
  });
  return 0;
}
