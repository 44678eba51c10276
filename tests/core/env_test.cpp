#include "core/env.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace witness {
namespace {

TEST(Env, NoLimitsNeverExpire) {
  Env env;
  env.start();
  EXPECT_FALSE(env.expired());
  EXPECT_TRUE(std::isinf(env.seconds_left()));
  EXPECT_STREQ(env.stop_reason(), "time limit");
}

TEST(Env, ResidentMemoryIsMeasured) {
  const double before = resident_megabytes();
  EXPECT_GT(before, 0.5);  // a test binary holds more than half a MiB
  // 64 MiB written (so resident, not only reserved) shows up.
  std::vector<char> block(64U << 20U, 1);
  EXPECT_GT(resident_megabytes(), before + 32) << static_cast<int>(block[block.size() / 2]);
}

TEST(Env, AMemoryLimitBelowTheProcessStopsTheRunAndSaysWhy) {
  Env env;
  env.options.set("memory-limit", "1");  // any process holds more than 1 MiB
  env.start();
  EXPECT_TRUE(env.expired());
  EXPECT_TRUE(env.over_memory_limit());
  EXPECT_EQ(env.seconds_left(), 0.0);
  EXPECT_STREQ(env.stop_reason(), "memory limit");
}

TEST(Env, AMemoryLimitAboveTheProcessLetsItRun) {
  Env env;
  env.options.set("memory-limit", "1000000");
  env.options.set("time-limit", "100");
  env.start();
  EXPECT_FALSE(env.expired());
  EXPECT_GT(env.seconds_left(), 50.0);
  EXPECT_STREQ(env.stop_reason(), "time limit");
}

TEST(Env, ACancelReadsAsExpiredWithNoTimeLeft) {
  std::atomic<bool> cancel{false};
  Env env;
  env.set_cancel(&cancel);
  env.start();
  EXPECT_FALSE(env.expired());
  cancel = true;
  EXPECT_TRUE(env.expired());
  EXPECT_EQ(env.seconds_left(), 0.0);
}

}  // namespace
}  // namespace witness
