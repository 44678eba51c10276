#include "core/file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace witness {

std::string read_file(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status)) throw InputError(path, "", "is a directory, expected a file");
  // A device such as /dev/zero would never end; pipes (e.g. /dev/stdin) are fine.
  if (!ec && !std::filesystem::is_regular_file(status) && !std::filesystem::is_fifo(status)) {
    throw InputError(path, "", "not a regular file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", fmt::format("cannot open: {}", std::strerror(errno)));
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw InputError(path, "", "read error");
  return std::move(buf).str();
}

}  // namespace witness
