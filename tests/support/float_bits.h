// Helpers of the tests that check floating-point soundness against exact arithmetic: random
// draws, a double in hex (reproducible in a failure message), and its number of fraction bits.
//
//   witness::test::Rng rng(7);
//   double x = witness::test::uniform(rng, -1.0, 1.0);
//   int k = witness::test::fraction_bits(x);  // x * 2^k is an integer
#pragma once

#include <cmath>
#include <random>
#include <sstream>
#include <string>

namespace witness::test {

using Rng = std::mt19937_64;

inline double uniform(Rng& rng, double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); }
inline int uniform_int(Rng& rng, int a, int b) { return std::uniform_int_distribution<int>(a, b)(rng); }

inline std::string hex(double d) {
  std::ostringstream out;
  out << std::hexfloat << d;
  return out.str();
}

// Smallest k >= 0 with d * 2^k an integer (every finite double is a dyadic rational).
inline int fraction_bits(double d) {
  int k = 0;
  while (std::ldexp(d, k) != std::floor(std::ldexp(d, k))) ++k;
  return k;
}

}  // namespace witness::test
