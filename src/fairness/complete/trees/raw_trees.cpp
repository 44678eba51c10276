#include "fairness/complete/trees/raw_trees.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace witness {

namespace {

// The range of a monotone (in double) function's values at the ends of [lo, hi].
struct ValueRange {
  double lo = 0.0, hi = 0.0;
};

}  // namespace

Truth RawTrees::test(const Split& s, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) const {
  if (s.constant) return s.below ? Truth::Always : Truth::Never;
  const double a = lo(s.feature), b = hi(s.feature);
  if (s.set >= 0) {
    const auto& p = set_prefix_[static_cast<std::size_t>(s.set)];
    const double base = set_base_[static_cast<std::size_t>(s.set)];
    const auto i = static_cast<std::size_t>(a - base), j = static_cast<std::size_t>(b - base) + 1;
    const int n = p[j] - p[i];
    return n == 0 ? Truth::Never : n == static_cast<int>(j - i) ? Truth::Always : Truth::Maybe;
  }
  if (b <= s.cut) return s.below ? Truth::Always : Truth::Never;
  if (a > s.cut) return s.below ? Truth::Never : Truth::Always;
  return Truth::Maybe;
}

BoxScores RawTrees::scores(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) const {
  BoxScores out;
  const auto nt = static_cast<std::size_t>(n_targets_);
  std::vector<double> slo(nt, 0.0), shi(nt, 0.0), tlo(nt), thi(nt);
  std::vector<int> stack;
  for (const Tree& tree : trees_) {
    std::fill(tlo.begin(), tlo.end(), INFINITY);
    std::fill(thi.begin(), thi.end(), -INFINITY);
    int first_open = -1;
    stack.assign(1, 0);
    while (!stack.empty()) {
      const TreeNode& n = tree.nodes[static_cast<std::size_t>(stack.back())];
      stack.pop_back();
      if (n.split < 0) {
        for (std::size_t k = 0; k < nt; ++k) {
          const double w = leaf_weights_[static_cast<std::size_t>(n.leaf) + k];
          tlo[k] = std::min(tlo[k], w);
          thi[k] = std::max(thi[k], w);
        }
        continue;
      }
      const Truth t = test(splits_[static_cast<std::size_t>(n.split)], lo, hi);
      if (t != Truth::Never) stack.push_back(n.true_child);
      if (t != Truth::Always) stack.push_back(n.false_child);
      if (t == Truth::Maybe && first_open < 0) first_open = n.split;
    }
    double spread = 0.0;
    for (std::size_t k = 0; k < nt; ++k) {
      slo[k] += tlo[k];
      shi[k] += thi[k];
      spread += thi[k] - tlo[k];
    }
    if (first_open < 0) continue;
    out.leaves_only = false;
    ++out.open_trees;
    if (spread <= out.cut_weight && out.cut_feature >= 0) continue;
    const Split& s = splits_[static_cast<std::size_t>(first_open)];
    out.cut_weight = spread;
    out.cut_feature = s.feature;
    if (s.set < 0) {
      out.cut = s.cut;
      continue;
    }
    // A set test: cut where its truth changes, nearest the middle of the box.
    const auto& p = set_prefix_[static_cast<std::size_t>(s.set)];
    const double base = set_base_[static_cast<std::size_t>(s.set)];
    const double a = lo(s.feature), b = hi(s.feature), mid = std::floor((a + b) / 2.0);
    double best = a, gap = INFINITY;
    for (std::size_t i = static_cast<std::size_t>(a - base); i < static_cast<std::size_t>(b - base); ++i) {
      const double v = base + static_cast<double>(i);
      const bool here = p[i + 1] - p[i] == 1, next = p[i + 2] - p[i + 1] == 1;
      if (here != next && std::abs(v - mid) < gap) gap = std::abs(v - mid), best = v;
    }
    out.cut = best;
  }
  out.lo.resize(nt);
  out.hi.resize(nt);
  for (std::size_t k = 0; k < nt; ++k) {
    out.lo[k] = slo[k] * scale_ + base_[k];
    out.hi[k] = shi[k] * scale_ + base_[k];
  }
  if (binary_pair_) {
    const double l = out.lo[0], h = out.hi[0];
    out.lo = {binary_total_ - h, l};
    out.hi = {binary_total_ - l, h};
  }
  return out;
}

void RawTrees::watch(const std::vector<bool>& features) {
  watched_ = features;
  for (Tree& tree : trees_) {
    tree.watched_below.assign(tree.nodes.size(), 0);
    // Children come after their parents: one backward pass.
    for (std::size_t i = tree.nodes.size(); i-- > 0;) {
      const TreeNode& n = tree.nodes[i];
      if (n.split < 0) continue;
      const Split& s = splits_[static_cast<std::size_t>(n.split)];
      tree.watched_below[i] = static_cast<char>((!s.constant && features[static_cast<std::size_t>(s.feature)]) ||
                                                tree.watched_below[static_cast<std::size_t>(n.true_child)] != 0 ||
                                                tree.watched_below[static_cast<std::size_t>(n.false_child)] != 0);
    }
  }
}

RawTrees::Reach RawTrees::reaches_watched(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) const {
  Reach out;
  int best_depth = 1 << 30;
  std::vector<std::pair<int, int>> stack;  // (node, depth)
  for (const Tree& tree : trees_) {
    if (tree.watched_below.empty() || tree.watched_below[0] == 0) continue;
    stack.assign(1, {0, 0});
    while (!stack.empty()) {
      const auto [id, depth] = stack.back();
      stack.pop_back();
      const TreeNode& n = tree.nodes[static_cast<std::size_t>(id)];
      if (n.split < 0 || tree.watched_below[static_cast<std::size_t>(id)] == 0) continue;
      const Split& s = splits_[static_cast<std::size_t>(n.split)];
      const Truth t = test(s, lo, hi);
      if (t == Truth::Maybe && watched_[static_cast<std::size_t>(s.feature)]) {
        out.reads = true;
        continue;
      }
      if (t == Truth::Maybe && depth < best_depth) {
        best_depth = depth;
        out.cut_feature = s.feature;
        out.cut = s.set < 0 ? s.cut : std::floor((lo(s.feature) + hi(s.feature)) / 2.0);
      }
      if (t != Truth::Never) stack.emplace_back(n.true_child, depth + 1);
      if (t != Truth::Always) stack.emplace_back(n.false_child, depth + 1);
    }
  }
  if (!out.reads) out.cut_feature = -1;
  return out;
}

std::vector<char> RawTrees::fingerprint(const Eigen::VectorXd& point, const std::vector<bool>& features) const {
  std::vector<char> out;
  for (const Split& s : splits_)
    if (!s.constant && features[static_cast<std::size_t>(s.feature)])
      out.push_back(static_cast<char>(test(s, point, point)));
  return out;
}

int RawTrees::label(const BoxScores& s) const {
  const Model& m = *model_;
  auto margin = [](double a, double b) { return 1e-9 * (1.0 + std::abs(a) + std::abs(b)); };
  if (post_nodes_.empty() && m.rule.kind == DecisionRule::Kind::Threshold) {  // the common case, without maps
    const auto k = static_cast<std::size_t>(m.rule.index);
    const double t = m.rule.threshold;
    if (s.lo[k] > t + margin(s.lo[k], t)) return 1;
    if (s.hi[k] < t - margin(s.hi[k], t)) return 0;
    return -1;
  }
  // ValueRange arithmetic from the ensemble's outputs to the rule's node; decided only with a margin
  // well above double rounding (exact labels come from evaluating a point once every tree is decided).
  std::map<int, std::vector<ValueRange>> v;
  {
    std::vector<ValueRange>& e = v[ensemble_node_];
    for (std::size_t k = 0; k < s.lo.size(); ++k) e.push_back({s.lo[k], s.hi[k]});
  }
  auto value = [&](int id) -> const std::vector<ValueRange>& {
    auto it = v.find(id);
    if (it != v.end()) return it->second;
    const Node& n = m.nodes[static_cast<std::size_t>(id)];
    std::vector<ValueRange> c;  // a constant (checked when compiled)
    for (Eigen::Index k = 0; k < n.values.size(); ++k) c.push_back({n.values(k), n.values(k)});
    return v[id] = c;
  };
  for (int id : post_nodes_) {
    const Node& n = m.nodes[static_cast<std::size_t>(id)];
    std::vector<ValueRange> out(static_cast<std::size_t>(n.width));
    const std::vector<ValueRange>& a = value(n.inputs[0]);
    auto monotone = [&](auto f) {
      for (std::size_t k = 0; k < out.size(); ++k) out[k] = {f(a[k].lo), f(a[k].hi)};
    };
    switch (n.op) {
      case OpKind::Identity: out = a; break;
      case OpKind::Select:
        for (std::size_t k = 0; k < out.size(); ++k) out[k] = a[static_cast<std::size_t>(n.indices[k])];
        break;
      case OpKind::Concat: {
        out.clear();
        for (int in : n.inputs) {
          const auto& part = value(in);
          out.insert(out.end(), part.begin(), part.end());
        }
        break;
      }
      case OpKind::Sigmoid: monotone([](double z) { return 1.0 / (1.0 + std::exp(-z)); }); break;
      case OpKind::Tanh: monotone([](double z) { return std::tanh(z); }); break;
      case OpKind::Relu: monotone([](double z) { return std::max(z, 0.0); }); break;
      case OpKind::Softmax: {
        double top = -INFINITY;
        for (const auto& i : a) top = std::max(top, i.hi);
        for (std::size_t k = 0; k < out.size(); ++k) {
          double rest_lo = 0.0, rest_hi = 0.0;
          for (std::size_t j = 0; j < a.size(); ++j)
            if (j != k) rest_lo += std::exp(a[j].lo - top), rest_hi += std::exp(a[j].hi - top);
          const double elo = std::exp(a[k].lo - top), ehi = std::exp(a[k].hi - top);
          out[k] = {elo / (elo + rest_hi), ehi / (ehi + rest_lo)};
        }
        break;
      }
      case OpKind::Dense:
        for (std::size_t r = 0; r < out.size(); ++r) {
          ValueRange acc{n.values(static_cast<Eigen::Index>(r)), n.values(static_cast<Eigen::Index>(r))};
          for (std::size_t c = 0; c < a.size(); ++c) {
            const double wt = n.weights(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c));
            acc.lo += wt >= 0.0 ? wt * a[c].lo : wt * a[c].hi;
            acc.hi += wt >= 0.0 ? wt * a[c].hi : wt * a[c].lo;
          }
          out[r] = acc;
        }
        break;
      default: {  // Add, Sub, Mul, Div with width-1 broadcasting
        const std::vector<ValueRange>& b = value(n.inputs[1]);
        for (std::size_t k = 0; k < out.size(); ++k) {
          const ValueRange x = a[a.size() == 1 ? 0 : k], y = b[b.size() == 1 ? 0 : k];
          if (n.op == OpKind::Add) {
            out[k] = {x.lo + y.lo, x.hi + y.hi};
          } else if (n.op == OpKind::Sub) {
            out[k] = {x.lo - y.hi, x.hi - y.lo};
          } else {
            if (n.op == OpKind::Div && y.lo <= 0.0 && y.hi >= 0.0) return -1;
            const double c[4] = {
                n.op == OpKind::Mul ? x.lo * y.lo : x.lo / y.lo, n.op == OpKind::Mul ? x.lo * y.hi : x.lo / y.hi,
                n.op == OpKind::Mul ? x.hi * y.lo : x.hi / y.lo, n.op == OpKind::Mul ? x.hi * y.hi : x.hi / y.hi};
            out[k] = {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
          }
        }
        break;
      }
    }
    v[id] = std::move(out);
  }
  const std::vector<ValueRange>& r = value(m.rule.node);
  for (const auto& i : r)
    if (std::isnan(i.lo) || std::isnan(i.hi)) return -1;
  if (m.rule.kind == DecisionRule::Kind::Threshold) {
    const ValueRange& i = r[static_cast<std::size_t>(m.rule.index)];
    const double t = m.rule.threshold;
    if (i.lo > t + margin(i.lo, t)) return 1;
    if (i.hi < t - margin(i.hi, t)) return 0;
    return -1;
  }
  for (std::size_t k = 0; k < r.size(); ++k) {
    bool wins = true;
    for (std::size_t j = 0; j < r.size() && wins; ++j) wins = j == k || r[k].lo > r[j].hi + margin(r[k].lo, r[j].hi);
    if (wins) return static_cast<int>(k);
  }
  return -1;
}

}  // namespace witness
