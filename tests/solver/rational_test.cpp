#include "solver/rational.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>

#include "core/error.h"

namespace witness {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Bit-level equality, so that -0.0 != 0.0 and every mismatch is visible.
::testing::AssertionResult same_double(double a, double b) {
  if (std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b)) return ::testing::AssertionSuccess();
  std::ostringstream out;
  out.precision(17);
  out << a << " != " << b;
  return ::testing::AssertionFailure() << out.str();
}

double random_finite_double(std::mt19937_64& rng) {
  for (;;) {
    const double d = std::bit_cast<double>(rng());
    if (std::isfinite(d)) return d;
  }
}

// Checks the three conversions of q against the double grid.
void expect_bracket(const Rational& q) {
  const double down = q.to_double_down();
  const double up = q.to_double_up();
  const double nearest = q.to_double();
  SCOPED_TRACE(q.to_string());
  if (std::isfinite(down)) {
    EXPECT_LE(Rational::from_double(down), q);
  }
  if (std::isfinite(up)) {
    EXPECT_GE(Rational::from_double(up), q);
  }
  if (down == up) {
    ASSERT_TRUE(std::isfinite(down));
    EXPECT_EQ(Rational::from_double(down), q);
  } else {
    EXPECT_TRUE(same_double(std::nextafter(down, kInf), up));  // neighbours: nothing in between
  }
  EXPECT_TRUE(nearest == down || nearest == up);
  if (std::isfinite(down) && std::isfinite(up) && down != up) {
    const Rational gap_down = q - Rational::from_double(down);
    const Rational gap_up = Rational::from_double(up) - q;
    if (gap_down < gap_up) {
      EXPECT_EQ(nearest, down);
    }
    if (gap_up < gap_down) {
      EXPECT_EQ(nearest, up);
    }
  }
}

TEST(Rational, DoubleIsExact) {
  EXPECT_EQ(Rational::from_double(0.1).to_string(), "3602879701896397/36028797018963968");
  EXPECT_EQ(Rational::from_double(0.1), Rational::parse("3602879701896397/36028797018963968"));
  EXPECT_NE(Rational::from_double(0.1), Rational::parse("0.1"));
  EXPECT_GT(Rational::from_double(0.1), Rational(1, 10));
  EXPECT_EQ(Rational::from_double(-2.5).to_string(), "-5/2");
  EXPECT_EQ(Rational::from_double(0.0), Rational(0));
  EXPECT_EQ(Rational::from_double(-0.0), Rational(0));
  EXPECT_TRUE(Rational::from_double(1e300).is_integer());
  EXPECT_NE(Rational::from_double(1e300), Rational::parse("1e300"));  // 1e300 is not a double
  // The smallest subnormal is 2^-1074.
  const Rational tiny = Rational::from_double(std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(tiny.numerator_string(), "1");
  EXPECT_EQ(tiny.denominator_string().size(), 324u);
  EXPECT_TRUE(same_double(tiny.to_double(), std::numeric_limits<double>::denorm_min()));
  // 2^1023 * (2 - 2^-52) round-trips.
  EXPECT_TRUE(same_double(Rational::from_double(std::numeric_limits<double>::max()).to_double(),
                          std::numeric_limits<double>::max()));
}

TEST(Rational, NonFiniteDoublesAreInputErrors) {
  EXPECT_THROW(Rational::from_double(std::nan("")), InputError);
  EXPECT_THROW(Rational::from_double(kInf), InputError);
  EXPECT_THROW(Rational::from_double(-kInf), InputError);
}

TEST(Rational, RandomDoublesRoundTrip) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const double d = random_finite_double(rng);
    const Rational q = Rational::from_double(d);
    const double back = d == 0.0 ? 0.0 : d;  // -0.0 comes back as +0.0
    ASSERT_TRUE(same_double(q.to_double(), back)) << i;
    ASSERT_TRUE(same_double(q.to_double_down(), back)) << i;
    ASSERT_TRUE(same_double(q.to_double_up(), back)) << i;
    ASSERT_EQ(Rational::parse(q.to_string()), q);
  }
}

TEST(Rational, DirectedRoundingBracketsWithNeighbours) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 5000; ++i) {
    const double d = random_finite_double(rng);
    const double next = std::nextafter(d, kInf);
    if (!std::isfinite(next)) continue;
    const Rational a = Rational::from_double(d);
    const Rational b = Rational::from_double(next);
    // Strictly between two neighbouring doubles: down is d, up is next.
    for (const Rational& q : {(a + b) / 2, a + (b - a) / 3, b - (b - a) / 1000}) {
      ASSERT_TRUE(same_double(q.to_double_down(), d == 0.0 ? 0.0 : d)) << q;
      ASSERT_TRUE(same_double(q.to_double_up(), next)) << q;
      expect_bracket(q);
    }
    // The midpoint rounds to the neighbour with an even mantissa.
    const double mid = ((a + b) / 2).to_double();
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(std::abs(mid));
    EXPECT_EQ(bits % 2, 0u) << a;
  }
}

TEST(Rational, DirectedRoundingOfRandomFractions) {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<std::int64_t> num(-(std::int64_t{1} << 62), std::int64_t{1} << 62);
  std::uniform_int_distribution<std::int64_t> den(1, std::int64_t{1} << 62);
  for (int i = 0; i < 5000; ++i) expect_bracket(Rational(num(rng), den(rng)));
  // Small denominators too, where ties and exact values are common.
  std::uniform_int_distribution<std::int64_t> small(-50, 50);
  std::uniform_int_distribution<std::int64_t> small_den(1, 12);
  for (int i = 0; i < 2000; ++i) expect_bracket(Rational(small(rng), small_den(rng)));
}

TEST(Rational, DirectedRoundingAtTheEdges) {
  const double max = std::numeric_limits<double>::max();
  const double min_normal = std::numeric_limits<double>::min();
  const double tiny = std::numeric_limits<double>::denorm_min();
  // Beyond the largest double.
  const Rational huge = Rational::from_double(max) * 2;
  EXPECT_TRUE(same_double(huge.to_double_down(), max));
  EXPECT_TRUE(same_double(huge.to_double_up(), kInf));
  EXPECT_TRUE(same_double(huge.to_double(), kInf));
  EXPECT_TRUE(same_double((-huge).to_double_down(), -kInf));
  EXPECT_TRUE(same_double((-huge).to_double_up(), -max));
  // Just above max but below the rounding midpoint: nearest is max.
  const Rational just_above = Rational::from_double(max) + Rational::from_double(std::ldexp(1.0, 960));
  EXPECT_TRUE(same_double(just_above.to_double(), max));
  EXPECT_TRUE(same_double(just_above.to_double_up(), kInf));
  // Below the smallest subnormal.
  const Rational third_tiny = Rational::from_double(tiny) / 3;
  EXPECT_TRUE(same_double(third_tiny.to_double_down(), 0.0));
  EXPECT_TRUE(same_double(third_tiny.to_double_up(), tiny));
  EXPECT_TRUE(same_double(third_tiny.to_double(), 0.0));
  EXPECT_TRUE(same_double((-third_tiny).to_double_down(), -tiny));
  EXPECT_TRUE(same_double((-third_tiny).to_double_up(), -0.0));
  // Across the subnormal/normal boundary.
  for (const Rational& q :
       {Rational::from_double(min_normal) - Rational::from_double(tiny) / 2,
        Rational::from_double(min_normal) + Rational::from_double(tiny) / 7, Rational::from_double(min_normal) / 3,
        Rational(1, 3), Rational(-2, 3), Rational::parse("1e-320"), Rational::parse("-1e308"),
        Rational::parse("1.7976931348623158e308")}) {
    expect_bracket(q);
  }
  // 1/3 rounds down to the double 0.333... and that double is what the compiler gives.
  EXPECT_TRUE(same_double(Rational(1, 3).to_double(), 1.0 / 3.0));
  EXPECT_TRUE(same_double(Rational(2, 3).to_double(), 2.0 / 3.0));
  EXPECT_TRUE(same_double(Rational::parse("0.1").to_double(), 0.1));
  EXPECT_TRUE(same_double(Rational::parse("0.1").to_double_up(), 0.1));  // 0.1 the double is above 1/10
  EXPECT_TRUE(same_double(Rational::parse("0.1").to_double_down(), std::nextafter(0.1, 0.0)));
}

TEST(Rational, DecimalParsingMatchesStrtod) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 3000; ++i) {
    const double d = random_finite_double(rng);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", d);
    const Rational q = Rational::parse(buf);
    ASSERT_TRUE(same_double(q.to_double(), std::strtod(buf, nullptr))) << buf;
  }
}

TEST(Rational, Parsing) {
  EXPECT_EQ(Rational::parse("-3/4"), Rational(-3, 4));
  EXPECT_EQ(Rational::parse("6/8"), Rational(3, 4));
  EXPECT_EQ(Rational::parse("+12"), Rational(12));
  EXPECT_EQ(Rational::parse("0.1"), Rational(1, 10));
  EXPECT_EQ(Rational::parse("-.5"), Rational(-1, 2));
  EXPECT_EQ(Rational::parse("5."), Rational(5));
  EXPECT_EQ(Rational::parse("1e-3"), Rational(1, 1000));
  EXPECT_EQ(Rational::parse("2.5E+7"), Rational(25000000));
  EXPECT_EQ(Rational::parse("  7/2\t"), Rational(7, 2));
  EXPECT_EQ(Rational::parse("-0"), Rational(0));
  EXPECT_EQ(Rational::parse("123456789012345678901234567890").to_string(), "123456789012345678901234567890");
  EXPECT_EQ(Rational::parse("1e-400") * Rational::parse("1e400"), Rational(1));
}

TEST(Rational, ParsingErrors) {
  for (const char* bad :
       {"",         " ",     "-",   "+",    ".",   "e5",   "1e",  "1e+", "1/0", "1/",  "/2",    "3/-4",
        "-3/+4",    "1.5/2", "inf", "-inf", "nan", "0x10", "1 2", "1,5", "--1", "+-1", "1e5.5", "1e99999999999",
        "1e100001", "1/2/3", "١"}) {
    EXPECT_THROW(Rational::parse(bad), InputError) << "'" << bad << "'";
  }
  try {
    (void)Rational::parse("12x");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'12x'"), std::string::npos) << e.what();
  }
}

TEST(Rational, Arithmetic) {
  const Rational a(1, 3);
  const Rational b(-3, 4);
  EXPECT_EQ(a + b, Rational(-5, 12));
  EXPECT_EQ(a - b, Rational(13, 12));
  EXPECT_EQ(a * b, Rational(-1, 4));
  EXPECT_EQ(a / b, Rational(-4, 9));
  EXPECT_EQ(-b, Rational(3, 4));
  EXPECT_EQ(b.abs(), Rational(3, 4));
  EXPECT_EQ(a + 1, Rational(4, 3));
  EXPECT_THROW(a / 0, InternalError);
  EXPECT_THROW(Rational(1, 0), InputError);
  EXPECT_EQ(Rational(6, -4), Rational(-3, 2));
  EXPECT_EQ(Rational(6, -4).to_string(), "-3/2");
  EXPECT_EQ(Rational(INT64_MIN, -1).to_string(), "9223372036854775808");
  Rational c = a;
  c += b;
  c *= 12;
  EXPECT_EQ(c, Rational(-5));
  EXPECT_TRUE(c.is_integer());
  EXPECT_EQ(c.to_int64(), -5);
  EXPECT_THROW((void)a.to_int64(), InternalError);
  EXPECT_THROW((void)Rational::parse("1e30").to_int64(), InternalError);
  EXPECT_EQ(Rational(std::numeric_limits<std::uint64_t>::max()).to_string(), "18446744073709551615");
}

TEST(Rational, Comparison) {
  EXPECT_LT(Rational(1, 3), Rational(1, 2));
  EXPECT_GT(Rational(-1, 3), Rational(-1, 2));
  EXPECT_EQ(Rational(2, 4), Rational(1, 2));
  EXPECT_LE(Rational(1, 2), Rational(1, 2));
  EXPECT_TRUE(Rational(3) == 3);
  EXPECT_TRUE(Rational(7, 2) > 3);
  EXPECT_EQ(Rational(-7, 2).sign(), -1);
  EXPECT_EQ(Rational(0).sign(), 0);
}

TEST(Rational, FloorAndCeil) {
  EXPECT_EQ(Rational(7, 2).floor(), Rational(3));
  EXPECT_EQ(Rational(7, 2).ceil(), Rational(4));
  EXPECT_EQ(Rational(-7, 2).floor(), Rational(-4));
  EXPECT_EQ(Rational(-7, 2).ceil(), Rational(-3));
  EXPECT_EQ(Rational(5).floor(), Rational(5));
  EXPECT_EQ(Rational(5).ceil(), Rational(5));
  EXPECT_EQ(Rational(-1, 1000).ceil(), Rational(0));
  EXPECT_EQ(Rational(-1, 1000).ceil().to_string(), "0");
}

TEST(Rational, HeaderExample) {
  witness::Rational w = witness::Rational::from_double(0.1);
  witness::Rational t = witness::Rational::parse("0.1");
  EXPECT_TRUE(w > t);
  EXPECT_LE(Rational::from_double((w * 3).to_double_down()), w * 3);
  EXPECT_GE(Rational::from_double((w * 3).to_double_up()), w * 3);
  EXPECT_EQ((t / 4).to_string(), "1/40");
}

}  // namespace
}  // namespace witness
