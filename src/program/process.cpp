#include "program/process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/error.h"

extern char** environ;

namespace witness {

void read_child_output(int out_fd, int err_fd, double seconds, std::size_t max_bytes, ProcessResult& r,
                       const std::atomic<bool>* cancel) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::array<pollfd, 2> fds{{{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}}};
  int open = 2;
  std::array<char, 4096> buf{};
  while (open > 0 && !r.output_limited) {
    const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      r.timed_out = true;
      break;
    }
    if (cancel != nullptr && cancel->load()) {
      r.cancelled = true;
      break;
    }
    // In slices, so that a raised cancel flag is seen within a tenth of a second.
    const int n = poll(fds.data(), fds.size(), std::min(100, static_cast<int>(left * 1000) + 1));
    if (n < 0 && errno != EINTR) break;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t got = read(fds[i].fd, buf.data(), buf.size());
      if (got <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open;
        continue;
      }
      std::string& to = i == 0 ? r.out : r.err;
      to.append(buf.data(), static_cast<std::size_t>(got));
      if (to.size() > max_bytes) {
        to.resize(max_bytes);
        r.output_limited = true;
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
}

ProcessResult run_process(const std::vector<std::string>& argv, double seconds, const std::atomic<bool>* cancel) {
  std::array<int, 2> out_pipe{};
  std::array<int, 2> err_pipe{};
  // Close-on-exec: a child another thread starts meanwhile must not hold these pipes open.
  if (pipe2(out_pipe.data(), O_CLOEXEC) != 0 || pipe2(err_pipe.data(), O_CLOEXEC) != 0) {
    throw InternalError(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  posix_spawn_file_actions_addclose(&actions, out_pipe[0]);
  posix_spawn_file_actions_addclose(&actions, err_pipe[0]);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    throw InternalError(fmt::format("cannot run {}: {}", argv[0], std::strerror(rc)));
  }
  ProcessResult r;
  read_child_output(out_pipe[0], err_pipe[0], seconds, std::string().max_size(), r, cancel);
  if (r.timed_out || r.cancelled) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!r.timed_out && !r.cancelled && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

bool set_limit_within_inherited(int resource, rlimit wanted) {
  rlimit inherited{};
  if (getrlimit(resource, &inherited) == 0 && inherited.rlim_max != RLIM_INFINITY) {
    wanted.rlim_cur = std::min(wanted.rlim_cur, inherited.rlim_max);
    wanted.rlim_max = std::min(wanted.rlim_max, inherited.rlim_max);
  }
  return setrlimit(resource, &wanted) == 0;
}

}  // namespace witness
