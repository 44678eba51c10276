// Paths the tests read and write: files of the source tree, and fresh files of their own.
//
//   const std::string model = witness::test::source_path("benchmarks/fairify/models/adult/AC1.h5");
//   const std::string out = witness::test::temp_path("copy.onnx");  // in a folder of this process
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace witness::test {

// Each from a literal alone, and a test's own global path from WITNESS_SOURCE_DIR too, never from
// these: the linker keeps one object's copy of an inline variable's initialiser, which may run after
// a global of another object that reads it (kAC1 once read an empty kFairify).
inline const std::string kSourceDir = WITNESS_SOURCE_DIR;
inline const std::string kFairify = WITNESS_SOURCE_DIR "/benchmarks/fairify";

inline std::string source_path(const std::string& rel) { return kSourceDir + "/" + rel; }

// A path for a file the test writes, in a folder of this process (ctest runs tests in parallel).
inline std::string temp_path(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("witness_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

}  // namespace witness::test
