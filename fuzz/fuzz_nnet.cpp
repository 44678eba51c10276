// libFuzzer target: any text must give parse_nnet a Model or a witness::Error, never a crash, with
// the file's normalisation applied and without it. A model that loads is also evaluated on two rows.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "fuzz_common.h"
#include "model/evaluator.h"
#include "model/loaders.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = witness::fuzz::text_of(data, size);
  for (const bool normalise : {true, false}) {
    bool loaded = false;
    witness::fuzz::run_one([&] {
      const witness::Model m = witness::parse_nnet(text, "fuzz.nnet", normalise);
      loaded = true;
      if (m.input_width() <= 4096) {
        Eigen::MatrixXd x(m.input_width(), 2);
        x.col(0).setZero();
        x.col(1).setOnes();
        (void)witness::evaluate(m, x);
      }
    });
    if (!loaded) break;  // the same text fails the same way without normalisation
  }
  return 0;
}
