// Constants of double rounding shared by the sound bound computations (BoundPropagator,
// ReluNetwork, LinearDistribution): each widens a computed bound by these so that it holds for
// the exact real value whatever order the additions ran in.
//
//   const std::int64_t n = 3;                      // terms of a dot product
//   const double sum_of_abs_products = 12.5;       // sum of |w_i x_i|, as computed
//   double err = witness::roundoff::dot_error(n) * sum_of_abs_products + witness::roundoff::kTiny;
//   double q_down = 0.7 - 4.0 * witness::roundoff::kUnit * 0.7;  // below the exact 0.7
#pragma once

#include <cstdint>

namespace witness::roundoff {

constexpr double kUnit = 0x1p-53;    // unit roundoff of double
constexpr double kTiny = 0x1p-1000;  // covers underflow of any number of products (each < 2^-1074)

// Higham's gamma_n, padded by `pad` terms and 1%: a bound on the relative error of an n-term dot
// product in any order.
constexpr double dot_error(std::int64_t n, double pad = 4.0) { return (static_cast<double>(n) + pad) * kUnit * 1.01; }

}  // namespace witness::roundoff
