// Whole-file reads with the error every loader wants:
//
//   #include "core/error.h"
//   try {
//     witness::write_file("/tmp/witness-example.txt", "hello\n");   // all or nothing
//     std::string text = witness::read_file("/tmp/witness-example.txt");
//   } catch (const witness::InputError& e) {
//     std::cerr << e.what() << '\n';   // model.json: cannot open: No such file or directory
//   }
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace witness {

// Reads a whole file; throws InputError naming it when it is missing, a directory, a device,
// unreadable, or longer than `max_bytes` (pipes are read up to the limit).
std::string read_file(const std::string& path, std::uintmax_t max_bytes = std::uintmax_t{4} << 30);
// Writes a whole file, all or nothing: the text goes to a temporary file beside it that is renamed
// over `path` once complete (devices and pipes such as /dev/stdout are written directly). Throws
// InputError naming the file when it cannot be written (a missing folder, a full disk).
void write_file(const std::string& path, std::string_view text);
// A file written as a stream, all or nothing: the bytes go to `path`.witness-tmp, renamed over
// `path` by commit(); a file never committed (an error, an exception) is removed. Devices and
// pipes are written directly. Throws InputError naming `path` when it cannot be written.
//   witness::AtomicFile f("pairs.csv");  f.stream() << "a,b\n";  f.commit();
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  [[nodiscard]] std::ostream& stream();
  void commit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};
// Waits (at most max_seconds) until no write_file call is under way: a process about to end on a
// deadline lets a file being written (a checkpoint) be completed first.
void wait_for_writes(double max_seconds);
// Checks, before a run, that write_file(path, ...) can succeed: not a folder, and its folder exists
// and is writable. Throws InputError naming the file, so a long run does not end in a lost answer.
// A temporary file an earlier, killed write left beside it (path.witness-tmp) is removed.
void check_writable(const std::string& path);

}  // namespace witness
