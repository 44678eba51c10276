// A program source written to a fresh temporary folder for one test, removed with the object.
//
//   witness::SourceFile f("agent.c", "int decide(int x) { return x > 0; }\n");
//   witness::Program p = witness::Program::compile(f.path(), "decide");
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace witness {

class SourceFile {
 public:
  SourceFile(const std::string& name, const std::string& text) {
    static int n = 0;
    dir_ = std::filesystem::temp_directory_path() / fmt::format("witness-program-test-{}-{}", getpid(), n++);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / name).string();
    std::ofstream(path_) << text;
  }
  ~SourceFile() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  SourceFile(const SourceFile&) = delete;
  SourceFile& operator=(const SourceFile&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::filesystem::path dir_;
  std::string path_;
};

}  // namespace witness
