// Runs a tool on an untrusted program (clang-14 compiling a client's upload) so that it sees only
// the files it is meant to: a Landlock ruleset (Linux 5.13+) lets the child read the folders of
// `view.read` and write those of `view.write`, nothing else, whatever its input names (#include,
// .incbin, linker scripts); its address space is capped too. Kernels without Landlock run it
// without the view (file_views_supported() says which), under the same limits.
//
//   witness::FileView view{{"/usr", "/home/me/agent"}, {"/tmp/witness-program-x"}};
//   witness::ProcessResult r = witness::run_in_view({"clang-14", "-c", "agent.c"}, view, {.seconds = 30});
//   bool ok = r.exit_code == 0;  // -1: killed (a signal, the time limit or the cancel flag)
#pragma once

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

#include "program/process.h"

namespace witness {

struct FileView {
  std::vector<std::string> read;   // folders (or files) readable and executable; missing ones are skipped
  std::vector<std::string> write;  // folders the tool may also create, write and remove files in
};

struct ViewLimits {
  double seconds = 120.0;
  std::size_t memory_bytes = std::size_t{2} << 30;  // address space
  const std::atomic<bool>* cancel = nullptr;
};

// True when this kernel enforces file views (Landlock); otherwise run_in_view only limits.
[[nodiscard]] bool file_views_supported();

// argv[0] is looked up in PATH; the child's environment is the parent's with TMPDIR set to the
// first write folder (clang's temporary files). InternalError if it cannot be started.
ProcessResult run_in_view(const std::vector<std::string>& argv, const FileView& view, const ViewLimits& limits);

}  // namespace witness
