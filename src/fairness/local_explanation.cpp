#include "fairness/local_explanation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/error.h"

namespace witness {

LocalExplainer::LocalExplainer(const Schema& schema, const Eigen::MatrixXd& data, int samples)
    : schema_(schema), samples_(samples) {
  if (data.rows() != schema.size() || data.cols() == 0)
    throw InputError(schema.source(), "", "local explanation needs data rows with one value per feature");
  columns_.resize(static_cast<std::size_t>(schema.size()));
  for (int f = 0; f < schema.size(); ++f) {
    Column& c = columns_[static_cast<std::size_t>(f)];
    c.sorted.assign(data.row(f).begin(), data.row(f).end());
    std::sort(c.sorted.begin(), c.sorted.end());
    std::vector<double> distinct = c.sorted;
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    const FeatureKind kind = schema.feature(f).kind;
    if (kind == FeatureKind::Categorical || kind == FeatureKind::Boolean || distinct.size() <= 4) {
      c.edges.assign(distinct.begin(), distinct.end() - 1);  // one bin per value
      continue;
    }
    // Quartiles with linear interpolation (numpy's default percentile, which LIME uses).
    for (const double q : {0.25, 0.5, 0.75}) {
      const double pos = q * static_cast<double>(c.sorted.size() - 1);
      const auto lo = static_cast<std::size_t>(std::floor(pos));
      const std::size_t hi = std::min(lo + 1, c.sorted.size() - 1);
      const double edge = c.sorted[lo] + (pos - static_cast<double>(lo)) * (c.sorted[hi] - c.sorted[lo]);
      if (c.edges.empty() || edge > c.edges.back()) c.edges.push_back(edge);
    }
  }
}

std::size_t LocalExplainer::bin_of(int feature, double v) const {
  const std::vector<double>& e = columns_[static_cast<std::size_t>(feature)].edges;
  return static_cast<std::size_t>(std::lower_bound(e.begin(), e.end(), v) - e.begin());
}

double LocalExplainer::draw(int feature, std::mt19937_64& rng) const {
  // A bin with the data's frequency, then a data value inside it: a uniformly drawn data value.
  const std::vector<double>& s = columns_[static_cast<std::size_t>(feature)].sorted;
  // Multiply-shift (Lemire) on 32 random bits instead of uniform_int_distribution: this is the
  // explanation's hot loop, and the bias is below rows / 2^32.
  const std::uint64_t r = (rng() >> 32U) * static_cast<std::uint64_t>(s.size());
  return s[static_cast<std::size_t>(r >> 32U)];
}

Eigen::MatrixXd LocalExplainer::perturb(const Eigen::VectorXd& x, std::mt19937_64& rng) const {
  Eigen::MatrixXd out(x.size(), samples_);
  out.col(0) = x;
  for (Eigen::Index j = 1; j < samples_; ++j)
    for (int f = 0; f < schema_.size(); ++f) out(f, j) = draw(f, rng);
  return out;
}

namespace {

double gini(const std::vector<double>& w, double total) {
  if (total <= 0) return 0;
  double g = 1;
  for (double c : w) g -= (c / total) * (c / total);
  return g;
}

}  // namespace

std::vector<PathPredicate> LocalExplainer::explain(const Eigen::MatrixXd& samples, const std::vector<int>& labels,
                                                   int depth) const {
  const Eigen::Index n = samples.cols();
  if (static_cast<Eigen::Index>(labels.size()) != n || n == 0)
    throw InternalError("local explanation: labels and samples differ in number");
  const int classes = std::max(2, *std::max_element(labels.begin(), labels.end()) + 1);
  const int features = schema_.size();
  // LIME's kernel: distance = sqrt(number of features in another bin than x's), width 0.75 sqrt(F).
  std::vector<std::size_t> x_bin(static_cast<std::size_t>(features));
  for (int f = 0; f < features; ++f) x_bin[static_cast<std::size_t>(f)] = bin_of(f, samples(f, 0));
  const double width2 = 0.5625 * features;
  std::vector<double> weight(static_cast<std::size_t>(n));
  for (Eigen::Index j = 0; j < n; ++j) {
    int differ = 0;
    for (int f = 0; f < features; ++f) differ += bin_of(f, samples(f, j)) != x_bin[static_cast<std::size_t>(f)];
    weight[static_cast<std::size_t>(j)] = std::sqrt(std::exp(-differ / width2));
  }

  // Each feature's sample order, sorted once; a level walks it and skips samples outside the node.
  std::vector<std::vector<Eigen::Index>> sorted(static_cast<std::size_t>(features));
  std::vector<std::pair<double, Eigen::Index>> by_value(static_cast<std::size_t>(n));
  for (int f = 0; f < features; ++f) {
    for (Eigen::Index j = 0; j < n; ++j) by_value[static_cast<std::size_t>(j)] = {samples(f, j), j};
    std::sort(by_value.begin(), by_value.end());
    std::vector<Eigen::Index>& idx = sorted[static_cast<std::size_t>(f)];
    idx.resize(static_cast<std::size_t>(n));
    for (Eigen::Index j = 0; j < n; ++j)
      idx[static_cast<std::size_t>(j)] = by_value[static_cast<std::size_t>(j)].second;
  }
  std::vector<char> in_node(static_cast<std::size_t>(n), 1);
  std::size_t node_size = static_cast<std::size_t>(n);
  const auto own = static_cast<std::size_t>(labels[0]);
  std::vector<PathPredicate> path;
  std::vector<double> total(static_cast<std::size_t>(classes)), left(static_cast<std::size_t>(classes)),
      right(static_cast<std::size_t>(classes));
  for (int level = 0; level < depth && node_size > 1; ++level) {
    std::fill(total.begin(), total.end(), 0.0);
    double w_total = 0;
    for (Eigen::Index j = 0; j < n; ++j) {
      if (in_node[static_cast<std::size_t>(j)] == 0) continue;
      total[static_cast<std::size_t>(labels[static_cast<std::size_t>(j)])] += weight[static_cast<std::size_t>(j)];
      w_total += weight[static_cast<std::size_t>(j)];
    }
    const double parent = w_total * gini(total, w_total);
    if (parent <= 1e-12 * w_total) break;  // pure
    double best = parent - 1e-12 * w_total;
    int best_feature = -1;
    double best_threshold = 0;
    for (int f = 0; f < features; ++f) {
      std::fill(left.begin(), left.end(), 0.0);
      right = total;
      double w_left = 0;
      Eigen::Index prev = -1;
      for (Eigen::Index j : sorted[static_cast<std::size_t>(f)]) {
        if (in_node[static_cast<std::size_t>(j)] == 0) continue;
        if (prev >= 0 && samples(f, prev) != samples(f, j)) {
          const double w_right = w_total - w_left;
          const double impurity = w_left * gini(left, w_left) + w_right * gini(right, w_right);
          if (impurity < best) {
            best = impurity;
            best_feature = f;
            best_threshold = samples(f, prev) + (samples(f, j) - samples(f, prev)) / 2;
            // The midpoint of two adjacent doubles can round up to the larger one.
            if (best_threshold >= samples(f, j)) best_threshold = samples(f, prev);
          }
        }
        const auto c = static_cast<std::size_t>(labels[static_cast<std::size_t>(j)]);
        left[c] += weight[static_cast<std::size_t>(j)];
        right[c] -= weight[static_cast<std::size_t>(j)];
        w_left += weight[static_cast<std::size_t>(j)];
        prev = j;
      }
    }
    if (best_feature < 0) break;
    PathPredicate p;
    p.feature = best_feature;
    p.threshold = best_threshold;
    p.greater = samples(best_feature, 0) > best_threshold;
    // Confidence: how much the predicate matters for x's label, the difference between the
    // share of x's label on x's side of the split and on the other side.
    double w_side = 0, own_side = 0, w_other = 0, own_other = 0;
    node_size = 0;
    for (Eigen::Index j = 0; j < n; ++j) {
      if (in_node[static_cast<std::size_t>(j)] == 0) continue;
      const double w = weight[static_cast<std::size_t>(j)];
      const double mine = static_cast<std::size_t>(labels[static_cast<std::size_t>(j)]) == own ? w : 0.0;
      if ((samples(best_feature, j) > best_threshold) == p.greater) {
        w_side += w;
        own_side += mine;
        ++node_size;
      } else {
        w_other += w;
        own_other += mine;
        in_node[static_cast<std::size_t>(j)] = 0;
      }
    }
    p.confidence = std::clamp(own_side / w_side - own_other / w_other, 0.0, 1.0);
    path.push_back(p);
  }
  return path;
}

std::optional<Eigen::VectorXd> solve_path(const Schema& schema, const std::vector<PathPredicate>& path,
                                          const Eigen::VectorXd& near, std::mt19937_64* rng) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::map<int, std::pair<double, double>> box;  // feature -> (exclusive low, inclusive high)
  for (const PathPredicate& p : path) {
    auto [it, added] = box.try_emplace(p.feature, -inf, inf);
    if (p.greater) {
      it->second.first = std::max(it->second.first, p.threshold);
    } else {
      it->second.second = std::min(it->second.second, p.threshold);
    }
  }
  Eigen::VectorXd x = near;
  for (const auto& [f, range] : box) {
    const Feature& feat = schema.feature(f);
    double a = 0;
    double b = 0;
    if (feat.integral()) {
      a = range.first == -inf ? feat.min : std::max(feat.min, std::floor(range.first) + 1);
      b = range.second == inf ? feat.max : std::min(feat.max, std::floor(range.second));
    } else {
      a = range.first == -inf ? feat.min : std::max(feat.min, std::nextafter(range.first, inf));
      b = range.second == inf ? feat.max : std::min(feat.max, range.second);
    }
    if (a > b) return std::nullopt;
    double& v = x(f);
    if (rng != nullptr) {
      if (feat.integral()) {
        v = a + static_cast<double>(std::uniform_int_distribution<long long>(0, static_cast<long long>(b - a))(*rng));
      } else {
        v = std::uniform_real_distribution<double>(a, b)(*rng);
        v = std::clamp(v, a, b);
      }
    } else {
      v = std::clamp(feat.integral() ? std::round(v) : v, a, b);
    }
  }
  return x;
}

}  // namespace witness
