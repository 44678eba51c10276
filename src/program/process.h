// Runs a child process with a time limit and collects what it prints (internal to program/).
//
//   witness::ProcessResult r = witness::run_process({"clang-14", "--version"}, 30.0);
//   bool ok = r.exit_code == 0 && !r.timed_out;
//   std::string version = r.out;                  // what it printed on stdout (stderr in r.err)
#pragma once

#include <sys/resource.h>

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

namespace witness {

struct ProcessResult {
  int exit_code = -1;  // -1: killed by a signal or the time limit
  bool timed_out = false;
  bool output_limited = false;  // run_sandboxed: it printed more than allowed and was stopped
  bool cancelled = false;       // the cancel flag was raised (the child was killed)
  std::string out;              // stdout
  std::string err;              // stderr
};

// argv[0] is looked up in PATH. InternalError if it cannot be started. The child is killed when
// `seconds` pass or `cancel` (if set) becomes true.
ProcessResult run_process(const std::vector<std::string>& argv, double seconds,
                          const std::atomic<bool>* cancel = nullptr);

// Reads a child's stdout and stderr pipes into r.out and r.err (both closed on return) until both
// end, `seconds` pass (r.timed_out), one exceeds `max_bytes` (r.output_limited) or `cancel` is
// raised (r.cancelled). The caller kills the child in the last three cases and waits for it.
void read_child_output(int out_fd, int err_fd, double seconds, std::size_t max_bytes, ProcessResult& r,
                       const std::atomic<bool>* cancel = nullptr);

// setrlimit(resource, wanted) lowered to the hard limit this process already has: a child of a
// bounded process (a server job) may not raise it, and must not fail for asking. For the code
// between fork and exec: system calls only. False if setrlimit fails.
bool set_limit_within_inherited(int resource, rlimit wanted);

}  // namespace witness
