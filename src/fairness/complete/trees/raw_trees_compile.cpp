// RawTrees::compile: every split of the ensemble turned into a test of one raw feature, found through
// the model's own preprocessing (probed value by value, or bisected where it is monotone).
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <tuple>

#include "core/error.h"
#include "fairness/complete/trees/raw_trees.h"
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

// The nodes after the ensemble that the decision rule reads, in order (`post`), each of which must
// read only the ensemble and constants; otherwise why not.
std::optional<std::string> decision_after_trees(const Model& model, int ensemble, std::vector<int>& post) {
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
    if ((dep & 2) != 0) return fmt::format("the decision reads {} beside the trees", node_label(n, i));
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
      default: return fmt::format("the decision goes through {} ({})", node_label(n, i), op_name(n.op));
    }
    for (int k : n.inputs)
      if (from_ensemble[static_cast<std::size_t>(k)] == 0 &&
          model.nodes[static_cast<std::size_t>(k)].op != OpKind::Constant)
        return fmt::format("the decision reads {}, which is neither the trees nor a constant",
                           node_label(model.nodes[static_cast<std::size_t>(k)], static_cast<std::size_t>(k)));
    post.push_back(static_cast<int>(i));
  }
  if (from_ensemble[static_cast<std::size_t>(model.rule.node)] != 1) return "the decision does not read the trees";
  return std::nullopt;
}

// Each distinct test (input coordinate, mode, threshold, set) of the trees as one raw split, made
// once: value by value on a small integer domain, else by bisection where the preprocessing is
// monotone (exact, since a monotone function crosses a threshold once).
class SplitCatalog {
 public:
  using Split = RawTrees::Split;

  SplitCatalog(const Model& model, const Schema& schema, int input_node)
      : schema_(schema),
        x_(dependences(model, schema, input_node)[static_cast<std::size_t>(input_node)]),
        probe_(model, schema, input_node) {
    read.assign(static_cast<std::size_t>(schema.size()), false);
  }

  // The split a tree node tests; nothing when its input depends on several features.
  std::optional<int> of(const TreeEnsemble::Node& n) {
    const auto key =
        std::make_tuple(n.feature, static_cast<int>(n.mode), n.threshold, n.members, n.missing_tracks_true);
    if (const auto it = known_.find(key); it != known_.end()) return it->second;
    const int f = x_.feature[static_cast<std::size_t>(n.feature)];
    if (f == kMany) return std::nullopt;
    Split s;
    s.feature = f;
    if (f == -1) {  // no feature reaches this input
      s.constant = true;
      s.below = goes_true(n, probe_.value(0, n.feature, schema_.feature(0).min));
    } else {
      const Feature& feat = schema_.feature(f);
      if (feat.integral() && feat.max - feat.min + 1.0 <= kMaxEnumeratedCodes)
        enumerate(n, f, s);
      else
        bisect(n, f, s);
    }
    if (!s.constant) read[static_cast<std::size_t>(f)] = true;
    const int id = static_cast<int>(splits.size());
    splits.push_back(s);
    known_.emplace(key, id);
    return id;
  }

  std::vector<Split> splits;
  std::vector<std::vector<int>> set_prefix;
  std::vector<double> set_base;
  std::vector<bool> read;

 private:
  // Every code of the feature tested: one run is a constant, two a cut, more a set of codes.
  void enumerate(const TreeEnsemble::Node& n, int f, Split& s) {
    const Feature& feat = schema_.feature(f);
    auto [it, fresh] = enumerated_.try_emplace(n.feature);
    if (fresh) {
      std::vector<double> codes(static_cast<std::size_t>(feat.max - feat.min + 1.0));
      for (std::size_t k = 0; k < codes.size(); ++k) codes[k] = feat.min + static_cast<double>(k);
      it->second = probe_.values(f, n.feature, codes);
    }
    std::vector<bool> t;
    for (double g : it->second) t.push_back(goes_true(n, g));
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
      s.set = static_cast<int>(set_prefix.size());
      std::vector<int> prefix{0};
      for (bool b : t) prefix.push_back(prefix.back() + (b ? 1 : 0));
      set_prefix.push_back(std::move(prefix));
      set_base.push_back(feat.min);
    }
  }

  // A monotone order test: the last value that tests like the feature's minimum, by bisection.
  void bisect(const TreeEnsemble::Node& n, int f, Split& s) {
    const Feature& feat = schema_.feature(f);
    const bool order_test = n.mode == TreeEnsemble::Mode::Leq || n.mode == TreeEnsemble::Mode::Lt ||
                            n.mode == TreeEnsemble::Mode::Geq || n.mode == TreeEnsemble::Mode::Gt;
    if (!x_.monotone[static_cast<std::size_t>(n.feature)] || !order_test)
      throw UnsupportedError(fmt::format(
          "the tree engine: a split on input {} of the trees is not one cut of feature '{}' (an equality, a "
          "set, or a preprocessing that is not monotone), and its {} values are too many to test one by one",
          n.feature, feat.name,
          feat.integral() ? fmt::format("{:.0f}", feat.max - feat.min + 1.0) : std::string("real")));
    const bool first = goes_true(n, probe_.value(f, n.feature, feat.min));
    const bool last = goes_true(n, probe_.value(f, n.feature, feat.max));
    s.below = first;
    if (first == last) {
      s.constant = true;
    } else if (feat.integral()) {
      double lo = feat.min, hi = feat.max;
      while (hi - lo > 1.0) {
        const double mid = std::floor(lo + (hi - lo) / 2.0);
        (goes_true(n, probe_.value(f, n.feature, mid)) == first ? lo : hi) = mid;
      }
      s.cut = lo;
    } else {
      std::uint64_t lo = order_key(feat.min), hi = order_key(feat.max);
      while (hi - lo > 1) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        (goes_true(n, probe_.value(f, n.feature, from_order_key(mid))) == first ? lo : hi) = mid;
      }
      s.cut = from_order_key(lo);
    }
  }

  const Schema& schema_;
  Dependence x_;
  InputProbe probe_;
  std::map<int, std::vector<double>> enumerated_;  // coordinate -> its value at each code of its feature
  std::map<std::tuple<int, int, double, std::vector<double>, bool>, int> known_;
};

}  // namespace

std::optional<RawTrees> RawTrees::compile(const Model& model, const Schema& schema, std::string* why) {
  auto fail = [why](std::string w) -> std::optional<RawTrees> {
    if (why != nullptr) *why = std::move(w);
    return std::nullopt;
  };
  std::string none;
  const int ensemble = single_tree_ensemble(model, none);
  if (ensemble < 0) return fail(none);
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
  if (std::optional<std::string> bad = decision_after_trees(model, ensemble, rt.post_nodes_)) return fail(*bad);
  rt.n_targets_ = te.n_targets;
  rt.scale_ = te.aggregate == TreeEnsemble::Aggregate::Average ? 1.0 / static_cast<double>(te.trees.size()) : 1.0;
  rt.base_ = te.base_values.empty() ? std::vector<double>(static_cast<std::size_t>(te.n_targets), 0.0) : te.base_values;
  rt.binary_pair_ = te.binary_single_score;
  rt.binary_total_ = te.binary_total;

  SplitCatalog catalog(model, schema, en.inputs[0]);
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
        const std::optional<int> s = catalog.of(n);
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
  rt.splits_ = std::move(catalog.splits);
  rt.set_prefix_ = std::move(catalog.set_prefix);
  rt.set_base_ = std::move(catalog.set_base);
  rt.read_ = std::move(catalog.read);
  return rt;
}
}  // namespace witness
