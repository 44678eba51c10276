#include "core/alarm.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace witness {
namespace {

using Clock = std::chrono::steady_clock;

TEST(Alarm, FiresOnceAtTheDeadline) {
  std::atomic<int> fired{0};
  Alarm alarm(Clock::now() + std::chrono::milliseconds(20), [&fired] { ++fired; });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  alarm.disarm();
  EXPECT_EQ(fired.load(), 1);
}

TEST(Alarm, DisarmedBeforeTheDeadlineNeverFires) {
  std::atomic<int> fired{0};
  {
    Alarm alarm(Clock::now() + std::chrono::seconds(30), [&fired] { ++fired; });
  }  // the destructor disarms without waiting for the deadline
  Alarm none(std::nullopt, [&fired] { ++fired; });
  none.disarm();
  EXPECT_EQ(fired.load(), 0);
}

TEST(Alarm, RepeatsUntilDisarmedAndNeverAfter) {
  std::atomic<int> fired{0};
  Alarm alarm(
      Clock::now(), [&fired] { ++fired; }, std::chrono::milliseconds(5));
  const auto until = Clock::now() + std::chrono::seconds(10);
  while (fired.load() < 3 && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  alarm.disarm();
  const int at_disarm = fired.load();
  EXPECT_GE(at_disarm, 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(fired.load(), at_disarm);
}

// `witness fair` disarms its hard deadline before printing its answer and relies on this: an action
// already running has finished when disarm() returns (so exactly one of the two answers is printed).
TEST(Alarm, DisarmWaitsForAnActionAlreadyRunning) {
  std::atomic<bool> started{false}, finished{false};
  Alarm alarm(Clock::now(), [&] {
    started = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    finished = true;
  });
  const auto until = Clock::now() + std::chrono::seconds(10);
  while (!started.load() && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(started.load());
  alarm.disarm();
  EXPECT_TRUE(finished.load());
}

}  // namespace
}  // namespace witness
