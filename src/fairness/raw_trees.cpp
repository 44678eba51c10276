#include "fairness/raw_trees.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <tuple>

#include "core/error.h"
#include "model/evaluator.h"

namespace witness {

namespace {

constexpr double kMaxEnumeratedCodes = 4096;  // integer features tested value by value
constexpr int kMany = -2;                     // a value that depends on several features

// Which single raw feature each value of a node depends on (-1 none, kMany several), and whether
// it is a monotone function of it (then one cut splits it exactly; else it needs a small domain).
struct Dependence {
  std::vector<int> feature;
  std::vector<bool> monotone;
};

int merge(int a, int b) {
  if (a == -1) return b;
  if (b == -1 || a == b) return a;
  return kMany;
}

std::vector<Dependence> dependences(const Model& m, const Schema& schema, int upto) {
  std::vector<Dependence> d(static_cast<std::size_t>(upto) + 1);
  std::vector<int> input_feature(static_cast<std::size_t>(m.input_width()), -1);
  std::vector<bool> input_monotone(static_cast<std::size_t>(m.input_width()), true);
  for (int f = 0; f < schema.size(); ++f) {
    const Feature& feat = schema.feature(f);
    for (int k = 0; k < feat.model_width; ++k) {
      const std::size_t at = static_cast<std::size_t>(feat.model_offset) + static_cast<std::size_t>(k);
      input_feature[at] = f;
      input_monotone[at] = !feat.one_hot;
    }
  }
  for (int id = 0; id <= upto; ++id) {
    const Node& n = m.nodes[static_cast<std::size_t>(id)];
    Dependence& out = d[static_cast<std::size_t>(id)];
    const auto w = static_cast<std::size_t>(n.width);
    out.feature.assign(w, -1);
    out.monotone.assign(w, true);
    auto in = [&](std::size_t k) -> const Dependence& { return d[static_cast<std::size_t>(n.inputs[k])]; };
    switch (n.op) {
      case OpKind::Input:
        out.feature = input_feature;
        out.monotone = input_monotone;
        break;
      case OpKind::Constant: break;
      case OpKind::Dense:
        for (std::size_t r = 0; r < w; ++r) {
          int f = -1, terms = 0;
          bool mono = true;
          for (Eigen::Index c = 0; c < n.weights.cols(); ++c) {
            if (n.weights(static_cast<Eigen::Index>(r), c) == 0.0) continue;
            const auto cu = static_cast<std::size_t>(c);
            f = merge(f, in(0).feature[cu]);
            if (in(0).feature[cu] != -1) ++terms, mono = mono && in(0).monotone[cu];
          }
          out.feature[r] = f;
          out.monotone[r] = mono && terms <= 1;
        }
        break;
      case OpKind::Add:
      case OpKind::Sub:
      case OpKind::Mul:
      case OpKind::Div:
        for (std::size_t r = 0; r < w; ++r) {
          const std::size_t a = in(0).feature.size() == 1 ? 0 : r, b = in(1).feature.size() == 1 ? 0 : r;
          const int fa = in(0).feature[a], fb = in(1).feature[b];
          out.feature[r] = merge(fa, fb);
          // One side constant: an affine map of the other (a constant divided by x is monotone too
          // on each side of 0, but not across it).
          out.monotone[r] =
              (fa == -1 || fb == -1) && in(0).monotone[a] && in(1).monotone[b] && !(n.op == OpKind::Div && fb != -1);
        }
        break;
      case OpKind::Relu:
      case OpKind::Sigmoid:
      case OpKind::Tanh:
      case OpKind::Identity: out = in(0); break;
      case OpKind::LeakyRelu:
        out = in(0);
        if (n.alpha < 0.0) std::fill(out.monotone.begin(), out.monotone.end(), false);
        break;
      case OpKind::Select:
        for (std::size_t r = 0; r < w; ++r) {
          const auto k = static_cast<std::size_t>(n.indices[r]);
          out.feature[r] = in(0).feature[k];
          out.monotone[r] = in(0).monotone[k];
        }
        break;
      case OpKind::Concat: {
        std::size_t r = 0;
        for (std::size_t k = 0; k < n.inputs.size(); ++k)
          for (std::size_t j = 0; j < in(k).feature.size(); ++j, ++r) {
            out.feature[r] = in(k).feature[j];
            out.monotone[r] = in(k).monotone[j];
          }
        break;
      }
      default:  // lookups, comparisons, Where, Softmax, ArgMax, nested trees: a function of all inputs
        for (std::size_t r = 0; r < w; ++r) {
          int f = -1;
          for (std::size_t k = 0; k < n.inputs.size(); ++k)
            for (int v : in(k).feature) f = merge(f, v);
          out.feature[r] = f;
          out.monotone[r] = false;
        }
        break;
    }
  }
  return d;
}

// Doubles in order as unsigned integers (bisection over every double between two values).
std::uint64_t order_key(double v) {
  const auto u = std::bit_cast<std::uint64_t>(v == 0.0 ? 0.0 : v);
  return (u >> 63) != 0 ? ~u : u | (std::uint64_t{1} << 63);
}
double from_order_key(std::uint64_t k) {
  return std::bit_cast<double>((k >> 63) != 0 ? k & ~(std::uint64_t{1} << 63) : ~k);
}

bool goes_true(const TreeEnsemble::Node& n, double v) {
  if (std::isnan(v)) return n.missing_tracks_true;
  switch (n.mode) {
    case TreeEnsemble::Mode::Leq: return v <= n.threshold;
    case TreeEnsemble::Mode::Lt: return v < n.threshold;
    case TreeEnsemble::Mode::Geq: return v >= n.threshold;
    case TreeEnsemble::Mode::Gt: return v > n.threshold;
    case TreeEnsemble::Mode::Eq: return v == n.threshold;
    case TreeEnsemble::Mode::Neq: return v != n.threshold;
    case TreeEnsemble::Mode::Member: return std::binary_search(n.members.begin(), n.members.end(), v);
    case TreeEnsemble::Mode::Leaf: break;
  }
  return false;
}

// The values of the ensemble's input coordinates as functions of one raw feature each.
class InputProbe {
 public:
  InputProbe(const Model& m, const Schema& schema, int node) : schema_(schema), node_(node), ev_(m, {node}) {
    base_.resize(schema.size());
    for (int f = 0; f < schema.size(); ++f) base_(f) = schema.feature(f).min;
  }
  // Coordinate j of the ensemble's input for raw values `values` of feature f (others at their minimum).
  std::vector<double> values(int f, int j, const std::vector<double>& raw_values) {
    Eigen::MatrixXd raw = base_.replicate(1, static_cast<Eigen::Index>(raw_values.size()));
    for (std::size_t k = 0; k < raw_values.size(); ++k) raw(f, static_cast<Eigen::Index>(k)) = raw_values[k];
    ev_.compute(schema_.to_model_columns(raw));
    const auto& v = ev_.node_values(node_);
    std::vector<double> out(static_cast<std::size_t>(v.cols()));
    for (Eigen::Index k = 0; k < v.cols(); ++k) out[static_cast<std::size_t>(k)] = v(j, k);
    return out;
  }
  double value(int f, int j, double raw_value) { return values(f, j, {raw_value})[0]; }

 private:
  const Schema& schema_;
  int node_;
  Evaluator<double> ev_;
  Eigen::VectorXd base_;
};

// The range of a monotone (in double) function's values at the ends of [lo, hi].
struct ValueRange {
  double lo = 0.0, hi = 0.0;
};

}  // namespace

std::optional<RawTrees> RawTrees::compile(const Model& model, const Schema& schema, std::string* why) {
  auto fail = [why](std::string w) -> std::optional<RawTrees> {
    if (why != nullptr) *why = std::move(w);
    return std::nullopt;
  };
  int ensemble = -1;
  for (std::size_t i = 0; i < model.nodes.size(); ++i) {
    if (model.nodes[i].op != OpKind::TreeEnsemble) continue;
    if (ensemble >= 0) return fail("the model has more than one tree ensemble");
    ensemble = static_cast<int>(i);
  }
  if (ensemble < 0) return fail("the model has no tree ensemble");
  if (schema.model_width() != model.input_width())
    return fail(fmt::format("the schema describes {} model inputs, the model reads {}", schema.model_width(),
                            model.input_width()));
  const Node& en = model.nodes[static_cast<std::size_t>(ensemble)];
  const TreeEnsemble& te = *en.trees;
  if (te.aggregate == TreeEnsemble::Aggregate::Min || te.aggregate == TreeEnsemble::Aggregate::Max)
    return fail("the trees are aggregated by min or max");
  if (model.rule.kind == DecisionRule::Kind::Direct) return fail("the model outputs its label directly");

  RawTrees rt;
  rt.model_ = &model;
  rt.ensemble_node_ = ensemble;
  // The nodes after the ensemble that the rule reads must read only the ensemble and constants.
  {
    std::vector<int> from_ensemble(model.nodes.size(), 0);  // 1: depends on the ensemble; 2: on the input otherwise
    std::vector<bool> needed(model.nodes.size(), false);
    needed[static_cast<std::size_t>(model.rule.node)] = true;
    for (std::size_t i = model.nodes.size(); i-- > 0;)
      if (needed[i])
        for (int k : model.nodes[i].inputs) needed[static_cast<std::size_t>(k)] = true;
    for (std::size_t i = 0; i < model.nodes.size(); ++i) {
      const Node& n = model.nodes[i];
      if (static_cast<int>(i) == ensemble) {
        from_ensemble[i] = 1;
        continue;
      }
      int dep = n.op == OpKind::Input ? 2 : 0;
      for (int k : n.inputs) dep |= from_ensemble[static_cast<std::size_t>(k)];
      from_ensemble[i] = dep;
      if (!needed[i] || static_cast<int>(i) < ensemble || dep == 0) continue;
      if ((dep & 2) != 0) return fail(fmt::format("the decision reads {} beside the trees", node_label(n, i)));
      switch (n.op) {
        case OpKind::Identity:
        case OpKind::Select:
        case OpKind::Concat:
        case OpKind::Sigmoid:
        case OpKind::Tanh:
        case OpKind::Relu:
        case OpKind::Softmax:
        case OpKind::Add:
        case OpKind::Sub:
        case OpKind::Mul:
        case OpKind::Div:
        case OpKind::Dense: break;
        default: return fail(fmt::format("the decision goes through {} ({})", node_label(n, i), op_name(n.op)));
      }
      for (int k : n.inputs)
        if (from_ensemble[static_cast<std::size_t>(k)] == 0 &&
            model.nodes[static_cast<std::size_t>(k)].op != OpKind::Constant)
          return fail(fmt::format("the decision reads {}, which is neither the trees nor a constant",
                                  node_label(model.nodes[static_cast<std::size_t>(k)], static_cast<std::size_t>(k))));
      rt.post_nodes_.push_back(static_cast<int>(i));
    }
    if (from_ensemble[static_cast<std::size_t>(model.rule.node)] != 1)
      return fail("the decision does not read the trees");
  }
  rt.n_targets_ = te.n_targets;
  rt.scale_ = te.aggregate == TreeEnsemble::Aggregate::Average ? 1.0 / static_cast<double>(te.trees.size()) : 1.0;
  rt.base_ = te.base_values.empty() ? std::vector<double>(static_cast<std::size_t>(te.n_targets), 0.0) : te.base_values;
  rt.binary_pair_ = te.binary_single_score;
  rt.binary_total_ = te.binary_total;
  rt.read_.assign(static_cast<std::size_t>(schema.size()), false);

  // Each distinct test (input coordinate, mode, threshold, set) becomes one raw split.
  const int input_node = en.inputs[0];
  const std::vector<Dependence> dep = dependences(model, schema, input_node);
  const Dependence& x = dep[static_cast<std::size_t>(input_node)];
  InputProbe probe(model, schema, input_node);
  std::map<int, std::vector<double>> enumerated;  // coordinate -> its value at each code of its feature
  std::map<std::tuple<int, int, double, std::vector<double>, bool>, int> known;
  auto split_of = [&](const TreeEnsemble::Node& n) -> std::optional<int> {
    const auto key =
        std::make_tuple(n.feature, static_cast<int>(n.mode), n.threshold, n.members, n.missing_tracks_true);
    if (const auto it = known.find(key); it != known.end()) return it->second;
    const int f = x.feature[static_cast<std::size_t>(n.feature)];
    if (f == kMany) return std::nullopt;
    Split s;
    s.feature = f;
    if (f == -1) {  // no feature reaches this input
      s.constant = true;
      s.below = goes_true(n, probe.value(0, n.feature, schema.feature(0).min));
    } else {
      const Feature& feat = schema.feature(f);
      const double count = feat.max - feat.min + 1.0;
      if (feat.integral() && count <= kMaxEnumeratedCodes) {
        auto [it, fresh] = enumerated.try_emplace(n.feature);
        if (fresh) {
          std::vector<double> codes(static_cast<std::size_t>(count));
          for (std::size_t k = 0; k < codes.size(); ++k) codes[k] = feat.min + static_cast<double>(k);
          it->second = probe.values(f, n.feature, codes);
        }
        std::vector<bool> t;
        for (double g : it->second) t.push_back(goes_true(n, g));
        // One run, or two: a constant or a cut; otherwise a set of codes.
        std::size_t runs = 1;
        for (std::size_t k = 1; k < t.size(); ++k) runs += t[k] != t[k - 1] ? 1 : 0;
        if (runs == 1) {
          s.constant = true;
          s.below = t[0];
        } else if (runs == 2) {
          std::size_t k = 1;
          while (t[k] == t[0]) ++k;
          s.cut = feat.min + static_cast<double>(k) - 1.0;
          s.below = t[0];
        } else {
          s.set = static_cast<int>(rt.set_prefix_.size());
          std::vector<int> prefix{0};
          for (bool b : t) prefix.push_back(prefix.back() + (b ? 1 : 0));
          rt.set_prefix_.push_back(std::move(prefix));
          rt.set_base_.push_back(feat.min);
        }
      } else {
        const bool order_test = n.mode == TreeEnsemble::Mode::Leq || n.mode == TreeEnsemble::Mode::Lt ||
                                n.mode == TreeEnsemble::Mode::Geq || n.mode == TreeEnsemble::Mode::Gt;
        if (!x.monotone[static_cast<std::size_t>(n.feature)] || !order_test)
          throw UnsupportedError(fmt::format(
              "the tree engine: a split on input {} of the trees is not one cut of feature '{}' (an equality, a "
              "set, or a preprocessing that is not monotone), and its {} values are too many to test one by one",
              n.feature, feat.name, feat.integral() ? fmt::format("{:.0f}", count) : std::string("real")));
        const bool first = goes_true(n, probe.value(f, n.feature, feat.min));
        const bool last = goes_true(n, probe.value(f, n.feature, feat.max));
        s.below = first;
        if (first == last) {
          s.constant = true;
        } else if (feat.integral()) {  // the last value that tests like the first, by bisection
          double lo = feat.min, hi = feat.max;
          while (hi - lo > 1.0) {
            const double mid = std::floor(lo + (hi - lo) / 2.0);
            (goes_true(n, probe.value(f, n.feature, mid)) == first ? lo : hi) = mid;
          }
          s.cut = lo;
        } else {
          std::uint64_t lo = order_key(feat.min), hi = order_key(feat.max);
          while (hi - lo > 1) {
            const std::uint64_t mid = lo + (hi - lo) / 2;
            (goes_true(n, probe.value(f, n.feature, from_order_key(mid))) == first ? lo : hi) = mid;
          }
          s.cut = from_order_key(lo);
        }
      }
    }
    if (!s.constant) rt.read_[static_cast<std::size_t>(f)] = true;
    const int id = static_cast<int>(rt.splits_.size());
    rt.splits_.push_back(s);
    known.emplace(key, id);
    return id;
  };

  for (std::size_t t = 0; t < te.trees.size(); ++t) {
    const TreeEnsemble::Tree& src = te.trees[t];
    Tree tree;
    double wmin = INFINITY, wmax = -INFINITY;
    for (std::size_t i = 0; i < src.nodes.size(); ++i) {
      const TreeEnsemble::Node& n = src.nodes[i];
      TreeNode out;
      if (n.mode == TreeEnsemble::Mode::Leaf) {
        out.leaf = static_cast<int>(rt.leaf_weights_.size());
        std::vector<double> w(static_cast<std::size_t>(te.n_targets), 0.0);
        for (const auto& l : src.leaves_of(static_cast<int>(i))) w[static_cast<std::size_t>(l.target)] += l.weight;
        for (double v : w) wmin = std::min(wmin, v), wmax = std::max(wmax, v);
        rt.leaf_weights_.insert(rt.leaf_weights_.end(), w.begin(), w.end());
      } else {
        const std::optional<int> s = split_of(n);
        if (!s) return fail(fmt::format("tree {} tests input {}, which depends on several features", t, n.feature));
        out.split = *s;
        out.true_child = n.true_child;
        out.false_child = n.false_child;
      }
      tree.nodes.push_back(out);
    }
    tree.spread = wmax - wmin;
    rt.trees_.push_back(std::move(tree));
  }
  return rt;
}

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
