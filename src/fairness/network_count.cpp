#include <algorithm>
#include <cmath>
#include <optional>

#include "fairness/network_regions.h"

namespace witness {

namespace {

constexpr int kCountBins = 256;       // bins of a first count
constexpr int kFineBins = 16384;      // where the bounds are near-linear and binning limits the count
constexpr double kMinCounted = 0.02;  // no count where a normal approximation says it decides less

double gamma_n(Eigen::Index n) { return (static_cast<double>(n) + 4.0) * kUnitRoundoff * 1.01; }

}  // namespace

Interval NetworkRegions::DifferenceCache::get(std::size_t i, std::size_t j) const {
  const bool swap = i > j;
  const auto key = swap ? std::make_pair(j, i) : std::make_pair(i, j);
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    const auto [a, b] = key;
    it = cache_.emplace(key, v_.bp_.difference(nb_[a], nb_[b], v_.combo_diff(a, b, true), v_.combo_diff(a, b, false)))
             .first;
  }
  return swap ? Interval{-it->second.hi, -it->second.lo} : it->second;
}

void NetworkRegions::linear_terms(const SearchRegion& r, int combo, const Eigen::VectorXd& coef,
                                  std::vector<LinearTerm>& terms) const {
  terms.clear();
  const Eigen::VectorXd raw = raw_with(r.lo, combo);
  for (int f = 0; f < schema_.size(); ++f) feature_term(r, raw, coef, f, terms);
}

void NetworkRegions::feature_term(const SearchRegion& r, const Eigen::VectorXd& raw, const Eigen::VectorXd& coef, int f,
                                  std::vector<LinearTerm>& terms) const {
  const Feature& feat = schema_.feature(f);
  const double lo = is_protected_[static_cast<std::size_t>(f)] ? raw(f) : r.lo(f);
  const double hi = is_protected_[static_cast<std::size_t>(f)] ? raw(f) : r.hi(f);
  if (feat.one_hot) {
    std::vector<double> table;
    for (auto v = static_cast<Eigen::Index>(lo); v <= static_cast<Eigen::Index>(hi); ++v)
      table.push_back(coef(feat.model_offset + v));
    terms.push_back(LinearTerm::values(std::move(table)));
    return;
  }
  const double c = coef(feat.model_offset);
  if (c == 0.0) return;
  double slope = c, offset = 0.0, e = 0.0;
  const double vmax = std::max(std::abs(lo), std::abs(hi));
  if (feat.norm.form == Normalisation::Form::ScaleOffset) {
    slope = c * feat.norm.a;
    offset = c * feat.norm.b;
    e = 2.0 * kUnitRoundoff * (std::abs(slope) * vmax + std::abs(offset));
  } else if (feat.norm.form == Normalisation::Form::MeanStd) {
    slope = c / feat.norm.b;
    offset = -(c * feat.norm.a) / feat.norm.b;
    e = 4.0 * kUnitRoundoff * (std::abs(slope) * vmax + std::abs(offset));
  } else if (feat.norm.form == Normalisation::Form::CenterScale) {
    slope = c * feat.norm.b;
    offset = -(c * feat.norm.a) * feat.norm.b;
    e = 4.0 * kUnitRoundoff * (std::abs(slope) * vmax + std::abs(offset));
  }
  terms.push_back(feat.integral() ? LinearTerm::integers(slope, offset, lo, hi, e + kTinyError)
                                  : LinearTerm::reals(slope, offset, lo, hi, e + kTinyError));
}

void NetworkRegions::moments(const std::vector<LinearTerm>& terms, double constant, double& mean, double& var) {
  mean = constant, var = 0.0;
  for (const LinearTerm& t : terms) {
    if (t.kind == LinearTerm::Kind::Table) {
      double m = 0.0, q = 0.0;
      for (double v : t.table) m += v, q += v * v;
      m /= static_cast<double>(t.table.size());
      mean += m;
      var += std::max(0.0, q / static_cast<double>(t.table.size()) - m * m);
      continue;
    }
    const double w = std::abs(t.slope) * (t.hi - t.lo);
    mean += t.slope * (t.lo + t.hi) / 2.0 + t.offset;
    const double n = t.kind == LinearTerm::Kind::Integers ? t.hi - t.lo + 1.0 : 0.0;
    var += t.kind == LinearTerm::Kind::Integers ? w * w * (n + 1.0) / (12.0 * std::max(1.0, n - 1.0)) : w * w / 12.0;
  }
}

double NetworkRegions::estimate_decided(const std::vector<LinearTerm>& lt, double lc, const std::vector<LinearTerm>& ut,
                                        double uc, double high_at, double low_at, double flip_lo, double flip_hi) {
  double lm = 0.0, lv = 0.0, um = 0.0, uv = 0.0;
  moments(lt, lc, lm, lv);
  moments(ut, uc, um, uv);
  auto cdf = [](double m, double v, double x) {
    if (v <= 0.0) return x >= m ? 1.0 : 0.0;
    return 0.5 * std::erfc((m - x) / std::sqrt(2.0 * v));
  };
  const double high = 1.0 - cdf(lm, lv, high_at), low = cdf(um, uv, low_at);
  const double flip =
      flip_lo < flip_hi ? std::max(0.0, (1.0 - cdf(lm, lv, flip_lo)) + cdf(um, uv, flip_hi) - 1.0) : 0.0;
  return high + low + flip;
}

bool NetworkRegions::count(SearchRegion& r, const std::vector<NetworkBounds>& nb, const std::vector<bool>& needed,
                           const DifferenceCache& diff, bool fine) const {
  int ref = -1;
  for (std::size_t c = 0; c < needed.size() && ref < 0; ++c)
    if (needed[c] && nb[c].lower_coef.size() > 0) ref = static_cast<int>(c);
  if (ref < 0) return false;
  const auto ru = static_cast<std::size_t>(ref);
  const double t = net_.threshold;
  // z_c - z_ref in [dl, du] for every needed c (0 for c = ref).
  double min_dl = 0.0, max_dl = 0.0, min_du = 0.0, max_du = 0.0;
  for (std::size_t c = 0; c < needed.size(); ++c) {
    if (!needed[c] || c == ru) continue;
    const Interval d = diff.get(c, ru);
    min_dl = std::min(min_dl, d.lo), max_dl = std::max(max_dl, d.lo);
    min_du = std::min(min_du, d.hi), max_du = std::max(max_du, d.hi);
  }
  const NetworkBounds& b = nb[ru];
  std::vector<LinearTerm> lterms, uterms;
  linear_terms(r, ref, b.lower_coef, lterms);
  linear_terms(r, ref, b.upper_coef, uterms);
  // A normal approximation of L and U first: counting is skipped where it would decide little.
  const double est =
      estimate_decided(lterms, b.lower_const, uterms, b.upper_const, t - min_dl, t - max_du, t - max_dl, t - min_du);
  if (est < kMinCounted) return false;
  const double el = b.lower_err, eu = b.upper_err;
  // gap: U - L <= g over the box (then L - el <= z <= L + g + eu, and U - g - el <= z).
  Eigen::VectorXd lo, hi;
  model_box(r, combos_[ru], lo, hi);
  const Eigen::VectorXd d = b.upper_coef - b.lower_coef;
  double g = b.upper_const - b.lower_const, mag = std::abs(b.upper_const) + std::abs(b.lower_const);
  for (Eigen::Index k = 0; k < d.size(); ++k) {
    g += std::max(d(k) * lo(k), d(k) * hi(k));
    mag += (std::abs(b.upper_coef(k)) + std::abs(b.lower_coef(k))) * std::max(std::abs(lo(k)), std::abs(hi(k)));
  }
  g += gamma_n(d.size() + 4) * mag * 4.0 + el + eu;
  double fair = 0.0, flip = 0.0;
  auto count_with = [&](int bins) {
    const LinearDistribution lower(b.lower_const, 0.0, lterms, bins);  // L(x); z >= L - lower_err
    // Where every neuron is stable U is L shifted by a constant: one distribution serves both
    // (queries moved by the shift, and by its rounding in the safe direction).
    const bool shifted = b.upper_coef == b.lower_coef;
    const double shift = b.upper_const - b.lower_const;
    std::optional<LinearDistribution> own;
    if (!shifted) own.emplace(b.upper_const, 0.0, uterms, bins);  // U(x); z <= U + upper_err
    auto slack = [shift](double s) { return 4.0 * kUnitRoundoff * (std::abs(s) + std::abs(shift)) + kTinyError; };
    auto u_lower = [&](double s) { return own ? own->cdf_lower(s) : lower.cdf_lower(s - shift - slack(s)); };
    auto u_upper = [&](double s) { return own ? own->cdf_upper(s) : lower.cdf_upper(s - shift + slack(s)); };
    // Shares of the region where z_ref > a, and where z_ref <= bb.
    auto above = [&](double a) { return std::max(1.0 - lower.cdf_upper(a + el), 1.0 - u_upper(a + g)); };
    auto at_most = [&](double bb) { return std::max(u_lower(bb - eu), lower.cdf_lower(bb - g)); };
    const double high = above(t - min_dl);   // every copy above t
    const double low = at_most(t - max_du);  // every copy at or below t
    flip = 0.0;                              // some copy above t, some at or below
    const double a = t - max_dl, bb = t - min_du;
    if (a < bb) {
      flip = std::max({above(a) + at_most(bb) - 1.0, lower.cdf_lower(bb - g) - lower.cdf_upper(a + el),
                       u_lower(bb - eu) - u_upper(a + g), 0.0});
    }
    fair = std::min(1.0, std::max(0.0, high) + std::max(0.0, low));
    flip = std::min(flip, 1.0 - fair);
    return lower.max() - lower.min();
  };
  const double range = count_with(fine ? kFineBins : kCountBins);
  // Near-linear regions are limited by the discretisation, not by the bounds: they are counted
  // finely (a hundred times the cost) once they are the most undecided, instead of being split.
  r.recount = !fine && g < 0.01 * range && 1.0 - fair - flip > 0.002;
  r.fair = static_cast<long double>(fair) * r.measure;
  r.unfair = static_cast<long double>(flip) * r.measure;
  return true;
}

}  // namespace witness
