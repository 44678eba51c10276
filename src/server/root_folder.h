// The folder witness serve may read and write: every path a request names is resolved inside it,
// with `..`, absolute paths and symbolic links that lead outside refused.
//
//   witness::RootFolder root("examples");
//   std::filesystem::path p = root.resolve("soid/diabetes/weight.toml");   // absolute, inside
//   std::filesystem::path bad = root.resolve("../etc/passwd");   // throws witness::ForbiddenPath
//   std::string rel = root.relative(p);     // "soid/diabetes/weight.toml"
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

namespace witness {

// A path outside the root (HTTP 403).
class ForbiddenPath : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class RootFolder {
 public:
  // InputError if `dir` is not an existing folder.
  explicit RootFolder(const std::string& dir);
  // The absolute path of `rel` (relative to the root, '/'-separated; "" is the root), with every
  // symbolic link followed. ForbiddenPath when that lies outside the root.
  [[nodiscard]] std::filesystem::path resolve(const std::string& rel) const;
  // Whether an absolute path (symbolic links followed) lies inside the root.
  [[nodiscard]] bool contains(const std::filesystem::path& absolute) const;
  [[nodiscard]] std::string relative(const std::filesystem::path& absolute) const;
  [[nodiscard]] const std::filesystem::path& path() const { return root_; }

 private:
  std::filesystem::path root_;  // canonical
};

}  // namespace witness
