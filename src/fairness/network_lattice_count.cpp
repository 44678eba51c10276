// Exact counts on integer boxes where the network is affine (every ReLU stable: the linear bounds
// coincide up to rounding; a logistic regression always): the reference copy's logit is a sum of
// one term per feature, so the points of each kind (every copy below the threshold, every copy
// above, some above and some below) are those whose sum lies in an interval, counted by meeting in
// the middle: the sums of one half of the features sorted, each sum of the other half looked up.
// Points whose sum lies within the rounding bounds of an interval's ends are decided one by one in
// exact arithmetic.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "fairness/network_regions.h"

namespace witness {
namespace {

// Sums kept per half: for a linear model (every region affine) up to 16 MB, one count in place of
// thousands of regions; inside a network only where a count costs about what a bound does.
constexpr std::size_t kHalfAtMost = std::size_t{1} << 21;
constexpr std::size_t kHalfInNetworks = std::size_t{1} << 12;
constexpr std::int64_t kExactAtMost = 20000;  // points decided one by one at most

// One feature's contributions over its values in the box, in order of value.
struct Axis {
  int feature = -1;
  double lo = 0.0;  // the raw value of entry 0
  std::vector<double> values;
  double error = 0.0;  // |exact - computed| for any entry
};

// Every sum of one value per axis, with the mixed-radix index of each (axis 0 fastest).
std::vector<double> all_sums(const std::vector<Axis>& axes) {
  std::vector<double> sums{0.0};
  for (const Axis& a : axes) {
    std::vector<double> next;
    next.reserve(sums.size() * a.values.size());
    for (double v : a.values)
      for (double s : sums) next.push_back(s + v);
    sums = std::move(next);
  }
  return sums;
}

// Raw values of the half's axes at mixed-radix index k (the order of all_sums).
void place(const std::vector<Axis>& axes, std::size_t k, Eigen::VectorXd& raw) {
  std::size_t inner = 1;
  for (const Axis& a : axes) inner *= a.values.size();
  for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
    inner /= it->values.size();
    const std::size_t digit = k / inner;
    raw(it->feature) = it->lo + static_cast<double>(digit);
    k %= inner;
  }
}

}  // namespace

bool NetworkRegions::lattice_count(SearchRegion& r, const std::vector<NetworkBounds>& nb,
                                   const std::vector<bool>& needed, const DifferenceCache& diff,
                                   RegionEvaluation& ev) const {
  int ref = -1;
  for (std::size_t c = 0; c < needed.size() && ref < 0; ++c)
    if (needed[c] && nb[c].lower_coef.size() > 0) ref = static_cast<int>(c);
  if (ref < 0) return false;
  const auto ru = static_cast<std::size_t>(ref);
  const NetworkBounds& b = nb[ru];
  if (b.upper_coef != b.lower_coef) return false;                 // some neuron unstable: not affine
  double min_dl = 0.0, max_dl = 0.0, min_du = 0.0, max_du = 0.0;  // z_c - z_ref for every needed c
  for (std::size_t c = 0; c < needed.size(); ++c) {
    if (!needed[c] || c == ru) continue;
    const Interval d = diff.get(c, ru);
    min_dl = std::min(min_dl, d.lo), max_dl = std::max(max_dl, d.lo);
    min_du = std::min(min_du, d.hi), max_du = std::max(max_du, d.hi);
  }
  {  // Too large to meet in the middle: said before any sum is formed (most regions are).
    std::vector<double> spans;
    for (int f = 0; f < schema_.size(); ++f)
      if (!is_protected_[static_cast<std::size_t>(f)] && r.lo(f) < r.hi(f)) spans.push_back(r.hi(f) - r.lo(f) + 1.0);
    std::sort(spans.rbegin(), spans.rend());
    double part[2] = {1.0, 1.0};
    for (double n : spans) part[part[0] <= part[1] ? 0 : 1] *= n;
    const std::size_t most = net_.layers.size() == 1 ? kHalfAtMost : kHalfInNetworks;
    if (std::max(part[0], part[1]) > static_cast<double>(most)) return false;
  }
  // The reference logit's terms, one axis per feature that varies (others fold into the constant).
  std::vector<LinearTerm> terms;
  std::vector<Axis> axes;
  double constant = b.lower_const, magnitude = std::abs(b.lower_const) + std::abs(b.upper_const), error = 0.0;
  const Eigen::VectorXd combo_raw = raw_with(r.lo, ref);
  for (int f = 0; f < schema_.size(); ++f) {
    terms.clear();
    feature_term(r, combo_raw, b.lower_coef, f, terms);
    const bool varies = !is_protected_[static_cast<std::size_t>(f)] && r.lo(f) < r.hi(f);
    Axis a{f, r.lo(f), {}, 0.0};
    const auto n = varies ? static_cast<std::size_t>(r.hi(f) - r.lo(f) + 1.0) : 1U;
    a.values.assign(n, 0.0);
    for (const LinearTerm& t : terms) {
      if (t.kind == LinearTerm::Kind::Reals) return false;
      for (std::size_t k = 0; k < n; ++k)
        a.values[k] =
            t.kind == LinearTerm::Kind::Table ? t.table[k] : t.slope * (t.lo + static_cast<double>(k)) + t.offset;
      a.error = t.error + 2.0 * kUnitRoundoff *
                              (std::abs(t.slope) * std::max(std::abs(t.lo), std::abs(t.hi)) + std::abs(t.offset));
    }
    double biggest = 0.0;
    for (double v : a.values) biggest = std::max(biggest, std::abs(v));
    magnitude += biggest;
    error += a.error;
    if (varies) {
      axes.push_back(std::move(a));
    } else {
      constant += a.values[0];  // rounding: in `magnitude` below
    }
  }
  // Halves of about equal size (largest axes first, each to the smaller half).
  std::sort(axes.begin(), axes.end(), [](const Axis& x, const Axis& y) { return x.values.size() > y.values.size(); });
  std::vector<Axis> half[2];
  double size[2] = {1.0, 1.0};
  for (Axis& a : axes) {
    const int h = size[0] <= size[1] ? 0 : 1;
    size[h] *= static_cast<double>(a.values.size());
    half[h].push_back(std::move(a));
  }
  // Every rounding on the way from the exact logit to (constant + a) + b in double.
  const double t = net_.threshold;
  const double slack = error +
                       4.0 * static_cast<double>(axes.size() + 8) * kUnitRoundoff *
                           (magnitude + std::abs(t) + std::abs(min_dl) + std::abs(max_du)) +
                       kTinyError;
  const double el = b.lower_err, eu = b.upper_err, g = (b.upper_const - b.lower_const) + el + eu;
  // L = constant + a + b. Every copy at or below t: L <= low; every copy above: L > high; some
  // above and some below: flip_lo < L <= flip_hi. Ends moved inwards by the rounding bounds.
  const double low = t - max_du - g - slack, high = t - min_dl + el + slack;
  const double flip_lo = t - max_dl + el + slack, flip_hi = t - min_du - g - slack;
  std::vector<double> sa = all_sums(half[0]), sb = all_sums(half[1]);
  std::vector<std::size_t> order(sb.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&sb](std::size_t x, std::size_t y) { return sb[x] < sb[y]; });
  std::vector<double> sorted(sb.size());
  for (std::size_t k = 0; k < order.size(); ++k) sorted[k] = sb[order[k]];
  // Indices into `sorted` of the first b with constant + a + b > x.
  auto above = [&sorted](double x) {
    return static_cast<std::int64_t>(std::upper_bound(sorted.begin(), sorted.end(), x) - sorted.begin());
  };
  std::int64_t fair = 0, unfair = 0;
  std::vector<std::pair<std::size_t, std::int64_t>> unsure;  // (index in half 0, rank in sorted)
  const auto nb_total = static_cast<std::int64_t>(sorted.size());
  for (std::size_t i = 0; i < sa.size(); ++i) {
    if ((i & 1023U) == 0 && signals_.stop.load(std::memory_order_relaxed)) throw Interrupted{};
    const double base = constant + sa[i];
    const std::int64_t to_low = above(low - base), from_high = above(high - base);
    fair += to_low + (nb_total - from_high);
    std::int64_t from_flip = above(flip_lo - base), to_flip = above(flip_hi - base);
    if (to_flip < from_flip) to_flip = from_flip;  // empty
    unfair += to_flip - from_flip;
    // The rest (between low and flip_lo, and between flip_hi and high) is decided point by point.
    for (auto [s, e] : {std::pair{to_low, std::max(to_low, std::min(from_flip, from_high))},
                        std::pair{std::max(to_flip, to_low), from_high}}) {
      if (e <= s) continue;
      if (static_cast<std::int64_t>(unsure.size()) + (e - s) > kExactAtMost) return false;
      for (std::int64_t k = s; k < e; ++k) unsure.emplace_back(i, k);
    }
  }
  // A box with unfair points and no witness anywhere yet is split on, to find one.
  if (unfair > 0 && r.known.empty() && signals_.witnesses_found.load(std::memory_order_relaxed) == 0) return false;
  if (!unsure.empty()) {
    const int nc = static_cast<int>(combos_.size());
    Eigen::MatrixXd block(schema_.size(), static_cast<Eigen::Index>(unsure.size()));
    Eigen::VectorXd raw = r.lo;
    for (std::size_t k = 0; k < unsure.size(); ++k) {
      place(half[0], unsure[k].first, raw);
      place(half[1], order[static_cast<std::size_t>(unsure[k].second)], raw);
      block.col(static_cast<Eigen::Index>(k)) = raw;
    }
    std::vector<std::vector<char>> label(combos_.size(), std::vector<char>(unsure.size(), 0)), ok(label);
    label_block(block, input_errors(r), needed, valid_.over_box(r.lo, r.hi), label, ok, true);
    for (std::size_t u = 0; u < unsure.size(); ++u) {
      bool flips = false;
      for (int p : r.open) {
        const auto pi = static_cast<std::size_t>(p / nc), pj = static_cast<std::size_t>(p % nc);
        flips = flips || (label[pi][u] == 1 && label[pj][u] == 0 && ok[pi][u] != 0 && ok[pj][u] != 0);
      }
      (flips ? unfair : fair) += 1;
    }
  }
  const auto total = static_cast<std::int64_t>(sa.size()) * nb_total;
  if (fair + unfair != total || static_cast<long double>(total) != r.measure)
    throw InternalError("lattice count: the kinds of points do not add up to the box");
  // As for whole counts: a small, partly unfair box is enumerated instead (its marginals).
  if (unfair > 0 && unfair < total && total < 65536) return false;
  ev.closed = true;
  ev.certified = static_cast<long double>(fair);
  ev.falsified = static_cast<long double>(unfair);
  ev.all_falsified = unfair == total;
  ++ev.counters.counted;
  return true;
}

}  // namespace witness
