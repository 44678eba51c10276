#include "core/options.h"

#include <gtest/gtest.h>

#include "core/env.h"
#include "core/error.h"

namespace witness {
namespace {

TEST(Options, DefaultsComeFromTheTable) {
  Options o;
  for (const OptionSpec& s : option_table()) {
    EXPECT_FALSE(o.is_set(s.name));
    SCOPED_TRACE(s.name);
    if (s.type == OptionSpec::Type::Int) {
      EXPECT_EQ(o.get_int(s.name), std::stoll(s.fallback));
    } else if (s.type == OptionSpec::Type::Real) {
      EXPECT_EQ(o.get_real(s.name), std::stod(s.fallback));
    } else if (s.type == OptionSpec::Type::Bool) {
      EXPECT_EQ(o.get_bool(s.name), s.fallback == "true");
    }
  }
  EXPECT_EQ(o.get_int("seed"), 1);
}

// Each value is parsed once, by set(), and read back with its own type; is_set tells a value the
// caller gave (even the default's) from the default.
TEST(Options, ValuesAreTypedAndKnowWhetherTheyWereSet) {
  Options o;
  o.set("time-limit", "0");
  EXPECT_TRUE(o.is_set("time-limit"));
  EXPECT_FALSE(o.is_set("memory-limit"));
  o.set("memory-limit", "1e3");
  EXPECT_DOUBLE_EQ(o.get_real("memory-limit"), 1000);
  o.set("stats", "true");
  EXPECT_TRUE(o.get_bool("stats"));
  EXPECT_THROW((void)o.get_real("seed"), InternalError);  // an Int read as a Real: a bug of the caller
  EXPECT_THROW((void)o.get_int("time-limit"), InternalError);
  EXPECT_THROW((void)o.is_set("no-such-option"), InternalError);
  Options failed;
  EXPECT_THROW(failed.set("seed", "x"), InputError);
  EXPECT_FALSE(failed.is_set("seed"));  // a rejected value leaves the option as it was
  EXPECT_EQ(failed.get_int("seed"), 1);
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
