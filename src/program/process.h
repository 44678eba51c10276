// Runs a child process with a time limit and collects what it prints (internal to program/).
//
//   witness::ProcessResult r = witness::run_process({"clang-14", "--version"}, 30.0);
//   bool ok = r.exit_code == 0 && !r.timed_out;
//   std::string version = r.out;                  // what it printed on stdout (stderr in r.err)
#pragma once

#include <string>
#include <vector>

namespace witness {

struct ProcessResult {
  int exit_code = -1;  // -1: killed by a signal or the time limit
  bool timed_out = false;
  bool output_limited = false;  // run_sandboxed: it printed more than allowed and was stopped
  std::string out;              // stdout
  std::string err;              // stderr
};

// argv[0] is looked up in PATH. InternalError if it cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv, double seconds);

}  // namespace witness
