// ONE interpreter of the model IR, generic over a *domain* (the arithmetic): double and float32
// (FloatDomain), exact rationals (solver/exact_domain.h), Z3 reals and IEEE floating point
// (solver/z3_domain.h). Each op's semantics is written once here; the query layer evaluates its
// expressions over the same domains (query/semantics.h).
//
//   const witness::Model model = witness::load_model("examples/soid/diabetes/diabetes_agent.onnx");
//   witness::FloatDomain<double> d;
//   std::vector<double> x(static_cast<std::size_t>(model.input_width()), 0.5);  // one value per input
//   witness::ModelInterpreter<witness::FloatDomain<double>> run(model, d, {.outputs = true});
//   const witness::ModelValues<witness::FloatDomain<double>> v = run.run(x);       // v.label, v.outputs
//
// A domain D provides Num/Bool types and: literal(text), weight(double), integer(k), add, sub,
// mul, div, neg, lt, le, eq, and_, or_, not_, truth, ite, ite_bool, is_nan, round_half_away,
// above_double(v, t) (v > t with t a double, compared as the evaluator does), and side
// conditions: require(Bool) (the value computed is meaningless unless it holds: a division by
// zero over the reals, a lookup outside its table), mark() and take_side(mark) (the conjunction
// of the conditions required since the mark, removed from the list). A domain that cannot
// express an operation (a product of two unknowns in linear terms) throws DomainLimit; the
// interpreter names the node in the UnsupportedError it becomes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "model/model.h"

namespace witness {

// Side conditions of the concrete domains: plain truth values.
struct ConcreteSide {
  std::vector<char> side;
  void require(bool c) { side.push_back(c ? 1 : 0); }
  [[nodiscard]] std::size_t mark() const { return side.size(); }
  bool take_side(std::size_t m) {
    const bool all =
        std::all_of(side.begin() + static_cast<std::ptrdiff_t>(m), side.end(), [](char c) { return c != 0; });
    side.resize(m);
    return all;
  }
  [[nodiscard]] bool defined() const {
    return std::all_of(side.begin(), side.end(), [](char c) { return c != 0; });
  }
};

// Exact rational arithmetic ("real" semantics). A division by zero or a lookup outside its

template <typename F>
struct FloatDomain : ConcreteSide {
  using Num = F;
  using Bool = bool;

  static Num literal(const std::string& text) {
    if constexpr (sizeof(F) == sizeof(float)) {
      return std::strtof(text.c_str(), nullptr);
    } else {
      return std::strtod(text.c_str(), nullptr);
    }
  }
  static Num weight(double w) { return static_cast<F>(w); }
  static Num integer(long k) { return static_cast<F>(k); }
  static Num add(Num a, Num b) { return a + b; }
  static Num sub(Num a, Num b) { return a - b; }
  static Num mul(Num a, Num b) { return a * b; }
  static Num div(Num a, Num b) { return a / b; }
  static Num neg(Num a) { return -a; }
  static Bool lt(Num a, Num b) { return a < b; }
  static Bool le(Num a, Num b) { return a <= b; }
  static Bool eq(Num a, Num b) { return a == b; }
  static Bool and_(Bool a, Bool b) { return a && b; }
  static Bool or_(Bool a, Bool b) { return a || b; }
  static Bool not_(Bool a) { return !a; }
  static Bool truth(bool b) { return b; }
  static Num ite(Bool c, Num a, Num b) { return c ? a : b; }
  static Bool ite_bool(Bool c, Bool a, Bool b) { return c ? a : b; }
  static Bool is_nan(Num a) { return std::isnan(a); }
  static Num round_half_away(Num a) { return std::round(a); }
  static Bool above_double(Num v, double t) { return static_cast<double>(v) > t; }
};

// Thrown by a domain for an operation it cannot express; `why` reads after the node's name
// ("divides by zero", "multiplies two values that depend on the input").
struct DomainLimit {
  std::string why;
};

// Largest class index a Direct rule may produce.
constexpr long kMaxDirectLabel = 1L << 30;

template <typename D>
struct ModelValues {
  std::vector<typename D::Num> outputs;  // empty unless asked for
  typename D::Num label;
};

// Interprets the nodes the decision (and, if asked, the outputs) depend on. Throws
// UnsupportedError naming the node for ops without an exact encoding (sigmoid, tanh, softmax).
template <typename D>
class ModelInterpreter {
 public:
  using Num = typename D::Num;
  using Bool = typename D::Bool;
  using Vec = std::vector<Num>;

  struct Needs {
    bool outputs = false;
    int node = -1;  // >= 0: only this node's values (node_values()), no decision rule, so no run()
    // Called before each node and each row of a dense layer; may throw to stop (a query's time
    // limit: encoding a wide network as solver terms takes longer than solving it).
    std::function<void()> poll = nullptr;
    // Given the values computed so far when the run stops by an exception, before it propagates:
    // freeing solver terms one by one can take seconds, which a caller may hand to another thread.
    std::function<void(std::vector<Vec>&&)> on_stop = nullptr;
  };

  ModelInterpreter(const Model& model, D& d, Needs needs) : m_(model), d_(d), needs_(needs) {
    if (needs.node >= 0) {
      if (static_cast<std::size_t>(needs.node) >= model.nodes.size()) {
        throw InternalError("interpreter: node " + std::to_string(needs.node) + " is outside the model's " +
                            std::to_string(model.nodes.size()) + " nodes");
      }
      mark_needed({needs.node});
      return;
    }
    std::vector<int> targets = {model.rule.node};
    if (needs.outputs) targets.push_back(model.output);
    mark_needed(targets);
  }

  // The value vector of Needs::node.
  Vec node_values(const Vec& x) {
    if (needs_.node < 0) throw InternalError("interpreter: node_values() needs Needs::node");
    std::vector<Vec> v = forward(x);
    return std::move(v[static_cast<std::size_t>(needs_.node)]);
  }

  ModelValues<D> run(const Vec& x) {
    if (needs_.node >= 0) throw InternalError("interpreter: built for one node's values, so it has no decision");
    std::vector<Vec> v = forward(x);
    Num label = decide(v[static_cast<std::size_t>(m_.rule.node)]);
    return {needs_.outputs ? v[static_cast<std::size_t>(m_.output)] : Vec{}, std::move(label)};
  }

 private:
  void mark_needed(const std::vector<int>& targets) {
    needed_.assign(m_.nodes.size(), false);
    for (const int t : targets) needed_[static_cast<std::size_t>(t)] = true;
    for (std::size_t i = m_.nodes.size(); i-- > 0;) {
      if (!needed_[i]) continue;
      for (const int in : m_.nodes[i].inputs) needed_[static_cast<std::size_t>(in)] = true;
    }
    for (std::size_t i = 0; i < m_.nodes.size(); ++i) {
      if (!needed_[i]) continue;
      const Node& n = m_.nodes[i];
      if (n.op == OpKind::Sigmoid || n.op == OpKind::Tanh || n.op == OpKind::Softmax) {
        throw UnsupportedError(m_.source, "",
                               node_name(i) + " is " + op_name(n.op) +
                                   ", which is not piecewise-linear and has no exact encoding, and the queried "
                                   "values depend on it");
      }
    }
  }
  [[nodiscard]] std::size_t x_width() const { return static_cast<std::size_t>(m_.input_width()); }
  [[nodiscard]] std::string node_name(std::size_t i) const { return node_label(m_.nodes[i], i); }

  std::vector<Vec> forward(const Vec& x) {
    if (x.size() != x_width()) {
      throw InternalError("interpreter: the model has " + std::to_string(x_width()) + " inputs, got " +
                          std::to_string(x.size()) + " values");
    }
    std::vector<Vec> v(m_.nodes.size());
    try {
      for (std::size_t i = 0; i < m_.nodes.size(); ++i) {
        if (!needed_[i]) continue;
        if (needs_.poll) needs_.poll();
        try {
          v[i] = node(m_.nodes[i], v, x);
        } catch (const DomainLimit& e) {
          throw UnsupportedError(m_.source, "", node_name(i) + " " + e.why);
        }
      }
    } catch (...) {
      if (needs_.on_stop) needs_.on_stop(std::move(v));
      throw;
    }
    return v;
  }

  Num zero() { return d_.integer(0); }

  Vec node(const Node& n, const std::vector<Vec>& v, const Vec& x) {
    auto in = [&](int k) -> const Vec& { return v[static_cast<std::size_t>(n.inputs[static_cast<std::size_t>(k)])]; };
    auto at = [](const Vec& a, std::size_t r) -> const Num& { return a.size() == 1 ? a[0] : a[r]; };
    const auto width = static_cast<std::size_t>(n.width);
    Vec out;
    out.reserve(width);
    auto elementwise = [&](auto f) {
      for (std::size_t r = 0; r < width; ++r) out.push_back(f(at(in(0), r), at(in(1), r)));
    };
    auto indicator = [&](const Bool& b) { return d_.ite(b, d_.integer(1), zero()); };
    switch (n.op) {
      case OpKind::Input: return x;
      case OpKind::Constant:
        for (Eigen::Index r = 0; r < n.values.size(); ++r) out.push_back(d_.weight(n.values[r]));
        return out;
      case OpKind::Dense:
        // Left to right, then the bias: the order a plain C loop uses.
        for (Eigen::Index r = 0; r < n.weights.rows(); ++r) {
          if (needs_.poll) needs_.poll();
          Num acc = d_.mul(d_.weight(n.weights(r, 0)), in(0)[0]);
          for (Eigen::Index c = 1; c < n.weights.cols(); ++c) {  // moved: terms are not cheap to copy
            // A solver's sum of a wide row grows term by term (Z3 flattens each addition): a row of
            // 1000 takes tenths of a second, so the poll also comes within a row.
            if (needs_.poll) needs_.poll();
            acc = d_.add(std::move(acc), d_.mul(d_.weight(n.weights(r, c)), in(0)[static_cast<std::size_t>(c)]));
          }
          out.push_back(d_.add(std::move(acc), d_.weight(n.values[r])));
        }
        return out;
      case OpKind::Add: elementwise([&](const Num& a, const Num& b) { return d_.add(a, b); }); return out;
      case OpKind::Sub: elementwise([&](const Num& a, const Num& b) { return d_.sub(a, b); }); return out;
      case OpKind::Mul: elementwise([&](const Num& a, const Num& b) { return d_.mul(a, b); }); return out;
      case OpKind::Div: elementwise([&](const Num& a, const Num& b) { return d_.div(a, b); }); return out;
      case OpKind::Less: elementwise([&](const Num& a, const Num& b) { return indicator(d_.lt(a, b)); }); return out;
      case OpKind::LessEqual:
        elementwise([&](const Num& a, const Num& b) { return indicator(d_.le(a, b)); });
        return out;
      case OpKind::Greater: elementwise([&](const Num& a, const Num& b) { return indicator(d_.lt(b, a)); }); return out;
      case OpKind::GreaterEqual:
        elementwise([&](const Num& a, const Num& b) { return indicator(d_.le(b, a)); });
        return out;
      case OpKind::Equal: elementwise([&](const Num& a, const Num& b) { return indicator(d_.eq(a, b)); }); return out;
      case OpKind::Relu:
        // std::max(a, 0), as Eigen's cwiseMax: a NaN passes through, -0 stays -0.
        for (const Num& a : in(0)) out.push_back(d_.ite(d_.lt(a, zero()), zero(), a));
        return out;
      case OpKind::LeakyRelu:
        for (const Num& a : in(0)) out.push_back(d_.ite(d_.lt(zero(), a), a, d_.mul(d_.weight(n.alpha), a)));
        return out;
      case OpKind::Identity: return in(0);
      case OpKind::Where:
        for (std::size_t r = 0; r < width; ++r) {
          out.push_back(d_.ite(d_.not_(d_.eq(at(in(0), r), zero())), at(in(1), r), at(in(2), r)));
        }
        return out;
      case OpKind::Select:
        for (const int i : n.indices) out.push_back(in(0)[static_cast<std::size_t>(i)]);
        return out;
      case OpKind::Concat:
        for (std::size_t k = 0; k < n.inputs.size(); ++k) {
          for (const Num& a : in(static_cast<int>(k))) out.push_back(a);
        }
        return out;
      case OpKind::Lookup: return lookup(n, in(0)[0]);
      case OpKind::ArgMax: return {argmax(in(0))};
      case OpKind::TreeEnsemble: return trees(*n.trees, in(0));
      case OpKind::Sigmoid:
      case OpKind::Tanh:
      case OpKind::Softmax: break;
    }
    throw InternalError("query: node '" + n.name + "' cannot be interpreted");
  }

  // As ONNX's Gather of Cast(v) to int64: row trunc(v) (toward zero), a negative row counting from
  // the end; valid for trunc(v) in [-rows, rows - 1], i.e. -rows - 1 < v < rows, else undefined.
  // The values of v, ascending, fall into pieces: (-k-1, -k] reads row rows - k (k = rows..1),
  // (-1, 1) row 0, [k, k + 1) row k. A balanced search over the pieces keeps the term shallow (a
  // chain of 1024 ites is slow in Z3).
  struct LookupPiece {
    Eigen::Index row;
    long upper;  // the piece ends at v <= upper (negative side) or v < upper
    bool upper_included;
  };
  Vec lookup(const Node& n, const Num& v) {
    const Eigen::Index rows = n.weights.rows();
    d_.require(d_.and_(d_.not_(d_.is_nan(v)), d_.lt(d_.integer(-static_cast<long>(rows) - 1), v)));
    d_.require(d_.lt(v, d_.integer(static_cast<long>(rows))));
    std::vector<LookupPiece> pieces;
    for (Eigen::Index k = rows; k >= 1; --k) pieces.push_back({rows - k, -static_cast<long>(k), true});
    pieces.push_back({0, 1, false});
    for (Eigen::Index k = 1; k < rows; ++k) pieces.push_back({k, static_cast<long>(k) + 1, false});
    Vec out;
    for (Eigen::Index c = 0; c < n.weights.cols(); ++c) {
      out.push_back(pieces_between(n, c, v, pieces, 0, pieces.size()));
    }
    return out;
  }
  Num pieces_between(const Node& n, Eigen::Index c, const Num& v, const std::vector<LookupPiece>& pieces,
                     std::size_t lo, std::size_t hi) {
    if (hi - lo == 1) return d_.weight(n.weights(pieces[lo].row, c));
    const std::size_t mid = lo + (hi - lo) / 2;
    const LookupPiece& left_end = pieces[mid - 1];
    const Num bound = d_.integer(left_end.upper);
    return d_.ite(left_end.upper_included ? d_.le(v, bound) : d_.lt(v, bound), pieces_between(n, c, v, pieces, lo, mid),
                  pieces_between(n, c, v, pieces, mid, hi));
  }

  // First maximum, as Eigen's maxCoeff: a later entry wins only when strictly larger.
  Num argmax(const Vec& v) {
    Num best = zero();
    Num best_value = v[0];
    for (std::size_t i = 1; i < v.size(); ++i) {
      const Bool take = d_.lt(best_value, v[i]);
      best = d_.ite(take, d_.integer(static_cast<long>(i)), best);
      best_value = d_.ite(take, v[i], best_value);
    }
    return best;
  }

  // v < +inf (`up`) or v > -inf, for v not NaN, asked without a number for the infinity (the exact
  // domains have none): a finite v has v - v == 0, and -inf is the only other value below 0.
  Bool inside_infinity(const Num& v, bool up) {
    return d_.or_(d_.eq(d_.sub(v, v), zero()), up ? d_.lt(v, zero()) : d_.lt(zero(), v));
  }
  // A split on an infinite threshold (LightGBM's empty category sets, scikit-learn's "only NaN
  // goes right" at +inf): each mode reduces to a constant or to whether v is that infinity.
  Bool versus_infinity(TreeEnsemble::Mode mode, const Num& v, bool up) {
    using M = TreeEnsemble::Mode;
    Bool inside = inside_infinity(v, up);  // v is not the threshold and lies on its side
    switch (mode) {
      case M::Leq: return up ? d_.truth(true) : d_.not_(inside);
      case M::Lt: return up ? inside : d_.truth(false);
      case M::Geq: return up ? d_.not_(inside) : d_.truth(true);
      case M::Gt: return up ? d_.truth(false) : inside;
      case M::Eq: return d_.not_(inside);
      case M::Neq: return inside;
      default: throw InternalError("interpreter: an infinite threshold on a set or leaf node");
    }
  }

  Bool goes_true(const TreeEnsemble::Node& n, const Num& v) {
    if (std::isinf(n.threshold) && n.mode != TreeEnsemble::Mode::Member) {
      return d_.ite_bool(d_.is_nan(v), d_.truth(n.missing_tracks_true), versus_infinity(n.mode, v, n.threshold > 0));
    }
    const Num t = d_.weight(n.threshold);
    Bool cmp = d_.truth(false);
    switch (n.mode) {
      case TreeEnsemble::Mode::Leq: cmp = d_.le(v, t); break;
      case TreeEnsemble::Mode::Lt: cmp = d_.lt(v, t); break;
      case TreeEnsemble::Mode::Geq: cmp = d_.le(t, v); break;
      case TreeEnsemble::Mode::Gt: cmp = d_.lt(t, v); break;
      case TreeEnsemble::Mode::Eq: cmp = d_.eq(v, t); break;
      case TreeEnsemble::Mode::Neq: cmp = d_.not_(d_.eq(v, t)); break;
      case TreeEnsemble::Mode::Member:
        for (const double m : n.members) cmp = d_.or_(cmp, d_.eq(v, d_.weight(m)));
        break;
      case TreeEnsemble::Mode::Leaf: break;
    }
    return d_.ite_bool(d_.is_nan(v), d_.truth(n.missing_tracks_true), cmp);
  }

  // The evaluator's loop over trees, executed with the reached leaf as a case split.
  Vec trees(const TreeEnsemble& te, const Vec& x) {
    const auto targets = static_cast<std::size_t>(te.n_targets);
    Vec acc(targets, zero());
    std::vector<Bool> seen(targets, d_.truth(false));
    const bool extreme = te.aggregate == TreeEnsemble::Aggregate::Min || te.aggregate == TreeEnsemble::Aggregate::Max;
    for (const auto& tree : te.trees) {
      std::vector<Bool> reach(tree.nodes.size(), d_.truth(false));
      reach[0] = d_.truth(true);
      for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
        const auto& nd = tree.nodes[i];
        if (nd.mode == TreeEnsemble::Mode::Leaf) continue;
        const Bool go = goes_true(nd, x[static_cast<std::size_t>(nd.feature)]);
        const auto t = static_cast<std::size_t>(nd.true_child);
        const auto f = static_cast<std::size_t>(nd.false_child);
        reach[t] = d_.or_(reach[t], d_.and_(reach[i], go));
        reach[f] = d_.or_(reach[f], d_.and_(reach[i], d_.not_(go)));
      }
      for (std::size_t t = 0; t < targets; ++t) {
        Num next = acc[t];
        Bool next_seen = seen[t];
        for (std::size_t leaf = tree.nodes.size(); leaf-- > 0;) {
          if (tree.nodes[leaf].mode != TreeEnsemble::Mode::Leaf) continue;
          Num a = acc[t];
          Bool s = seen[t];
          bool any = false;
          for (const auto& w : tree.leaves_of(static_cast<int>(leaf))) {
            if (w.target != static_cast<int>(t)) continue;
            any = true;
            const Num wv = d_.weight(w.weight);
            if (extreme) {
              const Bool smaller = te.aggregate == TreeEnsemble::Aggregate::Min ? d_.lt(wv, a) : d_.lt(a, wv);
              a = d_.ite(s, d_.ite(smaller, wv, a), wv);
            } else {
              a = d_.add(a, wv);
            }
            s = d_.truth(true);
          }
          if (!any) continue;
          next = d_.ite(reach[leaf], a, next);
          next_seen = d_.ite_bool(reach[leaf], s, next_seen);
        }
        acc[t] = next;
        seen[t] = next_seen;
      }
    }
    for (std::size_t t = 0; t < targets; ++t) {
      if (te.aggregate == TreeEnsemble::Aggregate::Average) {
        acc[t] = d_.div(acc[t], d_.integer(static_cast<long>(te.trees.size())));
      }
      if (!te.base_values.empty()) acc[t] = d_.add(acc[t], d_.weight(te.base_values[t]));
    }
    if (te.binary_single_score) return {d_.add(d_.neg(acc[0]), d_.weight(te.binary_total)), acc[0]};
    return acc;
  }

  Num decide(const Vec& v) {
    const DecisionRule& rule = m_.rule;
    switch (rule.kind) {
      case DecisionRule::Kind::Threshold:
        return d_.ite(d_.above_double(v[static_cast<std::size_t>(rule.index)], rule.threshold), d_.integer(1), zero());
      case DecisionRule::Kind::ArgMax: return argmax(v);  // NaN never wins, as in Eigen's visitor
      case DecisionRule::Kind::Direct: {
        // A class index must be a number in int range; elsewhere the evaluator's lround is not
        // defined, so such scenarios are outside the model's domain.
        Num label = d_.round_half_away(v[0]);
        d_.require(d_.not_(d_.is_nan(v[0])));
        d_.require(d_.and_(d_.le(d_.integer(-kMaxDirectLabel), label), d_.le(label, d_.integer(kMaxDirectLabel))));
        return label;
      }
    }
    throw InternalError("query: unknown decision rule");
  }

  const Model& m_;
  D& d_;
  Needs needs_;
  std::vector<bool> needed_;
};

}  // namespace witness
