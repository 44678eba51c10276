#include "bounds/linear_count.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

#include "bounds/roundoff.h"

namespace witness {
namespace {

using roundoff::kTiny;
using roundoff::kUnit;

constexpr double kProbabilitySlack = 1e-9;  // relative; covers the rounding of every probability sum

// The term as computed in double (slope >= 0 after reflect()).
double value_at(const LinearTerm& t, double v) { return t.slope * v + t.offset; }

// v -> -v turns a decreasing term into an increasing one; negation is exact, so T is unchanged.
LinearTerm reflect(LinearTerm t) {
  if (t.kind != LinearTerm::Kind::Table && t.slope < 0.0) {
    t.slope = -t.slope;
    std::swap(t.lo, t.hi);
    t.lo = -t.lo;
    t.hi = -t.hi;
  }
  return t;
}

std::pair<double, double> range_of(const LinearTerm& t) {
  if (t.kind == LinearTerm::Kind::Table) {
    const auto [a, b] = std::minmax_element(t.table.begin(), t.table.end());
    return {*a, *b};
  }
  return {value_at(t, t.lo), value_at(t, t.hi)};
}

// Bound on how far a value's computed position can be from where the exact one lies, for the
// rounding in bin indices and bin boundaries.
double placement_error(const LinearTerm& t, double tmin, double tmax, double width) {
  double e = 8.0 * kUnit * (std::abs(tmin) + std::abs(tmax) + width);
  if (t.kind != LinearTerm::Kind::Table)
    e += 8.0 * kUnit * (std::abs(t.offset) + t.slope * (std::abs(t.lo) + std::abs(t.hi) + 1.0));
  return e + kTiny;
}

double floor_down(double q) { return std::floor(q - 4.0 * kUnit * std::abs(q) - 4.0 * kUnit); }
double floor_up(double q) { return std::floor(q + 4.0 * kUnit * std::abs(q) + 4.0 * kUnit); }

}  // namespace

LinearTerm LinearTerm::integers(double slope, double offset, double lo, double hi, double error) {
  LinearTerm t;
  t.kind = Kind::Integers;
  t.slope = slope, t.offset = offset, t.lo = lo, t.hi = hi, t.error = error;
  return t;
}

LinearTerm LinearTerm::reals(double slope, double offset, double lo, double hi, double error) {
  LinearTerm t = integers(slope, offset, lo, hi, error);
  t.kind = Kind::Reals;
  return t;
}

LinearTerm LinearTerm::values(std::vector<double> table, double error) {
  LinearTerm t;
  t.kind = Kind::Table;
  t.table = std::move(table);
  t.error = error;
  return t;
}

namespace {

// The probabilities of the bins of width `bin` from tmin (hist.size() of them) for a term uniform
// over its values.
void term_histogram(const LinearTerm& t, double tmin, double tmax, double bin, std::vector<double>& hist) {
  const std::size_t nf = hist.size();
  auto bin_of = [&](double value) {
    const double q = std::floor((value - tmin) / bin);
    return static_cast<std::size_t>(std::clamp(q, 0.0, static_cast<double>(nf - 1)));
  };
  if (t.kind == LinearTerm::Kind::Table) {
    const double w = 1.0 / static_cast<double>(t.table.size());
    for (double v : t.table) hist[bin_of(v)] += w;
  } else if (t.kind == LinearTerm::Kind::Integers) {
    const double n = t.hi - t.lo + 1.0;
    if (n <= 4.0 * static_cast<double>(nf) || n <= 64.0) {
      for (long i = 0; i < static_cast<long>(n); ++i) hist[bin_of(value_at(t, t.lo + static_cast<double>(i)))] += 1.0;
    } else {  // count the integers whose value falls in each bin (slope > 0 here)
      double first = t.lo;
      for (std::size_t k = 0; k < nf; ++k) {
        double next = t.hi + 1.0;
        if (k + 1 < nf) {
          const double edge = tmin + bin * static_cast<double>(k + 1);
          next = std::clamp(std::ceil((edge - t.offset) / t.slope), first, t.hi + 1.0);
        }
        hist[k] += next - first;
        first = next;
      }
    }
    for (double& c : hist) c /= n;
  } else {
    const double width = tmax - tmin;
    for (std::size_t k = 0; k < nf; ++k) {
      const double a = tmin + bin * static_cast<double>(k);
      const double b = std::min(tmax, tmin + bin * static_cast<double>(k + 1));
      hist[k] = b > a ? (b - a) / width : 0.0;
    }
  }
}

// dist (its first `size` entries) convolved with hist, through sum_next (both buffers of the final
// size take turns). Sparse on both sides: small terms have a few non-empty bins, and so has the sum
// at first; `dense` says the sum mostly is not.
void add_term(const std::vector<double>& hist, std::vector<double>& dist, std::vector<double>& sum_next,
              std::size_t& size, bool& dense) {
  thread_local std::vector<std::size_t> nz_hist, nz_dist;
  const std::size_t nf = hist.size();
  nz_hist.clear();
  for (std::size_t j = 0; j < nf; ++j)
    if (hist[j] != 0.0) nz_hist.push_back(j);
  if (!dense) {
    nz_dist.clear();
    for (std::size_t i = 0; i < size; ++i)
      if (dist[i] != 0.0) nz_dist.push_back(i);
    dense = 2 * nz_dist.size() > size;
  }
  const std::size_t next_size = size + nf - 1;
  std::fill_n(sum_next.begin(), next_size, 0.0);
  if (dense) {  // whole shifted rows, which vectorise
    const Eigen::Map<const Eigen::ArrayXd> d(dist.data(), static_cast<Eigen::Index>(size));
    for (std::size_t j : nz_hist) Eigen::Map<Eigen::ArrayXd>(sum_next.data() + j, d.size()) += hist[j] * d;
  } else {
    for (std::size_t j : nz_hist)
      for (std::size_t i : nz_dist) sum_next[i + j] += dist[i] * hist[j];
  }
  std::swap(dist, sum_next);
  size = next_size;
  if (2 * nz_hist.size() <= nf) dense = false;  // a sparse term may leave a sparse sum: look again
}

}  // namespace

void LinearDistribution::add_atoms(const LinearTerm& t, std::size_t max_atoms, std::vector<Atom>& atoms) {
  if (t.kind == LinearTerm::Kind::Table) {
    const double p = 1.0 / static_cast<double>(t.table.size());
    for (double v : t.table) atoms.push_back({v, v, p});
  } else if (t.kind == LinearTerm::Kind::Integers) {
    const double n = t.hi - t.lo + 1.0;
    if (n <= static_cast<double>(max_atoms)) {
      for (long i = 0; i < static_cast<long>(n); ++i) {
        const double v = value_at(t, t.lo + static_cast<double>(i));
        atoms.push_back({v, v, 1.0 / n});
      }
    } else {  // blocks of consecutive values
      const auto blocks = static_cast<double>(max_atoms);
      double first = t.lo;
      for (std::size_t j = 1; j <= max_atoms; ++j) {
        const double next = j == max_atoms ? t.hi + 1.0 : t.lo + std::floor(static_cast<double>(j) * n / blocks);
        if (next > first) atoms.push_back({value_at(t, first), value_at(t, next - 1.0), (next - first) / n});
        first = std::max(first, next);
      }
    }
  } else {
    const double pieces = static_cast<double>(max_atoms), length = t.hi - t.lo;
    double a = t.lo;
    for (std::size_t j = 1; j <= max_atoms; ++j) {
      const double b = j == max_atoms ? t.hi : t.lo + length * (static_cast<double>(j) / pieces);
      if (b > a) atoms.push_back({value_at(t, a), value_at(t, b), (b - a) / length});
      a = std::max(a, b);
    }
  }
}

LinearDistribution::LinearDistribution(double constant, double error, const std::vector<LinearTerm>& terms, int bins) {
  // The widest term is kept value by value up to this many values (blocks of values beyond).
  const auto kMaxAtoms = static_cast<std::size_t>(std::clamp(bins * 2, 256, 16384));
  double magnitude = std::abs(constant);
  error_ = error + kTiny;
  constant_ = constant;
  min_ = max_ = constant;
  struct Prepared {
    LinearTerm t;
    double tmin, tmax;
    double spread = 0.0;  // bins per value (the order terms are added in)
  };
  std::vector<Prepared> varying;
  for (const LinearTerm& raw : terms) {
    const LinearTerm t = reflect(raw);
    const auto [tmin, tmax] = range_of(t);
    error_ += t.error;
    min_ += tmin;
    max_ += tmax;
    magnitude += std::abs(tmin) + std::abs(tmax);
    const bool single = t.kind == LinearTerm::Kind::Table ? t.table.size() == 1 : t.lo == t.hi;
    if (single || tmin == tmax) {
      constant_ += tmin;
      continue;
    }
    varying.push_back({t, tmin, tmax});
  }
  // Each addition above rounded; this bounds all of them together.
  error_ += 4.0 * kUnit * static_cast<double>(terms.size() + 1) * magnitude;

  std::size_t heavy = varying.size();
  double widest = -1.0;
  for (std::size_t i = 0; i < varying.size(); ++i) {
    if (varying[i].tmax - varying[i].tmin > widest) widest = varying[i].tmax - varying[i].tmin, heavy = i;
  }
  if (heavy == varying.size()) {
    atoms_.push_back({0.0, 0.0, 1.0});
  } else {
    const Prepared& h = varying[heavy];
    error_ += placement_error(h.t, h.tmin, h.tmax, 0.0);
    add_atoms(h.t, kMaxAtoms, atoms_);
    varying.erase(varying.begin() + static_cast<std::ptrdiff_t>(heavy));
  }

  if (varying.empty()) return;
  double span = 0.0;
  for (const Prepared& p : varying) span += p.tmax - p.tmin;
  bin_ = span / static_cast<double>(std::max(1, bins));
  // Adding a term costs its non-empty bins times the sum's length so far, which grows by the term's
  // bins: dense terms first, sparse wide ones (few values, many bins apart) last (exchange argument:
  // a before b is cheaper when bins_a / values_a <= bins_b / values_b).
  for (Prepared& p : varying) {
    const double nf = std::floor((p.tmax - p.tmin) / bin_) + 2.0;
    const double values = p.t.kind == LinearTerm::Kind::Table      ? static_cast<double>(p.t.table.size())
                          : p.t.kind == LinearTerm::Kind::Integers ? p.t.hi - p.t.lo + 1.0
                                                                   : nf;
    p.spread = nf / std::min(nf, values);
  }
  std::stable_sort(varying.begin(), varying.end(),
                   [](const Prepared& a, const Prepared& b) { return a.spread < b.spread; });
  // The sum's distribution grows by each term's bins; two buffers of the final size take turns.
  std::size_t total = 1;
  for (const Prepared& p : varying) total += static_cast<std::size_t>(std::floor((p.tmax - p.tmin) / bin_)) + 1;
  // Kept per thread: a search builds millions of these, and fresh buffers of a fine count's size
  // cost more in allocation and page faults than the convolution itself.
  thread_local std::vector<double> dist, sum_next, hist;
  if (dist.size() < total) dist.resize(total), sum_next.resize(total);
  dist[0] = 1.0;
  std::size_t size = 1;  // dist's entries in use
  bool dense = false;    // most of them non-zero: stays so while the terms added are dense
  for (const Prepared& p : varying) {
    light_base_ += p.tmin;
    // Within its bin a term lies at most a bin, or its own span, above the bin's low edge.
    light_width_ += std::min(bin_, p.tmax - p.tmin);
    const LinearTerm& t = p.t;
    const auto nf = static_cast<std::size_t>(std::floor((p.tmax - p.tmin) / bin_)) + 2;
    error_ += placement_error(t, p.tmin, p.tmax, bin_ * static_cast<double>(nf));
    hist.assign(nf, 0.0);
    term_histogram(t, p.tmin, p.tmax, bin_, hist);
    add_term(hist, dist, sum_next, size, dense);
  }
  light_cdf_.resize(size);
  double sum = 0.0;
  for (std::size_t i = 0; i < size; ++i) light_cdf_[i] = sum += dist[i];
  error_ += 8.0 * kUnit * (std::abs(light_base_) + bin_ * static_cast<double>(size) + light_width_);
}

double LinearDistribution::light_cdf(double k) const {
  if (!(k >= 0.0)) return 0.0;  // also NaN, which the callers' guards rule out
  if (k >= static_cast<double>(light_cdf_.size() - 1)) return 1.0;
  return light_cdf_[static_cast<std::size_t>(k)];
}

// sum = C + T_heavy + sum of light terms, where each light term lies in
// [tmin + bin k, tmin + bin (k + 1)) up to the errors gathered in error_.
double LinearDistribution::cdf_lower(double s) const {
  if (std::isnan(s) || s == -INFINITY) return 0.0;  // (a NaN threshold decides nothing)
  if (s == INFINITY) return 1.0;
  double total = 0.0;
  for (const Atom& a : atoms_) {
    // sum <= C + a.hi + light_base + bin K + light_width + error_ <= s
    const double rest = s - constant_ - a.hi - light_base_ - light_width_ - error_;
    const double guard =
        4.0 * kUnit * (std::abs(s) + std::abs(constant_) + std::abs(a.hi) + std::abs(light_base_) + light_width_);
    if (light_cdf_.empty()) {
      if (s - constant_ - a.hi - error_ - guard >= 0.0) total += a.p;
      continue;
    }
    total += a.p * light_cdf(floor_down((rest - guard) / bin_));
  }
  return std::clamp(total * (1.0 - kProbabilitySlack), 0.0, 1.0);
}

double LinearDistribution::cdf_upper(double s) const {
  if (std::isnan(s) || s == INFINITY) return 1.0;
  if (s == -INFINITY) return 0.0;
  double total = 0.0;
  for (const Atom& a : atoms_) {
    // sum >= C + a.lo + light_base + bin K - error_, so sum <= s needs K <= (s - ...) / bin
    const double rest = s - constant_ - a.lo - light_base_ + error_;
    const double guard = 4.0 * kUnit * (std::abs(s) + std::abs(constant_) + std::abs(a.lo) + std::abs(light_base_));
    if (light_cdf_.empty()) {
      if (s - constant_ - a.lo + error_ + guard >= 0.0) total += a.p;
      continue;
    }
    const double q = (rest + guard) / bin_;
    total += a.p * (std::isnan(q) ? 1.0 : light_cdf(floor_up(q)));
  }
  return std::clamp(total * (1.0 + kProbabilitySlack), 0.0, 1.0);
}

}  // namespace witness
