// A main() for the fuzz targets without libFuzzer, so that they build with any compiler: it runs
// LLVMFuzzerTestOneInput once on every file named, and on every regular file inside every folder
// named (recursively, in sorted order). The corpus replays of the normal build (fuzz.<name> in
// ctest, fuzz/replay.cmake) run it on fuzz/corpus/<name>/; a bug aborts it as it would libFuzzer.
//
//   fuzz_replay_csv fuzz/corpus/csv            # "fuzz_replay_csv: 14 inputs, 0.2 s"
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

constexpr std::size_t kMaxLen = std::size_t{1} << 20;  // as the fuzzers' -max_len

bool collect(const std::filesystem::path& arg, std::vector<std::filesystem::path>& files) {
  std::error_code ec;
  if (std::filesystem::is_directory(arg, ec)) {
    std::vector<std::filesystem::path> found;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(arg, ec)) {
      if (entry.is_regular_file()) found.push_back(entry.path());
    }
    if (ec) return false;
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
    return true;
  }
  if (!std::filesystem::is_regular_file(arg, ec)) return false;
  files.push_back(arg);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const char* self = argc > 0 ? argv[0] : "replay";
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_FOLDER...\n", self);
    return 2;
  }
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    if (!collect(argv[i], files)) {
      std::fprintf(stderr, "%s: cannot read %s\n", self, argv[i]);
      return 2;
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "%s: no inputs\n", self);
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.eof() && in.fail()) {
      std::fprintf(stderr, "%s: cannot read %s\n", self, file.c_str());
      return 2;
    }
    if (bytes.size() > kMaxLen) bytes.resize(kMaxLen);
    std::fprintf(stderr, "%s: %s\n", self, file.c_str());
    (void)LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  std::printf("%s: %zu inputs, %.1f s\n", self, files.size(), took.count());
  return 0;
}
