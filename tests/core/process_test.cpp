#include "core/process.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"

namespace witness {
namespace {

using Clock = std::chrono::steady_clock;
using Status = ChildProcess::Status;

Clock::time_point in_seconds(double s) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

TEST(ChildProcess, CatEchoesLinesAcrossCalls) {
  ChildProcess child("cat");
  EXPECT_EQ(child.command(), "cat");
  std::vector<std::string> out;
  ASSERT_EQ(child.exchange("a\nb\r\nc\n", 3, out, in_seconds(5)), Status::Ok);
  EXPECT_EQ(out, (std::vector<std::string>{"a", "b", "c"}));
  // The second call sees a line that arrives in two writes, and keeps the extra line for a third.
  out.clear();
  ASSERT_EQ(child.exchange("d", 0, out, in_seconds(5)), Status::Ok);
  ASSERT_EQ(child.exchange("e\nf\n", 1, out, in_seconds(5)), Status::Ok);
  EXPECT_EQ(out, (std::vector<std::string>{"de"}));
  ASSERT_EQ(child.exchange("", 1, out, in_seconds(5)), Status::Ok);
  EXPECT_EQ(out, (std::vector<std::string>{"de", "f"}));
  EXPECT_EQ(child.exit_description(std::chrono::milliseconds(0)), "still running");
}

TEST(ChildProcess, UnreadOutputCountsWhatNoExchangeAskedFor) {
  ChildProcess child("cat");
  EXPECT_EQ(child.unread_output(), 0U);
  std::vector<std::string> out;
  ASSERT_EQ(child.exchange("a\nb\n", 1, out, in_seconds(5)), Status::Ok);
  // "b\n" may still be on its way through cat.
  const auto deadline = in_seconds(5);
  while (child.unread_output() < 2 && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(child.unread_output(), 2U);
  ASSERT_EQ(child.exchange("", 1, out, in_seconds(5)), Status::Ok);
  EXPECT_EQ(out, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(child.unread_output(), 0U);
}

TEST(ChildProcess, BigExchangeThroughCatDoesNotDeadlock) {
  constexpr std::size_t kLines = 200000;  // ~2.5 MB each way, far beyond the pipe buffers
  std::string input;
  for (std::size_t i = 0; i < kLines; ++i) input += "line " + std::to_string(i) + "\n";
  ChildProcess child("cat");
  std::vector<std::string> out;
  ASSERT_EQ(child.exchange(input, kLines, out, in_seconds(10)), Status::Ok);
  ASSERT_EQ(out.size(), kLines);
  EXPECT_EQ(out.front(), "line 0");
  EXPECT_EQ(out.back(), "line 199999");
}

TEST(ChildProcess, ChildThatExitsGivesClosedAndItsStatus) {
  ChildProcess child("exit 3");
  std::vector<std::string> out;
  EXPECT_EQ(child.exchange("x\n", 1, out, in_seconds(5)), Status::Closed);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(child.exit_description(), "exited with status 3");
  // Once stdin is known closed, further input is refused at once.
  EXPECT_EQ(child.exchange("y\n", 1, out, in_seconds(5)), Status::Closed);
}

TEST(ChildProcess, LinesPrintedBeforeExitingAreKept) {
  // Both with input (EPIPE path, the child does not read) and without (EOF on stdout).
  for (const std::string input : {"q\n", ""}) {
    ChildProcess child("printf 'one\\ntwo\\npartial'");
    std::vector<std::string> out;
    EXPECT_EQ(child.exchange(input, 3, out, in_seconds(5)), Status::Closed);
    EXPECT_EQ(out, (std::vector<std::string>{"one", "two"}));
  }
  // A child that closes its stdin yet answered everything asked: Ok.
  ChildProcess child("printf 'one\\n'");
  std::vector<std::string> out;
  EXPECT_EQ(child.exchange("q\n", 1, out, in_seconds(5)), Status::Ok);
  EXPECT_EQ(out, (std::vector<std::string>{"one"}));
}

TEST(ChildProcess, SleepingChildTimesOutAndCanBeKilled) {
  ChildProcess child("sleep 30");
  std::vector<std::string> out;
  const auto start = Clock::now();
  EXPECT_EQ(child.exchange("x\n", 1, out, start + std::chrono::milliseconds(300)), Status::Timeout);
  const auto took = Clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(300));
  EXPECT_LT(took, std::chrono::milliseconds(1000));
  EXPECT_EQ(child.exit_description(std::chrono::milliseconds(0)), "still running");
  child.kill();
  const std::string d = child.exit_description(std::chrono::seconds(1));
  EXPECT_NE(d.find("killed by signal 9"), std::string::npos) << d;
}

TEST(ChildProcess, StderrTail) {
  ChildProcess child("echo oops >&2; echo done");
  std::vector<std::string> out;
  ASSERT_EQ(child.exchange("", 1, out, in_seconds(5)), Status::Ok);
  EXPECT_EQ(out, (std::vector<std::string>{"done"}));
  EXPECT_EQ(child.exit_description(), "exited with status 0");
  EXPECT_EQ(child.stderr_tail(), "oops");
}

TEST(ChildProcess, MegabyteOnStderrBeforeAnsweringDoesNotDeadlock) {
  ChildProcess child(
      "i=0; while [ $i -lt 16 ]; do head -c 65536 /dev/zero | tr '\\0' e >&2; i=$((i+1)); done; "
      "echo last >&2; cat");
  std::vector<std::string> out;
  ASSERT_EQ(child.exchange("hello\n", 1, out, in_seconds(5)), Status::Ok);
  EXPECT_EQ(out, (std::vector<std::string>{"hello"}));
  const std::string tail = child.stderr_tail();
  EXPECT_EQ(tail.size(), 2048 - 1);  // the last 2 KiB, less the trimmed "\n"
  EXPECT_EQ(tail.substr(tail.size() - 6), "eelast");
}

TEST(ChildProcess, ChildGetsDefaultSigpipe) {
  // We ignore SIGPIPE; the child must not inherit that, or `yes` complains about EPIPE on stderr.
  ChildProcess child("yes | head -n 1; echo done");
  std::vector<std::string> out;
  ASSERT_EQ(child.exchange("", 2, out, in_seconds(5)), Status::Ok);
  EXPECT_EQ(out, (std::vector<std::string>{"y", "done"}));
  EXPECT_EQ(child.exit_description(), "exited with status 0");
  EXPECT_EQ(child.stderr_tail(), "");
}

TEST(ChildProcess, NonexistentProgramExits127) {
  ChildProcess child("/nonexistent/prog");
  std::vector<std::string> out;
  EXPECT_EQ(child.exchange("x\n", 1, out, in_seconds(5)), Status::Closed);
  EXPECT_EQ(child.exit_description(), "exited with status 127");
  EXPECT_NE(child.stderr_tail(), "");
}

TEST(ChildProcess, DestructorKillsAChildThatDoesNotExit) {
  const auto start = Clock::now();
  { ChildProcess child("sleep 100"); }
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(1500));
  // One that exits on EOF is not waited for a whole second.
  const auto start2 = Clock::now();
  { ChildProcess child("cat"); }
  EXPECT_LT(Clock::now() - start2, std::chrono::milliseconds(500));
}

TEST(ChildProcess, OtherChildrenDoNotHoldOurPipesOpen) {
  const auto open_fds = [] {
    return std::distance(std::filesystem::directory_iterator("/proc/self/fd"), std::filesystem::directory_iterator());
  };
  const auto before = open_fds();
  auto holder = std::make_unique<ChildProcess>("sleep 30");
  const auto start = Clock::now();
  {
    // If `sleep` had inherited the write end of cat's stdin, cat would never see EOF.
    ChildProcess child("cat");
  }
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(500));
  holder.reset();
  EXPECT_EQ(open_fds(), before);
}

}  // namespace
TEST(RunIsolated, ReturnsWhatTheFunctionReturnsEvenWhenEmpty) {
  const Isolated big = run_isolated([] { return std::string(200000, 'x'); }, std::chrono::seconds(10));
  EXPECT_EQ(big.outcome, Isolated::Outcome::Returned);
  EXPECT_EQ(big.message, std::string(200000, 'x'));
  const Isolated empty = run_isolated([] { return std::string(); }, std::chrono::seconds(10));
  EXPECT_EQ(empty.outcome, Isolated::Outcome::Returned);
  EXPECT_TRUE(empty.message.empty());
}

TEST(RunIsolated, ACrashIsReportedWithItsSignalAndWitnessLivesOn) {
  const Isolated r = run_isolated(
      []() -> std::string {
        std::raise(SIGKILL);  // as a segfault would, without the sanitizers' own handling of SIGSEGV
        return "unreachable";
      },
      std::chrono::seconds(10));
  EXPECT_EQ(r.outcome, Isolated::Outcome::Crashed);
  EXPECT_EQ(r.signal, SIGKILL);
}

TEST(RunIsolated, ExitWithoutReturningIsACrash) {
  const Isolated r = run_isolated([]() -> std::string { std::_Exit(1); }, std::chrono::seconds(10));
  EXPECT_EQ(r.outcome, Isolated::Outcome::Crashed);
  EXPECT_EQ(r.signal, 0);
}

TEST(RunIsolated, AHangingFunctionIsKilledAtTheTimeout) {
  const auto start = std::chrono::steady_clock::now();
  const Isolated r = run_isolated(
      []() -> std::string {
        std::this_thread::sleep_for(std::chrono::seconds(30));
        return {};
      },
      std::chrono::milliseconds(200));
  EXPECT_EQ(r.outcome, Isolated::Outcome::Timeout);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
}

namespace {

std::atomic<int> handled_signals{0};

int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

TEST(StartExecChild, ExecsAndReportsTheExitCode) {
  char sh[] = "/bin/sh";
  char flag[] = "-c";
  char command[] = "exit 3";
  char* argv[] = {sh, flag, command, nullptr};
  auto enter = [&] { execv(sh, argv); };
  const pid_t pid = start_exec_child(enter);
  ASSERT_GT(pid, 0);
  const int status = wait_for(pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
}

// The child borrows our memory: a handler of ours running in it would run on our memory. A signal
// there finds the default action instead (here: death by SIGUSR1), and our handler never runs.
TEST(StartExecChild, OurSignalHandlersDoNotRunInTheChild) {
  struct sigaction mine {};
  struct sigaction before {};
  mine.sa_handler = [](int) { handled_signals.fetch_add(1); };
  ASSERT_EQ(sigaction(SIGUSR1, &mine, &before), 0);
  auto enter = [] {
    kill(getpid(), SIGUSR1);  // not raise(): glibc's raise names the thread, which is ours here
    _exit(0);
  };
  const pid_t pid = start_exec_child(enter);
  const int status = pid > 0 ? wait_for(pid) : 0;
  sigaction(SIGUSR1, &before, nullptr);
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGUSR1) << status;
  EXPECT_EQ(handled_signals.load(), 0);
}

}  // namespace
}  // namespace witness
