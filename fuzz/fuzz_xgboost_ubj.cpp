// libFuzzer target for XGBoost's UBJSON form (.ubj): any bytes must give parse_xgboost_json a Model
// or a witness::Error, never a crash. The function is fuzz_xgboost_json's (it tells UBJSON from
// JSON by the bytes after the first '{'); this target's corpus is UBJSON, so its mutants exercise
// the binary reader: length markers, typed arrays, counts. A model that loads is evaluated on a
// few rows (zeros, ones, NaN, large values), in double and in float32 as XGBoost computes.
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
    const witness::Model m = witness::parse_xgboost_json(witness::fuzz::text_of(data, size), "fuzz.ubj");
    if (m.input_width() <= 4096) {
      Eigen::MatrixXd x(m.input_width(), 4);
      x.col(0).setZero();
      x.col(1).setOnes();
      x.col(2).setConstant(std::numeric_limits<double>::quiet_NaN());
      x.col(3).setConstant(-1e30);
      (void)witness::evaluate(m, x);
      (void)witness::evaluate(m, x, witness::Precision::Float32);
    }
  });
  return 0;
}
