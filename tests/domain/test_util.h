// Helpers shared by the domain tests.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"

namespace witness::test {

// Writes `text` to a fresh file under the test temp dir and returns its path.
inline std::string write_temp(const std::string& name, const std::string& text) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "witness_domain_tests";
  std::filesystem::create_directories(dir);
  const std::filesystem::path p = dir / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

// what() of the InputError `f` throws, or a marker that fails the substring checks.
template <typename F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<not an InputError: ") + e.what() + ">";
  }
  return "<no error>";
}

// EXPECT_TRUE(has(what, "feature 'age'")) prints `what` when the substring is missing.
inline ::testing::AssertionResult has(const std::string& text, const std::string& sub) {
  if (text.find(sub) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << sub << "' not found in: " << text;
}

inline std::string repo_path(const std::string& rel) { return std::string(WITNESS_SOURCE_DIR) + "/" + rel; }

}  // namespace witness::test
