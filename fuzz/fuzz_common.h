// What the fuzz targets share: the input as text, a private folder for loaders that take a path,
// and the verdict on what a parser may do with an input. Returning a value or throwing a
// witness::Error is fine (most inputs are rejected); an InternalError is a bug by definition (an
// invariant the parser should have kept, broken by the input), and so is any other exception:
// both abort, which libFuzzer and replay_main.cpp report as a crash.
#pragma once

#include <stdlib.h>  // mkdtemp

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <typeinfo>

#include "core/error.h"

namespace witness::fuzz {

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

[[noreturn]] inline void bug(const char* kind, const char* what) {
  std::fprintf(stderr, "fuzz: %s: %s\n", kind, what);
  std::fflush(stderr);
  std::abort();
}

// Runs one input through `f`, sorting what it throws as above.
template <typename F>
void run_one(F&& f) {
  try {
    f();
  } catch (const InternalError& e) {
    bug("InternalError (a bug, not a rejection)", e.what());
  } catch (const Error&) {
    // The input was rejected: the expected outcome for most of them.
  } catch (const std::exception& e) {
    bug(typeid(e).name(), e.what());
  } catch (...) {
    bug("exception", "not a std::exception");
  }
}

namespace detail {
// Leaked on purpose: the exit handler below reads it after static destructors may have run.
inline std::string* temp_dir_path = nullptr;
inline void remove_temp_dir() {
  std::error_code ec;
  std::filesystem::remove_all(*temp_dir_path, ec);
}
}  // namespace detail

// A folder of this process's own (mkdtemp under $TMPDIR or /tmp), made at the first call and
// removed at exit; a crash leaves it behind.
inline const std::string& temp_dir() {
  if (detail::temp_dir_path == nullptr) {
    std::error_code ec;
    std::filesystem::path base = std::filesystem::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string name = (base / "witness-fuzz-XXXXXX").string();
    if (mkdtemp(name.data()) == nullptr) {
      std::perror("fuzz: mkdtemp");
      std::abort();
    }
    detail::temp_dir_path = new std::string(name);
    std::atexit(detail::remove_temp_dir);
  }
  return *detail::temp_dir_path;
}

// Writes `bytes` to temp_dir()/name (replacing it) and returns the path.
inline std::string write_temp(const std::string& name, const std::string& bytes) {
  std::string path = temp_dir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) bug("setup", ("cannot write " + path).c_str());
  return path;
}

}  // namespace witness::fuzz
