// libFuzzer target: any text must give parse_xgboost_json a Model or a witness::Error, never a crash
// (fuzz_xgboost.h). Its corpus is XGBoost's JSON form.
#include <cstddef>
#include <cstdint>

#include "fuzz_xgboost.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  witness::fuzz::run_xgboost(data, size, "fuzz.json");
  return 0;
}
