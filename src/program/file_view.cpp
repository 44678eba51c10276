#include "program/file_view.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/landlock.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "core/process.h"

extern char** environ;

namespace witness {
namespace {

// The access rights of Landlock ABI 1-5 (linux/landlock.h of Debian 12 knows those of ABI 2).
constexpr std::uint64_t kExecute = 1ULL << 0, kWriteFile = 1ULL << 1, kReadFile = 1ULL << 2, kReadDir = 1ULL << 3;
constexpr std::uint64_t kRefer = 1ULL << 13, kTruncate = 1ULL << 14, kIoctlDev = 1ULL << 15;
constexpr std::uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;

int landlock_abi() {
  static const int abi = [] {
    const long v = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return v > 0 ? static_cast<int>(v) : 0;
  }();
  return abi;
}

// Every right this kernel's Landlock can refuse: handled, so refused unless a rule grants it.
std::uint64_t handled_rights(int abi) {
  std::uint64_t all = (1ULL << 13) - 1;  // ABI 1: execute .. make_sym
  if (abi >= 2) all |= kRefer;
  if (abi >= 3) all |= kTruncate;
  if (abi >= 5) all |= kIoctlDev;
  return all;
}

constexpr std::size_t kMaxOutput = std::size_t{16} << 20;  // each of stdout and stderr (clang -M lists files)

struct Rule {
  std::string path;
  std::uint64_t rights;
};

// The child before its exec (start_exec_child): system calls only, on the parent's memory.
[[noreturn]] void enter_view(const std::vector<Rule>& rules, int abi, const rlimit& memory, int null_fd, int out_fd,
                             int err_fd, const char* exe, char* const* argv, char* const* envp) {
  if (dup2(null_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) _exit(126);
  if (syscall(SYS_close_range, 3, ~0U, 0) != 0) {
    for (int fd = 3; fd < 65536; ++fd) close(fd);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (!set_limit_within_inherited(RLIMIT_AS, memory)) _exit(126);
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) _exit(126);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(126);
  if (abi > 0) {
    const std::uint64_t handled = handled_rights(abi);
    landlock_ruleset_attr attr{};
    attr.handled_access_fs = handled;
    const int ruleset = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0));
    if (ruleset < 0) _exit(126);
    for (const Rule& rule : rules) {
      const int fd = open(rule.path.c_str(), O_PATH | O_CLOEXEC);
      if (fd < 0) continue;  // a folder this system lacks
      struct stat st {};
      if (fstat(fd, &st) != 0) _exit(126);
      landlock_path_beneath_attr beneath{};
      beneath.allowed_access = (S_ISDIR(st.st_mode) ? rule.rights : rule.rights & kFileRights) & handled;
      beneath.parent_fd = fd;
      if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0) != 0) _exit(126);
      close(fd);
    }
    if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) _exit(126);
    close(ruleset);
  }
  execve(exe, argv, envp);
  _exit(127);
}

// argv[0] found in PATH before the child starts (execvp may allocate).
std::string find_executable(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    std::string candidate = (end > start ? dirs.substr(start, end - start) : ".") + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  throw InternalError(fmt::format("cannot run {}: not found in PATH", name));
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

bool file_views_supported() { return landlock_abi() > 0; }

ProcessResult run_in_view(const std::vector<std::string>& argv, const FileView& view, const ViewLimits& limits) {
  if (argv.empty()) throw InternalError("run_in_view: no command");
  const std::string exe = find_executable(argv[0]);
  std::vector<Rule> rules;
  for (const std::string& p : view.read) rules.push_back({p, kExecute | kReadFile | kReadDir});
  for (const std::string& p : view.write) rules.push_back({p, handled_rights(landlock_abi())});
  std::vector<std::string> args = argv;
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "TMPDIR=", 7) != 0) env.emplace_back(*e);
  if (!view.write.empty()) env.push_back("TMPDIR=" + view.write.front());
  std::vector<char*> arg_ptrs = pointers(args), env_ptrs = pointers(env);
  const rlimit memory{limits.memory_bytes, limits.memory_bytes};

  std::array<int, 2> out_pipe{-1, -1}, err_pipe{-1, -1};
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0 || pipe2(out_pipe.data(), O_CLOEXEC) != 0 || pipe2(err_pipe.data(), O_CLOEXEC) != 0) {
    const std::string why = std::strerror(errno);
    for (int fd : {null_fd, out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
      if (fd >= 0) close(fd);
    throw InternalError(fmt::format("cannot start {}: {}", argv[0], why));
  }
  const int abi = landlock_abi();
  auto enter = [&] {
    enter_view(rules, abi, memory, null_fd, out_pipe[1], err_pipe[1], exe.c_str(), arg_ptrs.data(), env_ptrs.data());
  };
  const pid_t pid = start_exec_child(enter);
  const int fork_errno = errno;
  for (int fd : {null_fd, out_pipe[1], err_pipe[1]}) close(fd);
  if (pid < 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    throw InternalError(fmt::format("cannot start {}: {}", argv[0], std::strerror(fork_errno)));
  }
  ProcessResult r;
  read_child_output(out_pipe[0], err_pipe[0], limits.seconds, kMaxOutput, r, limits.cancel);
  if (r.timed_out || r.cancelled || r.output_limited) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!r.timed_out && !r.cancelled && !r.output_limited && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (r.exit_code == 126) throw InternalError(fmt::format("cannot set up the file view of {}", argv[0]));
  return r;
}

}  // namespace witness
