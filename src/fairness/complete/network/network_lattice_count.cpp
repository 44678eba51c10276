// Exact counts on integer boxes where the network is affine (every ReLU stable: the linear bounds
// coincide up to rounding; a logistic regression always): the reference copy's logit is a sum of
// one term per feature, so the points of each kind (every copy below the threshold, every copy
// above, some above and some below) are those whose sum lies in an interval, counted by meeting in
// the middle: the sums of each half of the features sorted, and one merge-like sweep of the two
// per combination of the outer features (those that fit in neither half; linear models only),
// sweeps on several threads. Points whose sum lies within the rounding bounds of an interval's
// ends are decided one by one in exact arithmetic.
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <optional>
#include <tuple>
#include <utility>

#include "core/error.h"
#include "core/parallel.h"
#include "fairness/complete/network/network_regions.h"

namespace witness {
namespace {

// Sums kept per half inside a network: only where a count costs about what a bound does (a linear
// model, every region affine, keeps o.lattice_half_sums: one count in place of thousands of regions).
constexpr std::size_t kHalfInNetworks = std::size_t{1} << 12;
constexpr std::int64_t kExactAtMost = 20000;  // points decided one by one at most
constexpr std::size_t kCandidates = 8;        // surely unfair points tried as witnesses
// Combinations of the outer axes at most, each a sweep of both halves (linear models only).
constexpr double kOuterAtMost = 1 << 10;

// One feature's contributions over its values in the box, in order of value.
struct Axis {
  int feature = -1;
  double lo = 0.0;  // the raw value of entry 0
  std::vector<double> values;
  double error = 0.0;  // |exact - computed| for any entry
};

// Every sum of one value per axis with its mixed-radix index (axis 0 fastest), in order of sum.
struct IndexedSum {
  double sum;
  std::size_t index;
};

// The bits of x as an unsigned integer in the same order as x (negatives reversed below positives).
std::uint64_t ordered_bits(double x) {
  const auto bits = std::bit_cast<std::uint64_t>(x);
  return (bits >> 63U) != 0 ? ~bits : bits | (std::uint64_t{1} << 63U);
}

// Sorted by sum, least significant 11 bits first: linear in the sums' number, where a comparison
// sort of millions of them was most of a count's time.
void radix_sort(std::vector<IndexedSum>& v) {
  constexpr int kBits = 11;
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  std::vector<IndexedSum> other(v.size());
  std::vector<std::size_t> count(kBuckets);
  for (int shift = 0; shift < 64; shift += kBits) {
    std::fill(count.begin(), count.end(), 0);
    for (const IndexedSum& x : v) ++count[(ordered_bits(x.sum) >> static_cast<unsigned>(shift)) & (kBuckets - 1)];
    if (*std::max_element(count.begin(), count.end()) == v.size()) continue;  // one bucket: already in order
    std::size_t at = 0;
    for (std::size_t& c : count) at += std::exchange(c, at);
    for (const IndexedSum& x : v)
      other[count[(ordered_bits(x.sum) >> static_cast<unsigned>(shift)) & (kBuckets - 1)]++] = x;
    v.swap(other);
  }
}

std::vector<IndexedSum> sorted_sums(const std::vector<Axis>& axes) {
  std::vector<double> sums{0.0};
  for (const Axis& a : axes) {
    std::vector<double> next;
    next.reserve(sums.size() * a.values.size());
    for (double v : a.values)
      for (double s : sums) next.push_back(s + v);
    sums = std::move(next);
  }
  std::vector<IndexedSum> out(sums.size());
  for (std::size_t k = 0; k < sums.size(); ++k) out[k] = {sums[k], k};
  radix_sort(out);
  return out;
}

// A point of the box: its outer axes' rank, first half's mixed-radix index, second half's rank.
struct LatticePoint {
  std::size_t outer, a;
  std::int64_t b_rank;
};

// Raw values of the half's axes at mixed-radix index k (IndexedSum::index).
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

// Where each axis goes, largest first: to the smaller half while it stays within `most` sums, else
// to the outer axes, whose every combination is one sweep of the two halves.
std::vector<int> partition(const std::vector<double>& sizes, double most, double& outer) {
  std::vector<int> where;
  double size[2] = {1.0, 1.0};
  outer = 1.0;
  for (double n : sizes) {
    const int h = size[0] <= size[1] ? 0 : 1;
    if (size[h] * n <= most) {
      size[h] *= n;
      where.push_back(h);
    } else {
      outer *= n;
      where.push_back(2);
    }
  }
  return where;
}

// The reference logit's terms, one axis per feature that varies (the others fold into `constant`),
// with `magnitude` and `error` for the rounding bound; false where a term is real-valued.
// `term_of(f, terms)` gives feature f's terms.
bool axes_of(const SearchRegion& r, const Schema& schema, const std::vector<bool>& is_protected,
             const std::function<void(int, std::vector<LinearTerm>&)>& term_of, std::vector<Axis>& axes,
             double& constant, double& magnitude, double& error) {
  std::vector<LinearTerm> terms;
  for (int f = 0; f < schema.size(); ++f) {
    terms.clear();
    term_of(f, terms);
    const bool varies = !is_protected[static_cast<std::size_t>(f)] && r.lo(f) < r.hi(f);
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
      constant += a.values[0];  // rounding: in `magnitude`
    }
  }
  return true;
}

// The ends of the reference logit's sum L = constant + outer + a + b, moved inwards by the rounding
// bounds. Every copy at or below the threshold: L <= low; every copy above: L > high; some above and
// some below: flip_lo < L <= flip_hi.
struct SumEnds {
  double low, high, flip_lo, flip_hi;
};

// The three lists of sums (first half, second half, outer axes), each sorted with its mixed-radix
// indices.
struct HalfSums {
  std::vector<IndexedSum> a, b, outer;
};

// One sweep per combination of the outer axes (several threads when there are many).
struct Sweep {
  std::int64_t fair = 0, unfair = 0;
  std::vector<LatticePoint> unsure;  // decided one by one below
  std::vector<LatticePoint> flips;   // a few surely unfair points, first ones of each sweep
  // Surely unfair points per first-half sum (by position in sa), and per second-half rank as a
  // difference array: the marginals of the count (for whom), sized at the first unfair point.
  std::vector<std::int64_t> by_a, b_diff;
};

struct SweepTotals {
  std::int64_t fair = 0, unfair = 0;
  std::vector<LatticePoint> unsure, flips;
  std::vector<Sweep> sweeps;
  std::vector<std::int64_t> by_outer;  // surely unfair points per outer combination
};

// The sweeps: as the first half's sum grows, the number of second-half sums at or below each end
// only falls, so one merge-like pass per end counts every point; the points between the ends'
// rounding bounds are listed as unsure. Nothing when more than kExactAtMost are unsure.
std::optional<SweepTotals> sweep(const HalfSums& sums, double constant, const SumEnds& ends, unsigned threads,
                                 const std::atomic<bool>& stop) {
  const std::vector<IndexedSum>&sa = sums.a, &sb = sums.b, &so = sums.outer;
  const auto nb_total = static_cast<std::int64_t>(sb.size());
  // Moves `at` down to the number of second-half sums <= x.
  auto down_to = [&sb](std::int64_t& at, double x) {
    while (at > 0 && sb[static_cast<std::size_t>(at - 1)].sum > x) --at;
  };
  threads = so.size() > 1 ? threads : 1U;
  SweepTotals out;
  std::vector<Sweep>& sweeps = out.sweeps;
  sweeps.resize(std::min<std::size_t>(threads, so.size()));
  std::atomic<std::int64_t> unsure_points{0};
  std::atomic<bool> too_many{false};
  out.by_outer.assign(so.size(), 0);  // each entry written by the one sweep of it
  parallel_for(threads, so.size(), [&](std::size_t oi, unsigned worker) {
    Sweep& w = sweeps[worker];
    const IndexedSum& o = so[oi];
    std::int64_t to_low = nb_total, from_high = nb_total, from_flip = nb_total, to_flip = nb_total;
    const double outer = constant + o.sum;
    std::size_t flips_here = 0;
    // Locals, not w's members: the stores through by_a could alias them and keep them in memory.
    std::int64_t fair_here = 0, unfair_here = 0;
    std::int64_t* by_a = w.by_a.empty() ? nullptr : w.by_a.data();
    std::int64_t* b_diff = w.b_diff.empty() ? nullptr : w.b_diff.data();
    for (std::size_t i = 0; i < sa.size() && !too_many.load(std::memory_order_relaxed); ++i) {
      if ((i & 1023U) == 0 && stop.load(std::memory_order_relaxed)) throw Interrupted{};
      const IndexedSum& a = sa[i];
      const double base = outer + a.sum;
      down_to(to_low, ends.low - base), down_to(from_high, ends.high - base);
      down_to(from_flip, ends.flip_lo - base), down_to(to_flip, ends.flip_hi - base);
      fair_here += to_low + (nb_total - from_high);
      const std::int64_t flip_end = std::max(to_flip, from_flip);  // empty when flip_hi < flip_lo
      if (flip_end > from_flip) {
        if (by_a == nullptr) {
          w.by_a.assign(sa.size(), 0), w.b_diff.assign(sb.size() + 1, 0);
          by_a = w.by_a.data(), b_diff = w.b_diff.data();
        }
        unfair_here += flip_end - from_flip;
        by_a[i] += flip_end - from_flip;
        ++b_diff[from_flip];
        --b_diff[flip_end];
        if (flips_here < kCandidates) {
          w.flips.push_back({oi, a.index, from_flip});
          ++flips_here;
        }
      }
      // The rest (between low and flip_lo, and between flip_hi and high) is decided point by point.
      for (auto [s, e] : {std::pair{to_low, std::max(to_low, std::min(from_flip, from_high))},
                          std::pair{std::max(flip_end, to_low), from_high}}) {
        if (e <= s) continue;
        if (unsure_points.fetch_add(e - s) + (e - s) > kExactAtMost) {
          too_many = true;
          break;
        }
        for (std::int64_t k = s; k < e; ++k) w.unsure.push_back({oi, a.index, k});
      }
    }
    w.fair += fair_here, w.unfair += unfair_here;
    out.by_outer[oi] = unfair_here;
  });
  if (too_many) return std::nullopt;
  for (Sweep& w : sweeps) {
    out.fair += w.fair, out.unfair += w.unfair;
    out.unsure.insert(out.unsure.end(), w.unsure.begin(), w.unsure.end());
    out.flips.insert(out.flips.end(), w.flips.begin(), w.flips.end());
  }
  // The candidates of the first sweeps, whichever thread ran them: the same witness every run.
  std::sort(out.flips.begin(), out.flips.end(), [](const LatticePoint& x, const LatticePoint& y) {
    return std::tie(x.outer, x.a) < std::tie(y.outer, y.a);
  });
  if (out.flips.size() > kCandidates) out.flips.resize(kCandidates);
  return out;
}

// The surely unfair points per value of each varying feature (the unsure ones are added later).
std::vector<std::vector<long double>> marginals(const std::array<std::vector<Axis>, 3>& half, const HalfSums& sums,
                                                const SweepTotals& totals, int features) {
  std::vector<std::vector<long double>> by_value(static_cast<std::size_t>(features));
  for (const std::vector<Axis>& part : half)
    for (const Axis& ax : part) by_value[static_cast<std::size_t>(ax.feature)].assign(ax.values.size(), 0.0L);
  auto spread = [&by_value](const std::vector<Axis>& part, std::size_t index, std::int64_t count) {
    for (const Axis& ax : part) {  // mixed radix, axis 0 fastest
      by_value[static_cast<std::size_t>(ax.feature)][index % ax.values.size()] += static_cast<long double>(count);
      index /= ax.values.size();
    }
  };
  for (std::size_t oi = 0; oi < sums.outer.size(); ++oi)
    if (totals.by_outer[oi] > 0) spread(half[2], sums.outer[oi].index, totals.by_outer[oi]);
  std::vector<std::int64_t> per_rank(sums.b.size() + 1, 0);
  for (const Sweep& w : totals.sweeps) {
    if (w.by_a.empty()) continue;
    for (std::size_t i = 0; i < sums.a.size(); ++i)
      if (w.by_a[i] > 0) spread(half[0], sums.a[i].index, w.by_a[i]);
    for (std::size_t k = 0; k < per_rank.size(); ++k) per_rank[k] += w.b_diff[k];
  }
  std::int64_t running = 0;
  for (std::size_t k = 0; k < sums.b.size(); ++k)
    if ((running += per_rank[k]) > 0) spread(half[1], sums.b[k].index, running);
  return by_value;
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
  const double most = static_cast<double>(net_.layers.size() == 1 ? o_.lattice_half_sums : kHalfInNetworks);
  const double outer_most = net_.layers.size() == 1 ? kOuterAtMost : 1.0;
  {  // Too large to meet in the middle: said before any sum is formed (most regions are).
    std::vector<double> spans;
    for (int f = 0; f < schema_.size(); ++f)
      if (!is_protected_[static_cast<std::size_t>(f)] && r.lo(f) < r.hi(f)) spans.push_back(r.hi(f) - r.lo(f) + 1.0);
    std::sort(spans.rbegin(), spans.rend());
    double outer = 1.0;
    (void)partition(spans, most, outer);
    if (outer > outer_most) return false;
  }
  std::vector<Axis> axes;
  double constant = b.lower_const, magnitude = std::abs(b.lower_const) + std::abs(b.upper_const), error = 0.0;
  const Eigen::VectorXd combo_raw = raw_with(r.lo, ref);
  auto term_of = [&](int f, std::vector<LinearTerm>& terms) { feature_term(r, combo_raw, b.lower_coef, f, terms); };
  if (!axes_of(r, schema_, is_protected_, term_of, axes, constant, magnitude, error)) return false;
  // Halves of about equal size (largest axes first, each to the smaller half), the rest outer.
  std::sort(axes.begin(), axes.end(), [](const Axis& x, const Axis& y) { return x.values.size() > y.values.size(); });
  std::vector<double> sizes(axes.size());
  for (std::size_t k = 0; k < axes.size(); ++k) sizes[k] = static_cast<double>(axes[k].values.size());
  double outer_size = 1.0;
  const std::vector<int> where = partition(sizes, most, outer_size);
  std::array<std::vector<Axis>, 3> half;  // the two halves, and the outer axes
  for (std::size_t k = 0; k < axes.size(); ++k) half[where[k]].push_back(std::move(axes[k]));
  // Every rounding on the way from the exact logit to ((constant + outer) + a) + b in double.
  const double t = net_.threshold;
  const double slack = error +
                       4.0 * static_cast<double>(axes.size() + 8) * kUnitRoundoff *
                           (magnitude + std::abs(t) + std::abs(min_dl) + std::abs(max_du)) +
                       kTinyError;
  const double el = b.lower_err, eu = b.upper_err, g = (b.upper_const - b.lower_const) + el + eu;
  const SumEnds ends{t - max_du - g - slack, t - min_dl + el + slack, t - max_dl + el + slack, t - min_du - g - slack};
  const HalfSums sums{sorted_sums(half[0]), sorted_sums(half[1]), sorted_sums(half[2])};
  const std::vector<IndexedSum>&sa = sums.a, &sb = sums.b, &so = sums.outer;
  const auto nb_total = static_cast<std::int64_t>(sb.size());
  std::optional<SweepTotals> totals = sweep(sums, constant, ends, count_threads_, signals_.stop);
  if (!totals) return false;
  std::int64_t fair = totals->fair, unfair = totals->unfair;
  const std::vector<LatticePoint>&unsure = totals->unsure, &flips = totals->flips;
  std::vector<std::vector<long double>> by_value = marginals(half, sums, *totals, schema_.size());
  Eigen::VectorXd raw = r.lo;
  auto place_point = [&](const LatticePoint& p) {
    place(half[2], so[p.outer].index, raw);
    place(half[0], p.a, raw);
    place(half[1], sb[static_cast<std::size_t>(p.b_rank)].index, raw);
  };
  const int nc = static_cast<int>(combos_.size());
  // A box with unfair points and no witness anywhere yet: its surely unfair points are candidates
  // (replayed on the model); if none replays, it is split on, to find one.
  if (unfair > 0 && r.known.empty() && signals_.witnesses_found.load(std::memory_order_relaxed) == 0) {
    bool found = false;
    for (const LatticePoint& f : flips) {
      place_point(f);
      for (auto p = r.open.begin(); p != r.open.end() && !found; ++p) found = try_candidate(raw, *p / nc, *p % nc, ev);
      if (found) break;
    }
    if (!found) return false;
  }
  if (!unsure.empty()) {
    Eigen::MatrixXd block(schema_.size(), static_cast<Eigen::Index>(unsure.size()));
    for (std::size_t k = 0; k < unsure.size(); ++k) {
      place_point(unsure[k]);
      block.col(static_cast<Eigen::Index>(k)) = raw;
    }
    std::vector<std::vector<char>> label(combos_.size(), std::vector<char>(unsure.size(), 0)), ok(label);
    label_block(block, input_errors(r), needed, valid_.over_box(r.lo, r.hi), label, ok, true);
    for (std::size_t u = 0; u < unsure.size(); ++u) {
      bool flipped = false;
      for (int p : r.open) {
        const auto pi = static_cast<std::size_t>(p / nc), pj = static_cast<std::size_t>(p % nc);
        flipped = flipped || (label[pi][u] == 1 && label[pj][u] == 0 && ok[pi][u] != 0 && ok[pj][u] != 0);
      }
      (flipped ? unfair : fair) += 1;
      if (flipped)
        for (const std::vector<Axis>& part : half)
          for (const Axis& ax : part)
            by_value[static_cast<std::size_t>(ax.feature)]
                    [static_cast<std::size_t>(block(ax.feature, static_cast<Eigen::Index>(u)) - ax.lo)] += 1.0L;
    }
  }
  const auto total = static_cast<std::int64_t>(so.size() * sa.size()) * nb_total;
  if (fair + unfair != total || static_cast<long double>(total) != r.measure)
    throw InternalError("lattice count: the kinds of points do not add up to the box");
  // As for whole counts: a small, partly unfair box is enumerated instead (its marginals).
  if (unfair > 0 && unfair < total && total < 65536) return false;
  ev.closed = true;
  ev.certified = static_cast<long double>(fair);
  ev.falsified = static_cast<long double>(unfair);
  ev.all_falsified = unfair == total;
  if (unfair > 0 && unfair < total) {
    for (int f = 0; f < schema_.size(); ++f) {
      std::vector<long double>& v = by_value[static_cast<std::size_t>(f)];
      if (is_protected_[static_cast<std::size_t>(f)]) continue;
      if (v.empty()) v.assign(1, static_cast<long double>(unfair));  // one value in this box
      if (std::accumulate(v.begin(), v.end(), 0.0L) != static_cast<long double>(unfair))
        throw InternalError("lattice count: the unfair points per value do not add up");
    }
    ev.unfair_by_value = std::move(by_value);
  }
  ++ev.counters.counted;
  return true;
}

}  // namespace witness
