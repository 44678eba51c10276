// Runs an untrusted native executable (the replay of a user's program) so that it can affect
// nothing outside itself: before its first instruction (constructors included) it holds no file
// descriptors but /dev/null and two pipes, may make only the system calls a computing program
// needs (no open, no socket, no fork, no exec: a seccomp-bpf allowlist), and runs under limits of
// memory, CPU time, file size and output size. Linux x86-64 and aarch64.
//
//   witness::SandboxLimits limits;
//   limits.seconds = 10.0;
//   witness::ProcessResult r = witness::run_sandboxed("/tmp/witness-program-x/native", {"3", "0x1p-2"}, limits);
//   bool ok = r.exit_code == 0;  // r.out: what it printed (at most limits.output_bytes)
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "program/process.h"

namespace witness {

struct SandboxLimits {
  double seconds = 10.0;                            // wall time; CPU time is capped at the same
  std::size_t memory_bytes = std::size_t{1} << 30;  // address space
  std::size_t output_bytes = std::size_t{1} << 20;  // stdout and stderr each; more ends the run
  const std::atomic<bool>* cancel = nullptr;        // raised: the run is killed (r.cancelled)
};

// Runs `exe` (a statically linked executable: no dynamic loader, which would need to open files)
// with `args` and an empty environment. A system call outside the allowlist fails with EPERM.
// InternalError when the sandbox cannot be set up (the program is then not run at all).
ProcessResult run_sandboxed(const std::string& exe, const std::vector<std::string>& args, const SandboxLimits& limits);

}  // namespace witness
