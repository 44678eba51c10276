#include "core/file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/error.h"

namespace witness {

namespace {

std::atomic<int> writes_under_way{0};

// Counts a write_file call while it runs (wait_for_writes).
struct WriteUnderWay {
  WriteUnderWay() { ++writes_under_way; }
  ~WriteUnderWay() { --writes_under_way; }
  WriteUnderWay(const WriteUnderWay&) = delete;
  WriteUnderWay& operator=(const WriteUnderWay&) = delete;
};

}  // namespace

void wait_for_writes(double max_seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(max_seconds);
  while (writes_under_way.load() > 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

std::string read_file(const std::string& path, std::uintmax_t max_bytes) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status)) throw InputError(path, "", "is a directory, expected a file");
  // A device such as /dev/zero would never end; pipes (e.g. /dev/stdin) are fine.
  if (!ec && !std::filesystem::is_regular_file(status) && !std::filesystem::is_fifo(status)) {
    throw InputError(path, "", "not a regular file");
  }
  auto too_long = [&] {
    return InputError(path, "", fmt::format("longer than {} MB, the limit for this file", max_bytes >> 20));
  };
  if (!ec && std::filesystem::is_regular_file(status) && std::filesystem::file_size(path, ec) > max_bytes && !ec) {
    throw too_long();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", fmt::format("cannot open: {}", std::strerror(errno)));
  std::string text;
  std::string chunk(std::size_t{1} << 16, '\0');
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes) throw too_long();  // a pipe, or a file that grew
  }
  if (in.bad()) throw InputError(path, "", "read error");
  return text;
}

void check_writable(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (fs::is_directory(status)) throw InputError(path, "", "is a directory, expected a file to write");
  if (!ec && fs::exists(status) && !fs::is_regular_file(status)) return;  // a device or pipe: written directly
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir, ec)) throw InputError(path, "", fmt::format("cannot write: no folder {}", dir.string()));
  if (::access(dir.c_str(), W_OK) != 0) {
    throw InputError(path, "", fmt::format("cannot write in {}: {}", dir.string(), std::strerror(errno)));
  }
  fs::remove(path + ".witness-tmp", ec);
}

struct AtomicFile::Impl {
  std::string path, target;
  bool direct = false, committed = false;
  std::ofstream out;
};

AtomicFile::AtomicFile(std::string path) : impl_(std::make_unique<Impl>()) {
  namespace fs = std::filesystem;
  impl_->path = std::move(path);
  std::error_code ec;
  const auto status = fs::status(impl_->path, ec);
  if (fs::is_directory(status)) throw InputError(impl_->path, "", "is a directory, expected a file");
  impl_->direct = !ec && fs::exists(status) && !fs::is_regular_file(status);
  impl_->target = impl_->direct ? impl_->path : impl_->path + ".witness-tmp";
  impl_->out.open(impl_->target, std::ios::binary | std::ios::trunc);
  if (!impl_->out) throw InputError(impl_->path, "", fmt::format("cannot open for writing: {}", std::strerror(errno)));
}

AtomicFile::~AtomicFile() {
  if (impl_->committed || impl_->direct) return;
  impl_->out.close();
  std::error_code ignored;
  std::filesystem::remove(impl_->target, ignored);
}

std::ostream& AtomicFile::stream() { return impl_->out; }

void AtomicFile::commit() {
  Impl& f = *impl_;
  f.out.flush();
  const int err = errno;
  const bool ok = static_cast<bool>(f.out);
  f.out.close();
  if (!ok || !f.out) {
    if (!f.direct) {
      std::error_code ignored;
      std::filesystem::remove(f.target, ignored);
    }
    f.committed = true;
    throw InputError(f.path, "", fmt::format("writing failed: {}", std::strerror(err)));
  }
  f.committed = true;
  if (f.direct) return;
  std::error_code ec;
  std::filesystem::rename(f.target, f.path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(f.target, ignored);
    throw InputError(f.path, "", fmt::format("cannot write: {}", ec.message()));
  }
}

void write_file(const std::string& path, std::string_view text) {
  const WriteUnderWay under_way;
  AtomicFile f(path);
  f.stream().write(text.data(), static_cast<std::streamsize>(text.size()));
  f.commit();
}

}  // namespace witness
