// libFuzzer target for XGBoost's UBJSON form (.ubj): the function is fuzz_xgboost_json's (it tells
// UBJSON from JSON by the bytes after the first '{'; fuzz_xgboost.h); this target's corpus is
// UBJSON, so its mutants exercise the binary reader: length markers, typed arrays, counts.
#include <cstddef>
#include <cstdint>

#include "fuzz_xgboost.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  witness::fuzz::run_xgboost(data, size, "fuzz.ubj");
  return 0;
}
