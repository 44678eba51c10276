#include "program/sandbox.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "core/error.h"
#include "core/process.h"
#include "program/process.h"

namespace witness {
namespace {

#if defined(__x86_64__)
constexpr std::uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr std::uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
#error "the native replay sandbox knows the system calls of x86-64 and aarch64 only"
#endif

// What a statically linked C program needs to start, compute, allocate and print. Nothing here
// opens, creates or names a file, starts a process or thread, or talks to the network.
constexpr std::array kAllowed = {
    SYS_read,         SYS_write,           SYS_readv,
    SYS_writev,       SYS_close,           SYS_fstat,
    SYS_newfstatat,   SYS_lseek,           SYS_brk,
    SYS_mmap,         SYS_munmap,          SYS_mremap,
    SYS_mprotect,     SYS_madvise,         SYS_exit,
    SYS_exit_group,   SYS_set_tid_address, SYS_set_robust_list,
    SYS_rseq,         SYS_prlimit64,       SYS_getrandom,
    SYS_futex,        SYS_rt_sigaction,    SYS_rt_sigprocmask,
    SYS_rt_sigreturn, SYS_clock_gettime,   SYS_clock_nanosleep,
    SYS_gettimeofday, SYS_getpid,          SYS_gettid,
    SYS_uname,
#if defined(__x86_64__)
    SYS_arch_prctl,
#endif
};

sock_filter statement(std::uint16_t code, std::uint32_t k) { return sock_filter{code, 0, 0, k}; }
sock_filter jump(std::uint16_t code, std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
  return sock_filter{code, jt, jf, k};
}

// The allowlist, and execveat of `exe_fd` itself (the one exec that starts the program; the
// descriptor is close-on-exec, so the program cannot name it again). Anything else: EPERM.
std::vector<sock_filter> seccomp_program(int exe_fd) {
  constexpr std::uint32_t kAllow = SECCOMP_RET_ALLOW;
  constexpr std::uint32_t kDeny = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
  std::vector<sock_filter> p;
  p.push_back(statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0));
  p.push_back(statement(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  p.push_back(statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
#if defined(__x86_64__)
  p.push_back(jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, 0, 1));  // the x32 ABI's numbers
  p.push_back(statement(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
#endif
  for (const long nr : kAllowed) {
    p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nr), 0, 1));
    p.push_back(statement(BPF_RET | BPF_K, kAllow));
  }
  // execveat(exe_fd, "", argv, envp, AT_EMPTY_PATH): both words of args[0] and args[4] checked.
  constexpr std::uint32_t kLow = 0;  // little-endian: the low word first
  p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(SYS_execveat), 0, 10));
  p.push_back(statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0]) + kLow));
  p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(exe_fd), 0, 6));
  p.push_back(statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0]) + 4 - kLow));
  p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 4));
  p.push_back(statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[4]) + kLow));
  p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(AT_EMPTY_PATH), 0, 2));
  p.push_back(statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[4]) + 4 - kLow));
  p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0));
  p.push_back(statement(BPF_RET | BPF_K, kDeny));
  p.push_back(statement(BPF_RET | BPF_K, kAllow));
  p.push_back(statement(BPF_RET | BPF_K, kDeny));
  return p;
}

// The child before its exec (start_exec_child): system calls only, on the parent's memory.
[[noreturn]] void enter_sandbox(int exe_fd, int null_fd, int out_fd, int err_fd, const sock_fprog& filter,
                                const std::array<rlimit, 5>& limits, char* const* argv) {
  if (dup2(null_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) _exit(126);
  // Every other descriptor the parent had (server sockets, model files) closes; exe_fd is
  // close-on-exec, open for the exec itself.
  for (int fd = 3; fd < exe_fd; ++fd) close(fd);
  if (syscall(SYS_close_range, exe_fd + 1, ~0U, 0) != 0) {
    for (int fd = exe_fd + 1; fd < 65536; ++fd) close(fd);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  const std::array<int, 5> which = {RLIMIT_AS, RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_CORE, RLIMIT_NOFILE};
  for (std::size_t i = 0; i < which.size(); ++i) {
    if (!set_limit_within_inherited(which[i], limits[i])) _exit(126);
  }
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) _exit(126);  // ends with witness (its CPU limit aside)
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(126);
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter) != 0) _exit(126);
  char empty[] = "";
  char* const envp[] = {nullptr};
  syscall(SYS_execveat, exe_fd, empty, argv, envp, AT_EMPTY_PATH);
  _exit(127);
}

}  // namespace

ProcessResult run_sandboxed(const std::string& exe, const std::vector<std::string>& args, const SandboxLimits& limits) {
  int exe_fd = open(exe.c_str(), O_RDONLY | O_CLOEXEC);
  if (exe_fd < 0) throw InternalError(fmt::format("cannot open {}: {}", exe, std::strerror(errno)));
  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  std::array<int, 2> out_pipe{-1, -1};
  std::array<int, 2> err_pipe{-1, -1};
  if (null_fd < 0 || pipe2(out_pipe.data(), O_CLOEXEC) != 0 || pipe2(err_pipe.data(), O_CLOEXEC) != 0) {
    const std::string why = std::strerror(errno);
    for (int fd : {exe_fd, null_fd, out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) {
      if (fd >= 0) close(fd);
    }
    throw InternalError(fmt::format("cannot set up the sandbox of {}: {}", exe, why));
  }
  // A parent started with its standard streams closed hands out 0-2 here: move every descriptor
  // above them, or the child's dup2 onto 0-2 would overwrite one before it is used.
  for (int* fd : {&exe_fd, &null_fd, &out_pipe[0], &out_pipe[1], &err_pipe[0], &err_pipe[1]}) {
    if (*fd > 2) continue;
    const int moved = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
    close(*fd);
    *fd = moved;
    if (moved < 0) throw InternalError(fmt::format("cannot set up the sandbox of {}: {}", exe, std::strerror(errno)));
  }
  std::vector<sock_filter> program = seccomp_program(exe_fd);
  const sock_fprog filter{static_cast<unsigned short>(program.size()), program.data()};
  const auto cpu = static_cast<rlim_t>(std::ceil(limits.seconds)) + 1;
  const std::array<rlimit, 5> rlimits = {{{limits.memory_bytes, limits.memory_bytes},
                                          {cpu, cpu + 1},
                                          {0, 0},  // no file may grow: the program opens none anyway
                                          {0, 0},
                                          {8, 8}}};
  std::vector<std::string> argv_strings = {exe};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(argv_strings.size() + 1);
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);

  auto enter = [&] { enter_sandbox(exe_fd, null_fd, out_pipe[1], err_pipe[1], filter, rlimits, argv.data()); };
  const pid_t pid = start_exec_child(enter);
  const int fork_errno = errno;
  for (int fd : {exe_fd, null_fd, out_pipe[1], err_pipe[1]}) close(fd);
  if (pid < 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    throw InternalError(fmt::format("cannot start {}: {}", exe, std::strerror(fork_errno)));
  }

  ProcessResult r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limits.seconds);
  read_child_output(out_pipe[0], err_pipe[0], limits.seconds, limits.output_bytes, r, limits.cancel);
  // The pipes may close before the program ends (it can close its own stdout): the deadline
  // still holds for the wait.
  int status = 0;
  if (r.timed_out || r.output_limited || r.cancelled) {
    kill(pid, SIGKILL);
  } else {
    while (true) {
      const pid_t w = waitpid(pid, &status, WNOHANG);
      if (w == pid) break;
      if (w < 0 && errno != EINTR) return r;  // cannot happen for our own child; exit_code stays -1
      if (limits.cancel != nullptr && limits.cancel->load()) r.cancelled = true;
      if (std::chrono::steady_clock::now() >= deadline || r.cancelled) {
        r.timed_out = !r.cancelled;
        kill(pid, SIGKILL);
        break;
      }
      usleep(2000);
    }
    if (!r.timed_out && !r.cancelled) {
      if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
      return r;
    }
  }
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return r;
}

}  // namespace witness
