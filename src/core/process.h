// A child process behind three pipes, spoken to line by line with a deadline:
//
//   #include "core/error.h"
//   witness::ChildProcess child("python3 model_server.py");
//   std::vector<std::string> answers;
//   auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
//   auto status = child.exchange("0.5 1 3\n0.2 0 1\n", 2, answers, deadline);   // two lines, two answers
//   if (status == witness::ChildProcess::Status::Timeout) child.kill();
//   if (status != witness::ChildProcess::Status::Ok)
//     throw witness::InputError(child.command(), "", child.exit_description() + ": " + child.stderr_tail());
//
// or a function of this program run in a forked child, so that a library crash cannot take us down:
//
//   const witness::Isolated r = witness::run_isolated([] { return std::string(); }, std::chrono::seconds(30));
//   if (r.outcome == witness::Isolated::Outcome::Crashed) { /* r.signal, r.message */ }
//
// or a child that sets its own limits before it execs (system calls only in between):
//
//   auto enter = [&] { setrlimit(RLIMIT_AS, &limit); execv(path, argv); _exit(127); };
//   const pid_t pid = witness::start_exec_child(enter);
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace witness {

// Not thread-safe: one owner talks to the child. SIGPIPE is ignored process-wide from the first
// construction on, so that writing to a dead child is an error (EPIPE), not the death of witness.
class ChildProcess {
 public:
  enum class Status : std::uint8_t { Ok, Closed, Timeout };

  // Starts `/bin/sh -c command` in its own process group, with pipes to its stdin, stdout and
  // stderr. Throws InputError(command, "", "cannot start: <strerror>") if that fails.
  explicit ChildProcess(const std::string& command);
  // Closes the pipes, waits up to 1 s for the child to exit, then kills its process group and reaps it.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Writes all of `input` to the child's stdin while reading its stdout until `lines` complete lines
  // ('\n'-terminated, a trailing '\r' stripped) have arrived, appending them (without '\n') to `out`.
  // stdin, stdout and stderr are serviced together with poll(), so a child that answers line by line
  // or writes a lot to stderr never deadlocks us. Bytes after the last requested line are kept for
  // the next call. Closed: the child closed its stdout or stdin (exited) before `lines` lines arrived;
  // Timeout: `deadline` passed first.
  Status exchange(std::string_view input, std::size_t lines, std::vector<std::string>& out,
                  std::chrono::steady_clock::time_point deadline);
  // Closes the child's stdin: end of input, after which a well-behaved child exits.
  void close_input();
  // Bytes the child wrote to stdout that no exchange has asked for yet (reads what is there now,
  // without waiting): a protocol check for children that print more than they were asked.
  std::size_t unread_output();
  // The last 2 KiB the child wrote to stderr, trailing whitespace trimmed.
  std::string stderr_tail();
  // "exited with status N" or "killed by signal N (Killed)" once the child has ended (waiting up to
  // `wait` for that), else "still running".
  std::string exit_description(std::chrono::milliseconds wait = std::chrono::milliseconds(200));
  // SIGKILL to the child's process group now (after a timeout).
  void kill();
  // SIGINT to the child's process group: a polite stop, which the child may answer.
  void interrupt();
  [[nodiscard]] const std::string& command() const { return command_; }

 private:
  // Moves up to `missing` complete lines from stdout_buf_ to `out`, counting `missing` down.
  void take_lines(std::size_t& missing, std::vector<std::string>& out);
  void read_stderr();
  // Reaps the child if it ends within `wait`; true once it has been reaped.
  bool reap(std::chrono::milliseconds wait);

  std::string command_;
  pid_t pid_ = -1;
  int stdin_ = -1;  // our ends of the pipes; -1 once closed
  int stdout_ = -1;
  int stderr_ = -1;
  std::string stdout_buf_;  // read but not yet returned
  std::string stderr_buf_;  // at most the last 2 KiB
  bool reaped_ = false;
  std::optional<int> wait_status_;  // as from waitpid(); empty if reaped but unknown (ECHILD)
};

// What became of a function run by run_isolated.
struct Isolated {
  enum class Outcome : std::uint8_t {
    Returned,  // the function returned; `message` is what it returned
    Crashed,   // the child died by a signal (`signal`), or exited without a message (a sanitizer's exit 1)
    Timeout,   // it did not finish in time and was killed
    NotRun,    // no child was started (pipe or fork failed; see note_many_threads_allocate): the caller
               // may run the work itself
  };
  Outcome outcome = Outcome::NotRun;
  std::string message;
  int signal = 0;  // Crashed by a signal: its number
};

// Runs `work` in a forked child (stderr to /dev/null: a crash report is not ours to print) and
// passes back the string it returns; kills the child after `timeout`. The child runs only `work`
// and exits: fork from a thread-free moment (the loaders do), since only the forking thread lives on.
Isolated run_isolated(const std::function<std::string()>& work, std::chrono::milliseconds timeout);
// Called by a process whose threads allocate while others fork (witness serve). Only sanitized
// builds heed it: their run_isolated then answers NotRun (see process.cpp).
void note_many_threads_allocate();

// Starts a child that borrows this process's memory until it execs (vfork, as posix_spawn does),
// so that starting it costs the same however large this process is (fork copied the page tables:
// 0.4 s a start under AddressSanitizer). `in_child` runs in the child, may make system calls only
// (no allocation, no locks) and must end in an exec or _exit; this thread waits until it has.
// Signals stay blocked until the child's handlers are reset to their defaults. Returns the child's
// pid, or -1 with errno set.
pid_t start_exec_child(void (*in_child)(void*), void* context);
template <class InChild>
pid_t start_exec_child(InChild& in_child) {
  return start_exec_child([](void* c) { (*static_cast<InChild*>(c))(); }, &in_child);
}

}  // namespace witness
