// Ctrl-C: the first SIGINT raises a flag that every job's cancel is wired to, so the run stops the
// way a time limit stops it and prints what it knows (sound shares, pairs found so far); main then
// exits 130. A second SIGINT ends the process at once.
#include <unistd.h>

#include <atomic>
#include <csignal>

#include "cli/cli.h"

namespace witness::cli {
namespace {

std::atomic<bool> interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the flag is raised in a signal handler");

extern "C" void on_interrupt(int /*signal*/) {
  if (interrupted.exchange(true)) {
    constexpr char kMessage[] = "\nwitness: interrupted again: stopping now\n";
    (void)!::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
    ::_exit(130);
  }
  constexpr char kMessage[] = "\nwitness: interrupted: stopping and printing what is known (Ctrl-C again to quit)\n";
  (void)!::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
}

}  // namespace

void catch_interrupts() {
  struct sigaction old {};
  ::sigaction(SIGINT, nullptr, &old);
  // A shell starts background jobs with SIGINT ignored: keep it so (Ctrl-C is not for them).
  if (old.sa_handler == SIG_IGN) return;  // NOLINT(cppcoreguidelines-pro-type-union-access)
  struct sigaction action {};
  action.sa_handler = on_interrupt;  // NOLINT(cppcoreguidelines-pro-type-union-access)
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // reads and writes in progress go on; the run polls the flag
  ::sigaction(SIGINT, &action, nullptr);
}

const std::atomic<bool>& interrupt_flag() { return interrupted; }

bool was_interrupted() { return interrupted.load(); }

}  // namespace witness::cli
