#include "core/process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/error.h"
#include "core/sanitizer.h"

extern char** environ;  // POSIX requires it but no header has to declare it

namespace witness {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kChunk = 65536;
constexpr std::size_t kTailBytes = 2048;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

enum class Read : std::uint8_t { Data, Empty, End };

// One non-blocking read appended to `buf`. At end of file (or a read error) closes `fd`.
Read read_once(int& fd, std::string& buf) {
  const std::size_t old = buf.size();
  buf.resize(old + kChunk);
  ssize_t n = 0;
  do {
    n = ::read(fd, buf.data() + old, kChunk);
  } while (n < 0 && errno == EINTR);
  buf.resize(old + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
  if (n > 0) return Read::Data;
  if (n < 0 && errno == EAGAIN) return Read::Empty;
  close_fd(fd);
  return Read::End;
}

void keep_tail(std::string& buf) {
  if (buf.size() > kTailBytes) buf.erase(0, buf.size() - kTailBytes);
}

}  // namespace

ChildProcess::ChildProcess(const std::string& command) : command_(command) {
  // Without this, writing to a child that has exited kills witness with SIGPIPE.
  static std::once_flag ignore_sigpipe;
  std::call_once(ignore_sigpipe, [] { std::signal(SIGPIPE, SIG_IGN); });

  // pipes[i] = {read end, write end} for the child's fd i. O_CLOEXEC: the child keeps only the
  // ends dup2'ed onto 0, 1 and 2, so it (and any other child we start) never holds our ends open,
  // and we see EOF when it exits.
  std::array<std::array<int, 2>, 3> pipes{{{-1, -1}, {-1, -1}, {-1, -1}}};
  auto fail = [&](int err) {
    for (auto& p : pipes) {
      close_fd(p[0]);
      close_fd(p[1]);
    }
    return InputError(command, "", fmt::format("cannot start: {}", std::strerror(err)));
  };
  for (auto& p : pipes) {
    if (::pipe2(p.data(), O_CLOEXEC) != 0) throw fail(errno);
  }

  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  int rc = posix_spawn_file_actions_adddup2(&actions, pipes[0][0], 0);
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, pipes[1][1], 1);
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, pipes[2][1], 2);
  // The child gets SIGPIPE back (ignored signals survive exec, and `yes | head` needs it), an empty
  // signal mask whatever thread starts it, and its own process group so that kill() also reaches
  // the commands `sh -c` starts.
  sigset_t none;
  sigset_t sigpipe;
  sigemptyset(&none);
  sigemptyset(&sigpipe);
  sigaddset(&sigpipe, SIGPIPE);
  if (rc == 0) rc = posix_spawnattr_setsigmask(&attr, &none);
  if (rc == 0) rc = posix_spawnattr_setsigdefault(&attr, &sigpipe);
  if (rc == 0) rc = posix_spawnattr_setpgroup(&attr, 0);
  if (rc == 0)
    rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  std::string sh = "sh";
  std::string dash_c = "-c";
  std::string cmd = command;
  const std::array<char*, 4> argv{sh.data(), dash_c.data(), cmd.data(), nullptr};
  if (rc == 0) rc = posix_spawn(&pid_, "/bin/sh", &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw fail(rc);

  // The child's ends now live in the child only.
  close_fd(pipes[0][0]);
  close_fd(pipes[1][1]);
  close_fd(pipes[2][1]);
  stdin_ = pipes[0][1];
  stdout_ = pipes[1][0];
  stderr_ = pipes[2][0];
  // Non-blocking on our side only: poll() says which end is ready, and a write never waits for a
  // child that has stopped reading.
  for (const int fd : {stdin_, stdout_, stderr_}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

ChildProcess::~ChildProcess() {
  // EOF on stdin asks a well-behaved child to exit; closing stdout and stderr makes a chatty one
  // die of SIGPIPE instead of blocking on a full pipe.
  close_fd(stdin_);
  close_fd(stdout_);
  close_fd(stderr_);
  if (reap(std::chrono::seconds(1))) return;
  kill();
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

void ChildProcess::take_lines(std::size_t& missing, std::vector<std::string>& out) {
  std::size_t pos = 0;
  while (missing > 0) {
    const std::size_t nl = stdout_buf_.find('\n', pos);
    if (nl == std::string::npos) break;
    const std::size_t end = (nl > pos && stdout_buf_[nl - 1] == '\r') ? nl - 1 : nl;
    out.emplace_back(stdout_buf_, pos, end - pos);
    pos = nl + 1;
    --missing;
  }
  stdout_buf_.erase(0, pos);
}

void ChildProcess::read_stderr() {
  read_once(stderr_, stderr_buf_);
  keep_tail(stderr_buf_);
}

ChildProcess::Status ChildProcess::exchange(std::string_view input, std::size_t lines, std::vector<std::string>& out,
                                            Clock::time_point deadline) {
  std::size_t missing = lines;
  take_lines(missing, out);
  if (!input.empty() && stdin_ < 0) return Status::Closed;
  // Keep reading stdout even once enough lines are in: a child answering early must not block
  // on a full pipe while we are still writing.
  while (missing > 0 || !input.empty()) {
    if (missing > 0 && stdout_ < 0) return Status::Closed;
    const auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) return Status::Timeout;
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    // poll() ignores negative fds.
    std::array<pollfd, 3> fds{{{input.empty() ? -1 : stdin_, POLLOUT, 0}, {stdout_, POLLIN, 0}, {stderr_, POLLIN, 0}}};
    const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(std::min<decltype(ms)>(ms, INT_MAX)));
    if (ready < 0 && errno != EINTR) throw InternalError(fmt::format("poll: {}", std::strerror(errno)));
    if (ready <= 0) continue;  // EINTR or timeout: the deadline is checked at the top

    if (fds[1].revents != 0 && read_once(stdout_, stdout_buf_) == Read::Data) take_lines(missing, out);
    if (fds[2].revents != 0) read_stderr();
    if (fds[0].revents != 0) {
      const ssize_t n = ::write(stdin_, input.data(), input.size());
      if (n >= 0) {
        input.remove_prefix(static_cast<std::size_t>(n));
      } else if (errno != EAGAIN && errno != EINTR) {
        // EPIPE: the child closed its stdin (usually by exiting). Whatever it wrote before that is
        // already in the stdout pipe, so take that before deciding.
        close_fd(stdin_);
        input = {};
        while (stdout_ >= 0 && missing > 0 && read_once(stdout_, stdout_buf_) == Read::Data) take_lines(missing, out);
        if (missing > 0) return Status::Closed;
      }
    }
  }
  return Status::Ok;
}

void ChildProcess::close_input() { close_fd(stdin_); }

std::size_t ChildProcess::unread_output() {
  for (int i = 0; i < 64 && stdout_ >= 0; ++i)
    if (read_once(stdout_, stdout_buf_) != Read::Data) break;
  return stdout_buf_.size();
}

std::string ChildProcess::stderr_tail() {
  // Bounded, so that a child that never stops writing cannot keep us here.
  for (int i = 0; i < 64 && stderr_ >= 0; ++i) {
    if (read_once(stderr_, stderr_buf_) != Read::Data) break;
    keep_tail(stderr_buf_);
  }
  const std::size_t end = stderr_buf_.find_last_not_of(" \t\r\n");
  return end == std::string::npos ? std::string() : stderr_buf_.substr(0, end + 1);
}

bool ChildProcess::reap(std::chrono::milliseconds wait) {
  const auto deadline = Clock::now() + wait;
  while (!reaped_) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      wait_status_ = status;
      reaped_ = true;
    } else if (r < 0 && errno != EINTR) {
      reaped_ = true;  // ECHILD: someone else reaped it (SIGCHLD ignored); the status is lost
    } else if (r == 0) {
      if (Clock::now() >= deadline) return false;
      // Polling is the simple portable way to wait with a limit for one particular child.
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  return true;
}

std::string ChildProcess::exit_description(std::chrono::milliseconds wait) {
  if (!reap(wait)) return "still running";
  if (!wait_status_) return "ended with unknown status";
  const int s = *wait_status_;
  if (WIFEXITED(s)) return fmt::format("exited with status {}", WEXITSTATUS(s));
  if (WIFSIGNALED(s)) return fmt::format("killed by signal {} ({})", WTERMSIG(s), ::strsignal(WTERMSIG(s)));
  return fmt::format("ended with wait status {}", s);
}

void ChildProcess::kill() {  // NOLINT(readability-make-member-function-const): it ends the child
  // Never once reaped: the process group id could then belong to someone else.
  if (!reaped_ && pid_ > 0) ::kill(-pid_, SIGKILL);
}

void ChildProcess::interrupt() {  // NOLINT(readability-make-member-function-const): it signals the child
  if (!reaped_ && pid_ > 0) ::kill(-pid_, SIGINT);
}

namespace {
std::atomic<bool> many_threads_allocate{false};
}  // namespace

void note_many_threads_allocate() { many_threads_allocate = true; }

Isolated run_isolated(const std::function<std::string()>& work, std::chrono::milliseconds timeout) {
  Isolated r;
  // ASan's allocator has no fork handler: a child forked while another thread holds its lock waits
  // forever at its first malloc (seen in witness serve's tests). Sanitized builds are for testing,
  // so there the work runs in this process (NotRun). glibc's malloc and tcmalloc lock themselves
  // around fork, so release builds always isolate.
  if (kAddressSanitizer && many_threads_allocate) return r;
  int fds[2];
  if (pipe(fds) != 0) return r;
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return r;
  }
  if (pid == 0) {
    // Killed with the parent (a looping HDF5 read outlived a killed witness by 44 minutes); the
    // check covers a parent that died before the request.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(5);
    ::close(fds[0]);
    const int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, STDERR_FILENO);
    std::string message;
    try {
      message = "R" + work();  // the mark tells a returned "" from a silent crash
    } catch (...) {
      _exit(4);
    }
    const char* data = message.data();
    std::size_t left = message.size();
    while (left > 0) {
      const ssize_t n = write(fds[1], data, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) _exit(5);
      data += n;
      left -= static_cast<std::size_t>(n);
    }
    _exit(0);
  }
  ::close(fds[1]);
  int fd = fds[0];
  std::string message;
  const auto deadline = Clock::now() + timeout;
  bool timed_out = false;
  while (fd >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{fd, POLLIN, 0};
    const int ready = poll(&pfd, 1, static_cast<int>(std::min<std::int64_t>(left.count(), INT_MAX)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    if (ready > 0) read_once(fd, message);  // closes fd at the end
  }
  close_fd(fd);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    r.outcome = Isolated::Outcome::Timeout;
  } else if (WIFSIGNALED(status)) {
    r.outcome = Isolated::Outcome::Crashed;
    r.signal = WTERMSIG(status);
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !message.empty() && message[0] == 'R') {
    r.outcome = Isolated::Outcome::Returned;
    r.message = message.substr(1);
  } else {
    r.outcome = Isolated::Outcome::Crashed;
  }
  return r;
}

pid_t start_exec_child(void (*in_child)(void*), void* context) {
  // A signal handler of ours running in the child would run on our memory: every signal waits
  // until the child has reset its handlers (the child's handler table is its own copy).
  sigset_t all;
  sigset_t before;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &before);
  // posix_spawn is the safe form of vfork, but it cannot run `in_child`; the child here makes
  // system calls only, as posix_spawn's own child does.
  // NOLINTBEGIN(clang-analyzer-security.insecureAPI.vfork,clang-analyzer-unix.Vfork)
  const pid_t pid = vfork();
  if (pid == 0) {
    for (int sig = 1; sig < NSIG; ++sig) {
      struct sigaction now {};
      if (sigaction(sig, nullptr, &now) == 0 && now.sa_handler != SIG_IGN && now.sa_handler != SIG_DFL) {
        struct sigaction fallback {};
        fallback.sa_handler = SIG_DFL;
        sigaction(sig, &fallback, nullptr);
      }
    }
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
    in_child(context);
    _exit(127);
  }
  // NOLINTEND(clang-analyzer-security.insecureAPI.vfork,clang-analyzer-unix.Vfork)
  const int saved = errno;
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  errno = saved;
  return pid;
}

}  // namespace witness
