#include "server/root_folder.h"

#include <fmt/format.h>

#include "core/error.h"

namespace witness {

RootFolder::RootFolder(const std::string& dir) {
  std::error_code ec;
  root_ = std::filesystem::canonical(dir, ec);
  if (ec || !std::filesystem::is_directory(root_)) throw InputError(dir, "", "--root: not an existing folder");
}

bool RootFolder::contains(const std::filesystem::path& absolute) const {
  std::error_code ec;
  // weakly_canonical follows the links of the part that exists, so a link to outside is seen.
  const std::filesystem::path p = std::filesystem::weakly_canonical(absolute, ec);
  if (ec) return false;
  auto r = root_.begin();
  auto i = p.begin();
  for (; r != root_.end(); ++r, ++i) {
    if (i == p.end() || *i != *r) return false;
  }
  return true;
}

std::filesystem::path RootFolder::resolve(const std::string& rel) const {
  if (rel.find('\0') != std::string::npos) throw ForbiddenPath("a path with a NUL byte");
  const std::filesystem::path given(rel);
  if (given.is_absolute()) throw ForbiddenPath(fmt::format("'{}': paths are relative to the root", rel));
  for (const auto& part : given) {
    if (part == "..") throw ForbiddenPath(fmt::format("'{}': '..' is not allowed", rel));
  }
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(root_ / given, ec);
  if (ec || !contains(p)) throw ForbiddenPath(fmt::format("'{}' lies outside the root", rel));
  return p;
}

std::string RootFolder::relative(const std::filesystem::path& absolute) const {
  return std::filesystem::relative(absolute, root_).generic_string();
}

}  // namespace witness
