#include "fairness/complete/trees/tree_cell_count.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "core/error.h"

namespace witness {

namespace {

// Small limits: a box is counted when little is left of its trees (cheaper than splitting it
// further); larger ones cost more in failed tries than they save (Adult, XGBoost 30 x 4).
constexpr double kMaxGroupCells = 1024;  // cells of one group of trees
constexpr double kMaxWalks = 4096;       // tree walks over every group's cells and copies
constexpr double kMaxHalf = 1 << 16;     // sums of either half

// One half of the groups: every combination of their cells' sums, the first group's cell varying
// fastest (entry e has group k's cell (e / product of the earlier groups' cells) % its cells).
struct Half {
  std::vector<std::size_t> groups;
  std::vector<double> lo, hi;  // per entry: the copies' smallest and largest sum
  std::vector<long double> weight;
  // Group gi's cells (values[c * copies]: the same for every copy) added to every entry.
  void add(std::size_t gi, const std::vector<double>& values, const std::vector<long double>& weights,
           std::size_t copies) {
    const std::size_t m = weight.size(), n = weights.size();
    std::vector<double> l(m * n), h(m * n);
    std::vector<long double> w(m * n);
    for (std::size_t c = 0; c < n; ++c)
      for (std::size_t i = 0; i < m; ++i) {
        l[c * m + i] = lo[i] + values[c * copies];
        h[c * m + i] = hi[i] + values[c * copies];
        w[c * m + i] = weight[i] * weights[c];
      }
    lo = std::move(l), hi = std::move(h), weight = std::move(w);
    groups.push_back(gi);
  }
};

int root(std::vector<int>& parent, int x) {
  auto at = [&parent](int i) -> int& { return parent[static_cast<std::size_t>(i)]; };
  while (at(x) != x) x = at(x) = at(at(x));  // with path halving
  return x;
}

// One group of trees: the features they test in the box, each cut into cells.
struct Group {
  std::vector<int> features;
  std::vector<std::size_t> trees;
  std::vector<std::vector<double>> starts;        // per feature, its cells' first values
  std::vector<std::vector<long double>> weights;  // ... and their numbers of points
  double cells = 1.0;
};

// Every cell of the group: per copy, the sum of its trees at the cell (values[cell * copies + k]).
void sum_cells(const RawTrees& trees, const Group& g, const std::vector<Eigen::VectorXd>& lo,
               std::vector<double>& values, std::vector<long double>& weights) {
  const std::size_t nc = lo.size(), n = static_cast<std::size_t>(g.cells);
  values.assign(n * nc, 0.0);
  weights.assign(n, 1.0L);
  std::vector<std::size_t> digit(g.features.size(), 0);
  for (std::size_t cell = 0; cell < n; ++cell) {
    long double w = 1.0L;
    for (std::size_t i = 0; i < g.features.size(); ++i) w *= g.weights[i][digit[i]];
    weights[cell] = w;
    for (std::size_t i = 0; i < digit.size(); ++i) {  // the next cell, first feature fastest
      if (++digit[i] < g.starts[i].size()) break;
      digit[i] = 0;
    }
  }
  // Tree by tree (in order, so each cell's sum adds its trees as one walk per cell did).
  for (std::size_t t : g.trees)
    for (std::size_t k = 0; k < nc; ++k) trees.add_over_cells(t, lo[k], g.features, g.starts, values, nc, k);
}

// The trees undecided in a box joined into groups that test disjoint sets of features (each
// feature cut into cells where some tree's split falls); the decided trees' leaves add up to a
// constant per copy.
struct TreeGroups {
  std::vector<Group> groups;
  std::vector<double> constant;  // per copy
  std::vector<bool> tested;      // per feature: some undecided tree tests it
};

std::optional<TreeGroups> group_trees(const RawTrees& trees, int nf, const std::vector<Eigen::VectorXd>& lo,
                                      const std::vector<Eigen::VectorXd>& hi) {
  const std::size_t nc = lo.size();
  TreeGroups out;
  std::vector<double>& constant = out.constant;
  std::vector<bool>& tested = out.tested;
  std::vector<Group>& groups = out.groups;
  constant.assign(nc, 0.0);
  tested.assign(static_cast<std::size_t>(nf), false);
  std::vector<std::vector<double>> breaks(static_cast<std::size_t>(nf));
  std::vector<int> parent(static_cast<std::size_t>(nf));
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<std::pair<std::size_t, int>> active;  // (tree, one feature it tests)
  std::vector<double> leaf(nc);
  for (std::size_t t = 0; t < trees.tree_count(); ++t) {
    int first = -1;
    for (std::size_t k = 0; k < nc; ++k) {
      const RawTrees::TreeInBox b = trees.in_box(t, lo[k], hi[k], breaks);
      leaf[k] = b.leaf;
      for (int f : b.features) {
        tested[static_cast<std::size_t>(f)] = true;
        if (first < 0) first = f;
        parent[static_cast<std::size_t>(root(parent, f))] = root(parent, first);
      }
    }
    if (first < 0) {
      for (std::size_t k = 0; k < nc; ++k) constant[k] += leaf[k];
    } else {
      active.emplace_back(t, first);
    }
  }
  std::map<int, std::size_t> group_of_root;
  for (int f = 0; f < nf; ++f) {
    if (!tested[static_cast<std::size_t>(f)]) continue;
    const auto [it, fresh] = group_of_root.try_emplace(root(parent, f), groups.size());
    if (fresh) groups.emplace_back();
    Group& g = groups[it->second];
    g.features.push_back(f);
    std::vector<double>& b = breaks[static_cast<std::size_t>(f)];
    const double a = lo[0](f), z = hi[0](f);
    std::erase_if(b, [&](double v) { return v < a || v >= z; });
    std::sort(b.begin(), b.end());
    b.erase(std::unique(b.begin(), b.end()), b.end());
    std::vector<double> starts{a};
    std::vector<long double> weights;
    for (double v : b) {
      weights.push_back(static_cast<long double>(v - starts.back() + 1.0));
      starts.push_back(v + 1.0);
    }
    weights.push_back(static_cast<long double>(z - starts.back() + 1.0));
    g.cells *= static_cast<double>(starts.size());
    g.starts.push_back(std::move(starts));
    g.weights.push_back(std::move(weights));
  }
  for (const auto& [t, f] : active) groups[group_of_root[root(parent, f)]].trees.push_back(t);
  double walks = 0.0;
  for (const Group& g : groups) {
    if (g.cells > kMaxGroupCells) return std::nullopt;
    walks += g.cells * static_cast<double>(g.trees.size() * nc);
  }
  if (walks > kMaxWalks) return std::nullopt;
  return out;
}

// Two halves, each every combination of its groups' cells (the first group's cell varying
// fastest), so that an entry's position says which cells it stands for. Groups whose sums
// differ between copies are multiplied out into the first (starting from the constants) and
// kept as each entry's smallest and largest copy; the others go to the second half while it
// stays within bounds, then to the first. False when the halves would grow too large.
bool split_into_halves(const RawTrees& trees, const TreeGroups& tg, const std::vector<Eigen::VectorXd>& lo, Half& first,
                       Half& second) {
  const std::size_t nc = lo.size();
  const std::vector<Group>& groups = tg.groups;
  std::vector<double> dep = tg.constant;  // per entry, per copy
  first.weight = second.weight = {1.0L};
  second.lo = second.hi = {0.0};
  std::vector<std::vector<double>> values(groups.size());
  std::vector<std::vector<long double>> weights(groups.size());
  std::vector<std::size_t> shared;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    sum_cells(trees, groups[gi], lo, values[gi], weights[gi]);
    const std::vector<double>& v = values[gi];
    const std::size_t n = weights[gi].size();
    bool differs = false;
    for (std::size_t c = 0; c < n && !differs; ++c)
      for (std::size_t k = 1; k < nc && !differs; ++k) differs = v[c * nc + k] != v[c * nc];
    if (!differs) {
      shared.push_back(gi);
      continue;
    }
    const std::size_t m = first.weight.size();
    if (static_cast<double>(m) * static_cast<double>(n) > kMaxHalf) return false;
    std::vector<double> d(m * n * nc);
    std::vector<long double> w(m * n);
    for (std::size_t c = 0; c < n; ++c)
      for (std::size_t i = 0; i < m; ++i) {
        w[c * m + i] = first.weight[i] * weights[gi][c];
        for (std::size_t k = 0; k < nc; ++k) d[(c * m + i) * nc + k] = dep[i * nc + k] + v[c * nc + k];
      }
    dep = std::move(d);
    first.weight = std::move(w);
    first.groups.push_back(gi);
  }
  first.lo.resize(first.weight.size());
  first.hi.resize(first.weight.size());
  for (std::size_t i = 0; i < first.weight.size(); ++i) {
    const auto row = dep.begin() + static_cast<std::ptrdiff_t>(i * nc);
    const auto [mn, mx] = std::minmax_element(row, row + static_cast<std::ptrdiff_t>(nc));
    first.lo[i] = *mn, first.hi[i] = *mx;
  }
  std::sort(shared.begin(), shared.end(),
            [&](std::size_t a, std::size_t b) { return groups[a].cells < groups[b].cells; });
  for (std::size_t gi : shared) {
    auto fits = [&](const Half& h) { return static_cast<double>(h.weight.size()) * groups[gi].cells <= kMaxHalf; };
    Half* into = fits(second) ? &second : fits(first) ? &first : nullptr;
    if (into == nullptr) return false;
    into->add(gi, values[gi], weights[gi], nc);
  }
  return true;
}

// Unfair points per entry of either half, and the counts.
struct HalfCounts {
  std::vector<long double> unfair_first, unfair_second;
  long double total = 0.0L;
  std::size_t unfair_first_entry = 0, unfair_second_entry = 0;  // one pair of entries with unfair points
};

// The sweep over the second half in order of its sums: a first-half entry's points are all low,
// all high, or split (unfair) by where its range of sums meets the second half's; nothing when
// some sum lies within rounding of the rule's threshold.
std::optional<HalfCounts> sweep_halves(const Half& first, const Half& second, double low, double high,
                                       CellCounts& out) {
  HalfCounts hc;
  std::vector<long double>& unfair_first = hc.unfair_first;
  std::vector<long double>& unfair_second = hc.unfair_second;
  long double& total = hc.total;
  std::size_t& unfair_first_entry = hc.unfair_first_entry;
  std::size_t& unfair_second_entry = hc.unfair_second_entry;
  const std::size_t ns = second.weight.size();
  std::vector<std::size_t> order(ns);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return second.lo[a] < second.lo[b]; });
  std::vector<double> sums(ns);
  std::vector<long double> below(ns + 1, 0.0L);  // below[j]: weight of the j smallest sums
  for (std::size_t j = 0; j < ns; ++j) {
    sums[j] = second.lo[order[j]];
    below[j + 1] = below[j] + second.weight[order[j]];
  }
  const long double all = below.back();
  auto count_low = [&](double x) {  // sums with x + sum surely low: a prefix
    return static_cast<std::size_t>(
        std::partition_point(sums.begin(), sums.end(), [&](double b) { return x + b <= low; }) - sums.begin());
  };
  auto first_high = [&](double x) {  // the first sum with x + sum surely high
    return static_cast<std::size_t>(
        std::partition_point(sums.begin(), sums.end(), [&](double b) { return x + b < high; }) - sums.begin());
  };
  // Unfair points per entry of either half: a first-half entry's from its range of second-half
  // sums; a second-half entry's from every first-half range it lies in (a difference array).
  unfair_first.assign(first.weight.size(), 0.0L);
  unfair_second.assign(ns, 0.0L);
  std::vector<long double> step(ns + 1, 0.0L);
  for (std::size_t i = 0; i < first.weight.size(); ++i) {
    const long double all_low = below[count_low(first.hi[i])], all_high = all - below[first_high(first.lo[i])];
    const std::size_t mn_low = count_low(first.lo[i]), mx_high = first_high(first.hi[i]);
    const long double split = mn_low > mx_high ? below[mn_low] - below[mx_high] : 0.0L;
    if (all_low + all_high + split != all) return std::nullopt;  // some sum within rounding of the rule's threshold
    out.fair += first.weight[i] * (all_low + all_high);
    out.unfair += first.weight[i] * split;
    unfair_first[i] = first.weight[i] * split;
    total += first.weight[i] * all;
    if (mn_low <= mx_high) continue;
    step[mx_high] += first.weight[i], step[mn_low] -= first.weight[i];
    if (out.unfair == first.weight[i] * split) unfair_first_entry = i, unfair_second_entry = order[mx_high];
  }
  long double covering = 0.0L;
  for (std::size_t j = 0; j < ns; ++j) {
    covering += step[j];
    unfair_second[order[j]] = covering * second.weight[order[j]];
  }
  return hc;
}

// For whom: each group's unfair points per cell, then per cell of each of its features; and the
// point of the first unfair pair of entries (each feature at its cell's first value).
void unfair_by_cell(const std::vector<Group>& groups, const Half& first, const Half& second, const HalfCounts& hc,
                    long double untested, int nf, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi,
                    CellCounts& out) {
  const std::vector<long double>& unfair_first = hc.unfair_first;
  const std::vector<long double>& unfair_second = hc.unfair_second;
  const std::size_t unfair_first_entry = hc.unfair_first_entry, unfair_second_entry = hc.unfair_second_entry;
  out.unfair_by_cell.resize(static_cast<std::size_t>(nf));
  out.cell_ends.resize(static_cast<std::size_t>(nf));
  out.unfair_point = lo;
  for (const Half* h : {&first, &second}) {
    const std::vector<long double>& u = h == &first ? unfair_first : unfair_second;
    const std::size_t entry = h == &first ? unfair_first_entry : unfair_second_entry;
    std::size_t stride = 1;
    for (std::size_t gi : h->groups) {
      const Group& g = groups[gi];
      const auto n = static_cast<std::size_t>(g.cells);
      std::vector<long double> per_cell(n, 0.0L);
      for (std::size_t e = 0; e < u.size(); ++e) per_cell[(e / stride) % n] += u[e];
      const std::size_t cell = (entry / stride) % n;
      stride *= n;
      std::size_t inner = 1;  // the group's cells: its first feature's cell varies fastest
      for (std::size_t k = 0; k < g.features.size(); ++k) {
        const std::size_t m = g.starts[k].size();
        const auto f = static_cast<std::size_t>(g.features[k]);
        out.unfair_point(g.features[k]) = g.starts[k][(cell / inner) % m];
        out.unfair_by_cell[f].assign(m, 0.0L);
        for (std::size_t c = 0; c < n; ++c) out.unfair_by_cell[f][(c / inner) % m] += per_cell[c] * untested;
        inner *= m;
        for (std::size_t j = 0; j < m; ++j)
          out.cell_ends[f].push_back(j + 1 < m ? g.starts[k][j + 1] - 1.0 : hi(static_cast<Eigen::Index>(f)));
      }
    }
  }
}

}  // namespace

TreeCellCount::TreeCellCount(const RawTrees& trees, const Schema& schema) : trees_(trees), schema_(schema) {
  if (!trees.single_score()) return;
  largest_ = trees.largest_sum();
  const double m = largest_ + 1.0;
  low_label_ = trees.label_of_sums(-m, -m);
  high_label_ = trees.label_of_sums(m, m);
  if (low_label_ < 0 || high_label_ < 0 || low_label_ == high_label_) {
    low_label_ = high_label_ = -1;
    return;
  }
  // The largest `low_` with every sum in [-m, low_] labelled low (range arithmetic: sound), and
  // the smallest `high_` likewise above.
  auto bisect = [&](auto holds) {
    double a = -m, b = m;  // holds(b), not holds(a)
    for (int i = 0; i < 200; ++i) {
      const double mid = a / 2.0 + b / 2.0;
      if (!(mid > a && mid < b)) break;
      (holds(mid) ? b : a) = mid;
    }
    return b;
  };
  low_ = -bisect([&](double s) { return trees.label_of_sums(-m, -s) == low_label_; });
  high_ = bisect([&](double s) { return trees.label_of_sums(s, m) == high_label_; });
  if (!(low_ < high_)) low_label_ = high_label_ = -1;
}

std::optional<CellCounts> TreeCellCount::count(const std::vector<Eigen::VectorXd>& lo,
                                               const std::vector<Eigen::VectorXd>& hi) const {
  if (low_label_ < 0 || lo.empty()) return std::nullopt;
  const int nf = schema_.size();
  // Every weight, product and sum below is a whole number under 2^62: exact in long double.
  long double points = 1.0L;
  for (int f = 0; f < nf; ++f) points *= static_cast<long double>(hi[0](f) - lo[0](f) + 1.0);
  if (points > 0x1p62L) return std::nullopt;
  const std::optional<TreeGroups> tg = group_trees(trees_, nf, lo, hi);
  if (!tg) return std::nullopt;
  Half first, second;
  if (!split_into_halves(trees_, *tg, lo, first, second)) return std::nullopt;
  // Every computed sum is within err of the exact sum of its leaf weights (any order of at most
  // trees + 1 additions of terms no larger than largest_ in all).
  const double err = 2.0 * static_cast<double>(trees_.tree_count() + 8) * 0x1p-53 * 1.01 * largest_ + 0x1p-1000;
  const double low = std::nextafter(low_ - err, -INFINITY), high = std::nextafter(high_ + err, INFINITY);
  CellCounts out;
  std::optional<HalfCounts> hc = sweep_halves(first, second, low, high, out);
  if (!hc) return std::nullopt;
  // Features no undecided tree tests multiply every count by their points.
  long double untested = 1.0L;
  for (int f = 0; f < nf; ++f)
    if (!tg->tested[static_cast<std::size_t>(f)]) untested *= static_cast<long double>(hi[0](f) - lo[0](f) + 1.0);
  out.fair *= untested;
  out.unfair *= untested;
  if (hc->total * untested != points)
    throw InternalError(fmt::format("tree cells count {} points in a box of {}",
                                    static_cast<double>(hc->total * untested), static_cast<double>(points)));
  unfair_by_cell(tg->groups, first, second, *hc, untested, nf, lo[0], hi[0], out);
  return out;
}

}  // namespace witness
