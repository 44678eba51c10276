// libFuzzer target: any text must give parse_mlp_json a Model or a witness::Error, never a crash.
// A model that loads is also evaluated.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "fuzz_common.h"
#include "model/evaluator.h"
#include "model/loaders.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  witness::fuzz::run_one([&] {
    const witness::Model m = witness::parse_mlp_json(witness::fuzz::text_of(data, size), "fuzz.json");
    if (m.input_width() <= 4096) {
      Eigen::MatrixXd x(m.input_width(), 2);
      x.col(0).setZero();
      x.col(1).setOnes();
      (void)witness::evaluate(m, x);
    }
  });
  return 0;
}
