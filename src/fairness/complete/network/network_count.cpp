#include <algorithm>
#include <cmath>
#include <optional>

#include "fairness/complete/network/network_regions.h"

namespace witness {

namespace {

constexpr int kCountBins = 256;             // bins of a first count
constexpr int kFineBins = 16384;            // where the bounds are near-linear and binning limits the count
constexpr double kMinCounted = 0.02;        // no count where a normal approximation says it decides less
constexpr std::size_t kEachCopyAtMost = 4;  // copies bounded one by one (Bonferroni) at most
constexpr double kEachCopyGain = 0.01;      // ... where the approximation says they decide this much more

double gamma_n(Eigen::Index n) { return (static_cast<double>(n) + 4.0) * kUnitRoundoff * 1.01; }

}  // namespace

Interval NetworkRegions::DifferenceCache::get(std::size_t i, std::size_t j) const {
  const bool swap = i > j;
  const auto key = swap ? std::make_pair(j, i) : std::make_pair(i, j);
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    const auto [a, b] = key;
    Interval d = v_.bp_.difference(nb_[a], nb_[b], v_.combo_diff(a, b, true), v_.combo_diff(a, b, false));
    if (nb_[a].lower_coef.size() > 0 && nb_[b].lower_coef.size() > 0) {
      const Interval e = v_.linear_difference(r_, a, b, nb_[a], nb_[b]);
      d = {std::max(d.lo, e.lo), std::min(d.hi, e.hi)};
    }
    it = cache_.emplace(key, d).first;
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

namespace {

// One copy's linear bounds L <= z <= U over a region, as distributions over its points: lower
// bounds on the shares where z surely lies above a level, at or below one, or between two.
class CopyShares {
 public:
  // g bounds U - L over the box (with both errors): then L - el <= z <= L + g + eu, U - g - el <= z.
  CopyShares(const NetworkBounds& b, const std::vector<LinearTerm>& lterms, const std::vector<LinearTerm>& uterms,
             double g, int bins)
      : lower_(b.lower_const, 0.0, lterms, bins), el_(b.lower_err), eu_(b.upper_err), g_(g) {
    // Where every neuron is stable U is L shifted by a constant: one distribution serves both
    // (queries moved by the shift, and by its rounding in the safe direction).
    shift_ = b.upper_const - b.lower_const;
    if (b.upper_coef != b.lower_coef) own_.emplace(b.upper_const, 0.0, uterms, bins);
  }
  [[nodiscard]] double above(double a) const {
    return std::max(1.0 - lower_.cdf_upper(a + el_), 1.0 - u_upper(a + g_));
  }
  [[nodiscard]] double at_most(double b) const { return std::max(u_lower(b - eu_), lower_.cdf_lower(b - g_)); }
  // a < z <= b.
  [[nodiscard]] double between(double a, double b) const {
    return std::max({above(a) + at_most(b) - 1.0, lower_.cdf_lower(b - g_) - lower_.cdf_upper(a + el_),
                     u_lower(b - eu_) - u_upper(a + g_), 0.0});
  }
  [[nodiscard]] double range() const { return lower_.max() - lower_.min(); }

 private:
  [[nodiscard]] double slack(double s) const {
    return 4.0 * kUnitRoundoff * (std::abs(s) + std::abs(shift_)) + kTinyError;
  }
  [[nodiscard]] double u_lower(double s) const {
    return own_ ? own_->cdf_lower(s) : lower_.cdf_lower(s - shift_ - slack(s));
  }
  [[nodiscard]] double u_upper(double s) const {
    return own_ ? own_->cdf_upper(s) : lower_.cdf_upper(s - shift_ + slack(s));
  }
  LinearDistribution lower_;
  std::optional<LinearDistribution> own_;
  double el_, eu_, g_, shift_ = 0.0;
};

}  // namespace

Interval NetworkRegions::linear_difference(const SearchRegion& r, std::size_t i, std::size_t j, const NetworkBounds& a,
                                           const NetworkBounds& b) const {
  Eigen::VectorXd ilo, ihi, jlo, jhi;
  model_box(r, combos_[i], ilo, ihi);
  model_box(r, combos_[j], jlo, jhi);
  // Shared inputs: one variable in both boxes (the same bounds); the protected ones: each copy's own.
  double lo = a.lower_const - b.upper_const, hi = a.upper_const - b.lower_const;
  double mag = std::abs(a.lower_const) + std::abs(a.upper_const) + std::abs(b.lower_const) + std::abs(b.upper_const);
  for (Eigen::Index k = 0; k < ilo.size(); ++k) {
    const double m = std::max({std::abs(ilo(k)), std::abs(ihi(k)), std::abs(jlo(k)), std::abs(jhi(k))});
    mag += (std::abs(a.lower_coef(k)) + std::abs(a.upper_coef(k)) + std::abs(b.lower_coef(k)) +
            std::abs(b.upper_coef(k))) *
           m;
    if (ilo(k) == jlo(k) && ihi(k) == jhi(k)) {
      const double cl = a.lower_coef(k) - b.upper_coef(k), ch = a.upper_coef(k) - b.lower_coef(k);
      lo += std::min(cl * ilo(k), cl * ihi(k));
      hi += std::max(ch * ilo(k), ch * ihi(k));
    } else {
      lo += std::min(a.lower_coef(k) * ilo(k), a.lower_coef(k) * ihi(k)) -
            std::max(b.upper_coef(k) * jlo(k), b.upper_coef(k) * jhi(k));
      hi += std::max(a.upper_coef(k) * ilo(k), a.upper_coef(k) * ihi(k)) -
            std::min(b.lower_coef(k) * jlo(k), b.lower_coef(k) * jhi(k));
    }
  }
  // Every difference, product and sum above rounded: bounded together, like linear_gap's.
  const double err = gamma_n(ilo.size() + 6) * mag * 4.0;
  return {add_down(lo, -(err + a.lower_err + b.upper_err)), add_up(hi, err + a.upper_err + b.lower_err)};
}

double NetworkRegions::linear_gap(const SearchRegion& r, int combo, const NetworkBounds& b) const {
  Eigen::VectorXd lo, hi;
  model_box(r, combos_[static_cast<std::size_t>(combo)], lo, hi);
  const Eigen::VectorXd d = b.upper_coef - b.lower_coef;
  double g = b.upper_const - b.lower_const, mag = std::abs(b.upper_const) + std::abs(b.lower_const);
  for (Eigen::Index k = 0; k < d.size(); ++k) {
    g += std::max(d(k) * lo(k), d(k) * hi(k));
    mag += (std::abs(b.upper_coef(k)) + std::abs(b.lower_coef(k))) * std::max(std::abs(lo(k)), std::abs(hi(k)));
  }
  return g + gamma_n(d.size() + 4) * mag * 4.0 + b.lower_err + b.upper_err;
}

bool NetworkRegions::count(SearchRegion& r, const std::vector<NetworkBounds>& nb, const std::vector<bool>& needed,
                           const DifferenceCache& diff, bool fine) const {
  // The copies with linear bounds; the first is the reference the differences are taken to.
  std::vector<int> copies;
  for (std::size_t c = 0; c < needed.size(); ++c)
    if (needed[c] && nb[c].lower_coef.size() > 0) copies.push_back(static_cast<int>(c));
  if (copies.empty()) return false;
  const int ref = copies.front();
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
  // Every needed copy's own linear bounds also bound the shares, without the differences (which
  // are interval bounds, loose on deep networks): all copies above t on at least
  // sum_c P(z_c > t) - (m - 1) of the points (Bonferroni), and likewise at or below.
  const bool each_copy = copies.size() == static_cast<std::size_t>(std::count(needed.begin(), needed.end(), true)) &&
                         copies.size() > 1 && copies.size() <= kEachCopyAtMost;
  std::vector<std::vector<LinearTerm>> lterms(copies.size()), uterms(copies.size());
  double est = 0.0, each_high = 1.0 - static_cast<double>(copies.size()), each_low = each_high;
  for (std::size_t k = 0; k < copies.size(); ++k) {
    if (k > 0 && !each_copy) break;
    const NetworkBounds& b = nb[static_cast<std::size_t>(copies[k])];
    linear_terms(r, copies[k], b.lower_coef, lterms[k]);
    linear_terms(r, copies[k], b.upper_coef, uterms[k]);
    if (k == 0) {
      // A normal approximation of L and U first: counting is skipped where it would decide little.
      est = estimate_decided(lterms[0], b.lower_const, uterms[0], b.upper_const, t - min_dl, t - max_du, t - max_dl,
                             t - min_du);
    }
    if (each_copy) {
      each_high += estimate_decided(lterms[k], b.lower_const, uterms[k], b.upper_const, t, -INFINITY, 0.0, 0.0);
      each_low += estimate_decided(lterms[k], b.lower_const, uterms[k], b.upper_const, INFINITY, t, 0.0, 0.0);
    }
  }
  // The copies' own distributions cost a count each: built only where they promise more.
  const double each_est = std::max(0.0, each_high) + std::max(0.0, each_low);
  const bool use_each = each_copy && each_est > est + kEachCopyGain;
  est = std::max(est, each_est);
  if (est < kMinCounted) return false;
  double fair = 0.0, flip = 0.0;
  auto count_with = [&](int bins) {
    std::vector<CopyShares> shares;
    for (std::size_t k = 0; k < (use_each ? copies.size() : 1); ++k) {
      const auto c = static_cast<std::size_t>(copies[k]);
      shares.emplace_back(nb[c], lterms[k], uterms[k], linear_gap(r, copies[k], nb[c]), bins);
    }
    const CopyShares& z = shares.front();
    double high = z.above(t - min_dl);                                         // every copy above t
    double low = z.at_most(t - max_du);                                        // every copy at or below t
    flip = t - max_dl < t - min_du ? z.between(t - max_dl, t - min_du) : 0.0;  // some above t, some at or below
    if (use_each) {
      double all_above = 1.0 - static_cast<double>(shares.size()), all_below = all_above;
      for (const CopyShares& s : shares) all_above += s.above(t), all_below += s.at_most(t);
      high = std::max(high, all_above);
      low = std::max(low, all_below);
      const int nc = static_cast<int>(combos_.size());
      auto share_of = [&](int c) -> const CopyShares& {
        return shares[static_cast<std::size_t>(std::find(copies.begin(), copies.end(), c) - copies.begin())];
      };
      for (int p : r.open) flip = std::max(flip, share_of(p / nc).above(t) + share_of(p % nc).at_most(t) - 1.0);
    }
    fair = std::min(1.0, std::max(0.0, high) + std::max(0.0, low));
    flip = std::min(flip, 1.0 - fair);
    return std::pair{z.range(), linear_gap(r, ref, nb[ru])};
  };
  const auto [range, g] = count_with(fine ? kFineBins : kCountBins);
  // Near-linear regions are limited by the discretisation, not by the bounds: they are counted
  // finely (a hundred times the cost) once they are the most undecided, instead of being split.
  r.recount = !fine && g < 0.01 * range && 1.0 - fair - flip > 0.002;
  r.fair = static_cast<long double>(fair) * r.measure;
  r.unfair = static_cast<long double>(flip) * r.measure;
  return true;
}

}  // namespace witness
