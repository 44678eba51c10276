// libFuzzer target for what `witness report RUN.json` reads: any text must give the HTML report or
// a witness::Error, never a crash or another exception. The text goes through parse_saved_run
// (the reader src/cli/report.cpp calls: JSON nested at most 64 deep, a number no double holds
// refused), then html_report() renders the document.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"
#include "fuzz_common.h"
#include "report/html_report.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  witness::fuzz::run_one([&] {
    const nlohmann::json run = witness::parse_saved_run(witness::fuzz::text_of(data, size), "fuzz.json");
    (void)witness::report_kind(run);
    (void)witness::html_report(run, "fuzz.json");
  });
  return 0;
}
