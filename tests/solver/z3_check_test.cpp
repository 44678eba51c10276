#include "solver/z3_check.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <string>
#include <thread>

namespace witness {
namespace {

// 13 pigeons in 12 holes, pairwise different: Z3 works on it far longer than these tests wait.
void pigeonhole(z3::context& ctx, z3::solver& s) {
  constexpr int kHoles = 12;
  z3::expr_vector p(ctx);
  for (int i = 0; i <= kHoles; ++i) {
    p.push_back(ctx.int_const(("p" + std::to_string(i)).c_str()));
    s.add(p.back() >= 0 && p.back() < kHoles);
  }
  s.add(z3::distinct(p));
}

// A context with a solver holding the pigeonhole problem.
struct HardCheck {
  z3::context ctx;
  z3::solver solver = make_z3_solver(ctx);
  HardCheck() { pigeonhole(ctx, solver); }
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(Z3Check, ACancelFlagStopsALongCheck) {
  HardCheck h;
  z3::solver& s = h.solver;
  std::atomic<bool> cancel{false};
  std::thread raiser([&cancel] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel = true;
  });
  const auto start = std::chrono::steady_clock::now();
  const Z3Check c = z3_check(s, 0.0, &cancel);
  raiser.join();
  EXPECT_LT(seconds_since(start), 5.0);
  EXPECT_EQ(c.result, z3::unknown);
  EXPECT_TRUE(c.canceled);
  EXPECT_FALSE(c.timed_out);
  EXPECT_EQ(c.reason, "canceled");
  // A flag raised before the check: no check at all.
  const Z3Check again = z3_check(s, 10.0, &cancel);
  EXPECT_TRUE(again.canceled);
  // The context still answers once the flag is down.
  cancel = false;
  z3::solver easy = make_z3_solver(h.ctx);
  easy.add(h.ctx.int_const("x") > 3);
  EXPECT_EQ(z3_check(easy, 10.0, &cancel).result, z3::sat);
}

TEST(Z3Check, ATimeLimitStillHoldsWithACancelFlag) {
  HardCheck h;
  z3::solver& s = h.solver;
  const std::atomic<bool> cancel{false};
  const Z3Check c = z3_check(s, 0.2, &cancel);
  EXPECT_EQ(c.result, z3::unknown);
  EXPECT_TRUE(c.timed_out);
  EXPECT_FALSE(c.canceled);
  EXPECT_EQ(c.reason, "timeout");
}

std::atomic<int> interrupts{0};
extern "C" void count_interrupt(int /*signal*/) { interrupts.fetch_add(1); }

// SIGINT during a check reaches the program's own handler: Z3 does not swap in its own and answer
// "interrupted from keyboard" (Python raises KeyboardInterrupt from its handler, then cancels).
TEST(Z3Check, SigintDuringACheckIsTheProgramsNotZ3s) {
  const auto previous = std::signal(SIGINT, count_interrupt);
  HardCheck h;
  z3::solver& s = h.solver;
  std::atomic<bool> cancel{false};
  std::thread sender([&cancel] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    (void)std::raise(SIGINT);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cancel = true;
  });
  const Z3Check c = z3_check(s, 20.0, &cancel);
  sender.join();
  (void)std::signal(SIGINT, previous);
  EXPECT_EQ(interrupts.load(), 1);
  EXPECT_TRUE(c.canceled) << c.reason;
}

}  // namespace
}  // namespace witness
