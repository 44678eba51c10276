#include "core/options.h"

#include <gtest/gtest.h>

#include "core/env.h"
#include "core/error.h"

namespace witness {
namespace {

TEST(Options, DefaultsComeFromTheTable) {
  Options o;
  for (const OptionSpec& s : option_table()) EXPECT_EQ(o.get_string(s.name), s.fallback);
  EXPECT_EQ(o.get_int("seed"), 1);
}

TEST(Options, SetParsesAndChecksRange) {
  Options o;
  o.set("seed", "42");
  EXPECT_EQ(o.get_int("seed"), 42);
  o.set("time-limit", "2.5");
  EXPECT_DOUBLE_EQ(o.get_real("time-limit"), 2.5);
  EXPECT_THROW(o.set("seed", "4.5"), InputError);
  EXPECT_THROW(o.set("seed", "abc"), InputError);
  EXPECT_THROW(o.set("threads", "-1"), InputError);
  EXPECT_THROW(o.set("time-limit", "inf"), InputError);
  EXPECT_THROW(o.set("no-such-option", "1"), InternalError);
}

TEST(Env, DeadlineAndStats) {
  Env env;
  EXPECT_FALSE(env.expired());  // no limit
  env.options.set("time-limit", "0.000001");
  env.start();
  while (env.elapsed_seconds() < 0.00001) {
  }
  EXPECT_TRUE(env.expired());
  env.stats.add("x", 2);
  env.stats.add("x");
  EXPECT_DOUBLE_EQ(env.stats.get("x"), 3);
  EXPECT_DOUBLE_EQ(env.stats.get("missing"), 0);
  EXPECT_GE(env.threads(), 1U);
}

TEST(InputErrorMessage, JoinsFileWhereWhat) {
  EXPECT_STREQ(InputError("a.h5", "layer 'd'", "bad").what(), "a.h5: layer 'd': bad");
  EXPECT_STREQ(InputError("a.h5", "", "bad").what(), "a.h5: bad");
}

}  // namespace
}  // namespace witness
