// Sound bounds on the distribution of a linear function of independent, uniformly distributed
// inputs: the share of a box's points where a linear bound of a network lies above or below a
// threshold. The quantifying verifier uses it to count, without enumerating, how many individuals
// of a region its linear bounds already decide.
//
//   std::vector<witness::LinearTerm> terms(2);
//   terms[0] = witness::LinearTerm::integers(0.5, 0.0, 0, 80);        // 0.5 * month, month 0..80
//   terms[1] = witness::LinearTerm::reals(-2.0, 1.0, 0.0, 1.0);       // 1 - 2 r, r uniform in [0, 1]
//   witness::LinearDistribution d(3.0, 0.0, terms);                    // 3 + both terms
//   double lo = d.cdf_lower(20.0), hi = d.cdf_upper(20.0);            // lo <= P(sum <= 20) <= hi
#pragma once

#include <cstdint>
#include <vector>

namespace witness {

// One input's contribution T(v) to the sum, for v uniform over the input's values.
struct LinearTerm {
  enum class Kind : std::uint8_t { Integers, Reals, Table };
  Kind kind = Kind::Integers;
  double slope = 0.0, offset = 0.0;  // Integers, Reals: T(v) = slope * v + offset
  double lo = 0.0, hi = 0.0;         // Integers: v in lo..hi; Reals: v uniform on [lo, hi]
  std::vector<double> table;         // Table: T is each entry with equal probability
  double error = 0.0;                // the exact contribution differs from T as computed in double by at most this

  static LinearTerm integers(double slope, double offset, double lo, double hi, double error = 0.0);
  static LinearTerm reals(double slope, double offset, double lo, double hi, double error = 0.0);
  static LinearTerm values(std::vector<double> table, double error = 0.0);
};

// The distribution of constant + sum of terms (exact real arithmetic over the exact contributions),
// discretised into `bins` bins for all but the widest term, which is kept value by value; the
// bounds account for the discretisation and for every rounding error.
class LinearDistribution {
 public:
  LinearDistribution(double constant, double error, const std::vector<LinearTerm>& terms, int bins = 1024);

  // lower <= P(sum <= s) <= upper.
  [[nodiscard]] double cdf_lower(double s) const;
  [[nodiscard]] double cdf_upper(double s) const;
  // The range of the sum (before discretisation), for callers that skip hopeless counts.
  [[nodiscard]] double min() const { return min_; }
  [[nodiscard]] double max() const { return max_; }

 private:
  struct Atom {  // the widest term: T in [lo, hi] with probability p
    double lo, hi, p;
  };
  [[nodiscard]] double light_cdf(double k) const;  // P(K <= k), K the sum of the light bin indices
  double constant_ = 0.0;
  double error_ = 0.0;             // constant's error + every term's error + bin edge rounding
  double light_base_ = 0.0;        // sum of the light terms' minima
  double bin_ = 0.0;               // bin width (0: no light terms)
  double light_width_ = 0.0;       // the light terms lie this much above their bins' low edges, at most
  std::vector<double> light_cdf_;  // P(K <= k)
  // The widest term's values (blocks of them beyond max_atoms), each with its probability.
  static void add_atoms(const LinearTerm& t, std::size_t max_atoms, std::vector<Atom>& atoms);
  std::vector<Atom> atoms_;
  double min_ = 0.0, max_ = 0.0;
};

}  // namespace witness
