#include "fairness/tree_cell_count.h"

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

struct Weighted {
  double value;
  long double weight;
};
struct Spread {  // the copies' smallest and largest sum
  double lo, hi;
  long double weight;
};

void merge_equal(std::vector<Weighted>& v) {
  std::sort(v.begin(), v.end(), [](const Weighted& a, const Weighted& b) { return a.value < b.value; });
  std::size_t n = 0;
  for (const Weighted& w : v) {
    if (n > 0 && v[n - 1].value == w.value) {
      v[n - 1].weight += w.weight;
    } else {
      v[n++] = w;
    }
  }
  v.resize(n);
}

void merge_equal(std::vector<Spread>& v) {
  std::sort(v.begin(), v.end(),
            [](const Spread& a, const Spread& b) { return a.lo < b.lo || (a.lo == b.lo && a.hi < b.hi); });
  std::size_t n = 0;
  for (const Spread& s : v) {
    if (n > 0 && v[n - 1].lo == s.lo && v[n - 1].hi == s.hi) {
      v[n - 1].weight += s.weight;
    } else {
      v[n++] = s;
    }
  }
  v.resize(n);
}

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
  std::vector<Eigen::VectorXd> point = lo;
  std::vector<std::size_t> digit(g.features.size(), 0);
  for (std::size_t cell = 0; cell < n; ++cell) {
    long double w = 1.0L;
    for (std::size_t i = 0; i < g.features.size(); ++i) {
      for (Eigen::VectorXd& p : point) p(g.features[i]) = g.starts[i][digit[i]];
      w *= g.weights[i][digit[i]];
    }
    weights[cell] = w;
    for (std::size_t k = 0; k < nc; ++k) {
      double s = 0.0;
      for (std::size_t t : g.trees) s += trees.tree_value(t, point[k]);
      values[cell * nc + k] = s;
    }
    for (std::size_t i = 0; i < digit.size(); ++i) {  // the next cell, first feature fastest
      if (++digit[i] < g.starts[i].size()) break;
      digit[i] = 0;
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
  const std::size_t nc = lo.size();
  const int nf = schema_.size();
  // Every weight, product and sum below is a whole number under 2^62: exact in long double.
  long double points = 1.0L;
  for (int f = 0; f < nf; ++f) points *= static_cast<long double>(hi[0](f) - lo[0](f) + 1.0);
  if (points > 0x1p62L) return std::nullopt;
  // Trees decided in the box add a constant per copy; the others join features into groups.
  std::vector<std::vector<double>> breaks(static_cast<std::size_t>(nf));
  std::vector<double> constant(nc, 0.0);
  std::vector<int> parent(static_cast<std::size_t>(nf));
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<std::pair<std::size_t, int>> active;  // (tree, one feature it tests)
  std::vector<bool> tested(static_cast<std::size_t>(nf), false);
  std::vector<double> leaf(nc);
  for (std::size_t t = 0; t < trees_.tree_count(); ++t) {
    int first = -1;
    for (std::size_t k = 0; k < nc; ++k) {
      const RawTrees::TreeInBox b = trees_.in_box(t, lo[k], hi[k], breaks);
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
  std::map<int, Group> groups;
  for (int f = 0; f < nf; ++f) {
    if (!tested[static_cast<std::size_t>(f)]) continue;
    Group& g = groups[root(parent, f)];
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
  for (const auto& [t, f] : active) groups[root(parent, f)].trees.push_back(t);
  double walks = 0.0;
  for (const auto& [r, g] : groups) {
    if (g.cells > kMaxGroupCells) return std::nullopt;
    walks += g.cells * static_cast<double>(g.trees.size() * nc);
  }
  if (walks > kMaxWalks) return std::nullopt;

  // Groups whose sums differ between copies are multiplied out into one list of per-copy sums
  // (starting from the constants), then kept as each entry's smallest and largest copy; the
  // others are lists of sums, each added to the smaller half that stays within bounds.
  std::vector<double> dep_values = constant;
  std::vector<long double> dep_weights{1.0L};
  std::vector<std::vector<Weighted>> shared;
  std::vector<double> values;
  std::vector<long double> weights;
  for (const auto& [r, g] : groups) {
    sum_cells(trees_, g, lo, values, weights);
    const std::size_t n = weights.size();
    bool differs = false;
    for (std::size_t c = 0; c < n && !differs; ++c)
      for (std::size_t k = 1; k < nc && !differs; ++k) differs = values[c * nc + k] != values[c * nc];
    if (!differs) {
      std::vector<Weighted> list(n);
      for (std::size_t c = 0; c < n; ++c) list[c] = {values[c * nc], weights[c]};
      merge_equal(list);
      shared.push_back(std::move(list));
      continue;
    }
    const std::size_t m = dep_weights.size();
    if (static_cast<double>(m) * static_cast<double>(n) > kMaxHalf) return std::nullopt;
    std::vector<double> v(m * n * nc);
    std::vector<long double> w(m * n);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t c = 0; c < n; ++c) {
        w[i * n + c] = dep_weights[i] * weights[c];
        for (std::size_t k = 0; k < nc; ++k) v[(i * n + c) * nc + k] = dep_values[i * nc + k] + values[c * nc + k];
      }
    dep_values = std::move(v);
    dep_weights = std::move(w);
  }
  std::vector<Spread> first(dep_weights.size());
  for (std::size_t i = 0; i < first.size(); ++i) {
    const auto row = dep_values.begin() + static_cast<std::ptrdiff_t>(i * nc);
    const auto [mn, mx] = std::minmax_element(row, row + static_cast<std::ptrdiff_t>(nc));
    first[i] = {*mn, *mx, dep_weights[i]};
  }
  merge_equal(first);
  std::sort(shared.begin(), shared.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });
  std::vector<Weighted> second{{0.0, 1.0L}};
  for (const std::vector<Weighted>& list : shared) {
    const double ns = static_cast<double>(list.size());
    if (static_cast<double>(second.size()) * ns <= kMaxHalf) {
      std::vector<Weighted> sum;
      sum.reserve(second.size() * list.size());
      for (const Weighted& a : second)
        for (const Weighted& b : list) sum.push_back({a.value + b.value, a.weight * b.weight});
      merge_equal(sum);
      second = std::move(sum);
    } else if (static_cast<double>(first.size()) * ns <= kMaxHalf) {
      std::vector<Spread> sum;
      sum.reserve(first.size() * list.size());
      for (const Spread& a : first)
        for (const Weighted& b : list) sum.push_back({a.lo + b.value, a.hi + b.value, a.weight * b.weight});
      merge_equal(sum);
      first = std::move(sum);
    } else {
      return std::nullopt;
    }
  }

  // The sweep. Every computed sum is within err of the exact sum of its leaf weights (any order
  // of at most trees + 1 additions of terms no larger than largest_ in all).
  const double err = 2.0 * static_cast<double>(trees_.tree_count() + 8) * 0x1p-53 * 1.01 * largest_ + 0x1p-1000;
  const double low = std::nextafter(low_ - err, -INFINITY), high = std::nextafter(high_ + err, INFINITY);
  std::vector<long double> below(second.size() + 1, 0.0L);  // below[i]: weight of second[0 .. i)
  for (std::size_t i = 0; i < second.size(); ++i) below[i + 1] = below[i] + second[i].weight;
  const long double all = below.back();
  auto count_low = [&](double x) {  // entries with x + value surely low: a prefix
    return static_cast<std::size_t>(
        std::partition_point(second.begin(), second.end(), [&](const Weighted& b) { return x + b.value <= low; }) -
        second.begin());
  };
  auto first_high = [&](double x) {  // the first entry with x + value surely high
    return static_cast<std::size_t>(
        std::partition_point(second.begin(), second.end(), [&](const Weighted& b) { return x + b.value < high; }) -
        second.begin());
  };
  // Features no undecided tree tests multiply every count by their points.
  long double untested = 1.0L;
  for (int f = 0; f < nf; ++f)
    if (!tested[static_cast<std::size_t>(f)]) untested *= static_cast<long double>(hi[0](f) - lo[0](f) + 1.0);
  CellCounts out;
  long double total = 0.0L;
  for (const Spread& a : first) {
    const long double all_low = below[count_low(a.hi)], all_high = all - below[first_high(a.lo)];
    const std::size_t mn_low = count_low(a.lo), mx_high = first_high(a.hi);
    const long double split = mn_low > mx_high ? below[mn_low] - below[mx_high] : 0.0L;
    if (all_low + all_high + split != all) return std::nullopt;  // some sum within rounding of the rule's threshold
    out.fair += a.weight * (all_low + all_high);
    out.unfair += a.weight * split;
    total += a.weight * all;
  }
  out.fair *= untested;
  out.unfair *= untested;
  total *= untested;
  if (total != points)
    throw InternalError(fmt::format("tree cells count {} points in a box of {}", static_cast<double>(total),
                                    static_cast<double>(points)));
  return out;
}

}  // namespace witness
