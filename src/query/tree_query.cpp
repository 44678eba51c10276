#include "query/tree_query.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/error.h"
#include "query/premise_boxes.h"
#include "query/semantics.h"

namespace witness {

namespace {
// Named as well: the layer compiles in unity batches, where names local to a file must be unique.
namespace tree_boxes {

using namespace boxes;  // the box algebra (premise_boxes.h) is this file's vocabulary

// The ensemble as the interpreter computes it, each split reading one model input.
template <typename C>
struct Forest {
  using Num = typename C::Num;
  struct Split {
    TreeEnsemble::Mode mode = TreeEnsemble::Mode::Leaf;
    std::size_t input = 0;
    Num threshold{};
    std::vector<Num> members;
    int true_child = -1, false_child = -1;
    std::size_t leaf = 0;  // leaves: offset of the weights per target
  };
  std::vector<std::vector<Split>> trees;
  std::vector<double> weights;
  std::size_t targets = 1;
  double scale = 1.0;
  std::vector<double> base;
  bool pair = false;
  double total = 0.0;
  bool argmax = false;
  std::vector<std::size_t> rule_outputs;  // per rule coordinate: its ensemble output
  double threshold = 0.0;
  double margin = 0.0;  // above any rounding of C's sum of leaves and of these bounds
};

// Follows Identity and Select from `node` back to `to`, mapping coordinates; false otherwise.
bool trace(const Model& m, int node, int to, std::vector<std::size_t>& coords) {
  while (node != to) {
    const Node& n = m.nodes[static_cast<std::size_t>(node)];
    if (n.op == OpKind::Select) {
      for (std::size_t& c : coords) c = static_cast<std::size_t>(n.indices[c]);
    } else if (n.op != OpKind::Identity) {
      return false;
    }
    node = n.inputs[0];
  }
  return true;
}

template <typename C>
std::optional<Forest<C>> compile(const Model& m, std::string& why) {
  auto fail = [&why](const char* w) -> std::optional<Forest<C>> {
    why = w;
    return std::nullopt;
  };
  const int ens = single_tree_ensemble(m, why);
  if (ens < 0) return std::nullopt;
  const Node& en = m.nodes[static_cast<std::size_t>(ens)];
  const TreeEnsemble& te = *en.trees;
  if (te.aggregate != TreeEnsemble::Aggregate::Sum && te.aggregate != TreeEnsemble::Aggregate::Average)
    return fail("the trees are aggregated by min or max");
  std::vector<std::size_t> in(static_cast<std::size_t>(m.nodes[static_cast<std::size_t>(en.inputs[0])].width));
  for (std::size_t j = 0; j < in.size(); ++j) in[j] = j;
  if (!trace(m, en.inputs[0], m.input, in)) return fail("the trees read their inputs through preprocessing");
  Forest<C> f;
  f.argmax = m.rule.kind == DecisionRule::Kind::ArgMax;
  if (m.rule.kind == DecisionRule::Kind::Direct) return fail("the model outputs its label directly");
  if (f.argmax) {
    f.rule_outputs.resize(static_cast<std::size_t>(m.nodes[static_cast<std::size_t>(m.rule.node)].width));
    for (std::size_t j = 0; j < f.rule_outputs.size(); ++j) f.rule_outputs[j] = j;
  } else {
    f.rule_outputs = {static_cast<std::size_t>(m.rule.index)};
    f.threshold = m.rule.threshold;
  }
  if (!trace(m, m.rule.node, ens, f.rule_outputs))
    return fail("the decision reads something other than the trees' outputs");
  f.targets = static_cast<std::size_t>(te.n_targets);
  f.scale = te.aggregate == TreeEnsemble::Aggregate::Average ? 1.0 / static_cast<double>(te.trees.size()) : 1.0;
  f.base = te.base_values.empty() ? std::vector<double>(f.targets, 0.0) : te.base_values;
  f.pair = te.binary_single_score;
  f.total = te.binary_total;
  double size = std::abs(f.total), terms = 8.0;
  for (double b : f.base) size += std::abs(b);
  for (const TreeEnsemble::Tree& t : te.trees) {
    std::vector<typename Forest<C>::Split> nodes(t.nodes.size());
    double largest = 0.0, most = 0.0;
    for (std::size_t i = 0; i < t.nodes.size(); ++i) {
      const TreeEnsemble::Node& n = t.nodes[i];
      auto& s = nodes[i];
      s.mode = n.mode;
      if (n.mode == TreeEnsemble::Mode::Leaf) {
        s.leaf = f.weights.size();
        f.weights.resize(f.weights.size() + f.targets, 0.0);
        double sum = 0.0;
        for (const auto& l : t.leaves_of(static_cast<int>(i))) {
          f.weights[s.leaf + static_cast<std::size_t>(l.target)] += l.weight;
          sum += std::abs(l.weight);
        }
        largest = std::max(largest, sum);
        most = std::max(most, static_cast<double>(t.leaves_of(static_cast<int>(i)).size()));
        continue;
      }
      s.input = in[static_cast<std::size_t>(n.feature)];
      s.threshold = C::weight(n.threshold);
      for (double v : n.members) s.members.push_back(C::weight(v));
      s.true_child = n.true_child, s.false_child = n.false_child;
    }
    size += largest * f.scale;
    terms += most + 1.0;
    f.trees.push_back(std::move(nodes));
  }
  if (!std::isfinite(size) || size > 1e300) return fail("the leaf weights are too large to bound");
  // Sums of `terms` numbers, each rounded by at most u of the running magnitude: C's own sum (its
  // weights rounded to C first) and the double bounds here; twice over for good measure.
  const double u = std::is_same_v<C, FloatDomain<float>> ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53);
  f.margin = 4.0 * terms * u * size + 1e-300;
  return f;
}

template <typename C>
Truth test(const typename Forest<C>::Split& s, const Interval<C>& i) {
  using Mode = TreeEnsemble::Mode;
  const auto& t = s.threshold;
  const bool all_le = i.has_hi && !(t < i.hi);
  const bool all_lt = i.has_hi && (i.hi < t || (i.hi == t && i.hi_open));
  const bool all_ge = i.has_lo && !(i.lo < t);
  const bool all_gt = i.has_lo && (t < i.lo || (i.lo == t && i.lo_open));
  const bool point = i.has_lo && i.has_hi && i.lo == i.hi;
  switch (s.mode) {
    case Mode::Leq: return all_le ? Truth::Always : all_gt ? Truth::Never : Truth::Maybe;
    case Mode::Lt: return all_lt ? Truth::Always : all_ge ? Truth::Never : Truth::Maybe;
    case Mode::Geq: return all_ge ? Truth::Always : all_lt ? Truth::Never : Truth::Maybe;
    case Mode::Gt: return all_gt ? Truth::Always : all_le ? Truth::Never : Truth::Maybe;
    case Mode::Eq:
    case Mode::Neq: {
      const Truth eq = point && i.lo == t ? Truth::Always : !contains(i, t) ? Truth::Never : Truth::Maybe;
      if (s.mode == Mode::Eq || eq == Truth::Maybe) return eq;
      return eq == Truth::Always ? Truth::Never : Truth::Always;
    }
    case Mode::Member: {
      const bool any = std::any_of(s.members.begin(), s.members.end(), [&](const auto& m) { return contains(i, m); });
      if (!any) return Truth::Never;
      return point ? Truth::Always : Truth::Maybe;  // a point inside holds one of them
    }
    case Mode::Leaf: break;
  }
  return Truth::Maybe;
}

// Bounds on the ensemble's outputs over a box, and the first undecided split of the widest tree.
struct Scores {
  std::vector<double> lo, hi;
  bool leaves_only = true;
  int tree = -1, node = -1;
  double spread = -1.0;
};

template <typename C>
Scores scores(const Forest<C>& f, const Box<C>& box) {
  Scores out;
  const std::size_t nt = f.targets;
  std::vector<double> slo(nt, 0.0), shi(nt, 0.0), tlo(nt), thi(nt);
  std::vector<int> stack;
  for (std::size_t t = 0; t < f.trees.size(); ++t) {
    const auto& tree = f.trees[t];
    std::fill(tlo.begin(), tlo.end(), INFINITY);
    std::fill(thi.begin(), thi.end(), -INFINITY);
    int open = -1;
    stack.assign(1, 0);
    while (!stack.empty()) {
      const auto& n = tree[static_cast<std::size_t>(stack.back())];
      const int id = stack.back();
      stack.pop_back();
      if (n.mode == TreeEnsemble::Mode::Leaf) {
        for (std::size_t k = 0; k < nt; ++k) {
          tlo[k] = std::min(tlo[k], f.weights[n.leaf + k]);
          thi[k] = std::max(thi[k], f.weights[n.leaf + k]);
        }
        continue;
      }
      const Truth tr = test<C>(n, box[n.input]);
      if (tr != Truth::Never) stack.push_back(n.true_child);
      if (tr != Truth::Always) stack.push_back(n.false_child);
      if (tr == Truth::Maybe && open < 0) open = id;
    }
    double spread = 0.0;
    for (std::size_t k = 0; k < nt; ++k) slo[k] += tlo[k], shi[k] += thi[k], spread += thi[k] - tlo[k];
    if (open < 0) continue;
    out.leaves_only = false;
    if (spread > out.spread) out.spread = spread, out.tree = static_cast<int>(t), out.node = open;
  }
  out.lo.resize(nt);
  out.hi.resize(nt);
  for (std::size_t k = 0; k < nt; ++k) {
    out.lo[k] = slo[k] * f.scale + f.base[k];
    out.hi[k] = shi[k] * f.scale + f.base[k];
  }
  if (f.pair) {
    const double l = out.lo[0], h = out.hi[0];
    out.lo = {f.total - h, l};
    out.hi = {f.total - l, h};
  }
  return out;
}

// Labels the bounds leave possible (by more than the margin).
template <typename C>
std::vector<bool> possible(const Forest<C>& f, const Scores& s) {
  const double e = f.margin;
  if (!f.argmax) {
    const std::size_t o = f.rule_outputs[0];
    return {s.lo[o] - e <= f.threshold, s.hi[o] + e > f.threshold};
  }
  std::vector<bool> out(f.rule_outputs.size(), true);
  for (std::size_t k = 0; k < out.size(); ++k) {
    for (std::size_t j = 0; j < out.size() && out[k]; ++j)
      out[k] = j == k || s.lo[f.rule_outputs[j]] - e <= s.hi[f.rule_outputs[k]] + e;
  }
  return out;
}

// A point of the interval: the logged value, else 0, else the end nearest 0 (or a point near it).
template <typename C>
typename C::Num pick(const Interval<C>& i, const std::optional<typename C::Num>& logged) {
  using Num = typename C::Num;
  if (logged && contains(i, *logged)) return *logged;
  if (contains(i, Num(0))) return Num(0);
  const bool positive = i.has_lo && !(i.lo < Num(0));
  if constexpr (kExact<C>) {
    Num end = positive ? i.lo : i.hi;
    if (!(positive ? i.lo_open : i.hi_open)) return end;
    Num step = positive ? end.floor() + Rational(1) : end.ceil() - Rational(1);
    if (contains(i, step)) return step;
    return (i.lo + i.hi) / Rational(2);  // both ends within one integer step
  } else {
    return positive ? i.lo : i.hi;
  }
}

// Splits the interval where the split's truth changes: two or three nonempty parts.
template <typename C>
std::vector<Interval<C>> cut(const typename Forest<C>::Split& s, const Interval<C>& i, Dim dim) {
  using Mode = TreeEnsemble::Mode;
  typename C::Num at = s.threshold;
  std::vector<Cmp> parts;
  switch (s.mode) {
    case Mode::Leq:
    case Mode::Gt: parts = {Cmp::Le, Cmp::Gt}; break;
    case Mode::Lt:
    case Mode::Geq: parts = {Cmp::Lt, Cmp::Ge}; break;
    default: {  // Eq, Neq, Member: below, at, above a value inside
      if (s.mode == Mode::Member) {
        std::vector<typename C::Num> inside;
        for (const auto& m : s.members)
          if (contains(i, m)) inside.push_back(m);
        at = inside[inside.size() / 2];
      }
      parts = {Cmp::Lt, Cmp::Eq, Cmp::Gt};
    }
  }
  std::vector<Interval<C>> out;
  for (Cmp c : parts) {
    for (const Interval<C>& p : solutions<C>(c, at, dim)) {
      Interval<C> x = intersect(i, p);
      if (normalize(x, dim)) out.push_back(x);
    }
  }
  return out;
}

long label_index(const Rational& r) { return static_cast<long>(r.to_int64()); }
template <typename F>
long label_index(F v) {
  return static_cast<long>(v);
}

// Which labels answer the query: might wants the behavior true, would wants it false.
template <typename C>
std::vector<bool> wanted_labels(const Forest<C>& f, const TreeBoxQuery& q) {
  const std::size_t labels = f.argmax ? f.rule_outputs.size() : 2;
  std::vector<bool> want(labels);
  for (std::size_t l = 0; l < labels; ++l) {
    C c;
    const ModelValues<C> mv{{}, C::integer(static_cast<long>(l))};
    const bool holds = evaluate_condition(*q.behavior, c, {}, mv) && c.defined();
    want[l] = holds == q.might;
  }
  return want;
}

// The premise (declarations, premise expressions and the factual) as a union of boxes; nothing
// where it is not one.
template <typename C>
std::optional<Union<C>> premise_boxes(Premise<C>& premise, const TreeBoxQuery& q) {
  std::optional<Union<C>> u = Union<C>{premise.whole_box()};
  for (std::size_t d = 0; d < q.inputs.size() && u; ++d) {  // the declarations
    const TreeBoxInput& in = q.inputs[d];
    const auto input = static_cast<int>(d);
    std::optional<Union<C>> decl;
    if (in.value) {
      decl = premise.atom(input, Cmp::Eq, C::literal(*in.value));
    } else if (!in.values.empty()) {
      decl = Union<C>{};
      for (const std::string& v : in.values) {
        const auto one = premise.atom(input, Cmp::Eq, C::literal(v));
        decl->insert(decl->end(), one->begin(), one->end());
      }
    } else {
      decl = Union<C>{premise.whole_box()};
      if (in.type == InputType::Bool) decl = premise.meet(*decl, *premise.atom(input, Cmp::Ge, C::integer(0)));
      if (in.type == InputType::Bool) decl = premise.meet(*decl, *premise.atom(input, Cmp::Le, C::integer(1)));
      if (in.min && decl) decl = premise.meet(*decl, *premise.atom(input, Cmp::Ge, C::literal(*in.min)));
      if (in.max && decl) decl = premise.meet(*decl, *premise.atom(input, Cmp::Le, C::literal(*in.max)));
    }
    if (decl) u = premise.meet(*u, *decl);
    if (!decl) u.reset();
  }
  for (const Expr* e : q.premise) {
    if (!u) break;
    const auto part = premise.of(*e, false);
    if (part) u = premise.meet(*u, *part);
    if (!part) u.reset();
  }
  if (u && q.factual != nullptr) {
    const auto part = premise.of(*q.factual, true);
    if (part) u = premise.meet(*u, *part);
    if (!part) u.reset();
  }
  return u;
}

// Depth-first over the premise's boxes, cut along the trees' splits until the bounds say a box has
// no wanted label (dropped) or the interpreter decides it; `r.status` says how it ended.
template <typename C>
void search_boxes(const Model& model, const TreeBoxQuery& q, const Forest<C>& f, const std::vector<bool>& want,
                  const std::vector<Dim>& dims, const std::vector<std::optional<typename C::Num>>& logged,
                  const Union<C>& u, TreeBoxResult<C>& r) {
  using Num = typename C::Num;
  using Status = typename TreeBoxResult<C>::Status;
  const std::size_t labels = want.size();
  C c;
  ModelInterpreter<C> interpreter(model, c, {});
  auto point_of = [&](const Box<C>& box) {
    std::vector<Num> x;
    for (std::size_t d = 0; d < box.size(); ++d) x.push_back(pick<C>(box[d], logged[d]));
    return x;
  };
  std::vector<Box<C>> stack(u.rbegin(), u.rend());
  while (!stack.empty()) {
    if (r.boxes >= q.max_boxes) {
      r.status = Status::Stopped;
      r.why = "boxes";
      return;
    }
    if (r.boxes % 256 == 0 && q.stop && q.stop()) {
      r.status = Status::Stopped;
      r.why = "stopped";
      return;
    }
    ++r.boxes;
    Box<C> box = std::move(stack.back());
    stack.pop_back();
    const Scores s = scores(f, box);
    const std::vector<bool> can = possible(f, s);
    bool some = false, all = true;
    for (std::size_t l = 0; l < labels; ++l) {
      some = some || (can[l] && want[l]);
      all = all && (!can[l] || want[l]);
    }
    if (!some) continue;
    if (all || s.leaves_only) {
      // Every point has a wanted label, or one label for all: the interpreter says which.
      std::vector<Num> x = point_of(box);
      c.side.clear();
      const Num label = interpreter.run(x).label;
      const long l = label_index(label);
      if (l >= 0 && static_cast<std::size_t>(l) < labels && want[static_cast<std::size_t>(l)]) {
        r.status = Status::Found;
        r.point = std::move(x);
        return;
      }
      if (all) throw InternalError("tree query: a box whose bounds admit only wanted labels has another");
      continue;
    }
    const auto& split = f.trees[static_cast<std::size_t>(s.tree)][static_cast<std::size_t>(s.node)];
    for (Interval<C>& part : cut<C>(split, box[split.input], dims[split.input])) {
      stack.push_back(box);
      stack.back()[split.input] = std::move(part);
    }
  }
  r.status = Status::None;
}

template <typename C>
TreeBoxResult<C> search(const Model& model, const TreeBoxQuery& q) {
  using Num = typename C::Num;
  TreeBoxResult<C> r;
  using Status = typename TreeBoxResult<C>::Status;
  auto refuse = [&](const std::string& why) {
    r.status = Status::Refused;
    r.why = why;
    return r;
  };
  if (q.behavior == nullptr || reads_inputs_or_outputs(*q.behavior))
    return refuse("the behavior reads more than the label");
  if (q.inputs.size() != static_cast<std::size_t>(model.input_width()))
    return refuse("the query does not declare every model input");
  std::string why;
  const std::optional<Forest<C>> forest = compile<C>(model, why);
  if (!forest) return refuse(why);
  const std::vector<bool> want = wanted_labels(*forest, q);
  std::vector<Dim> dims;
  std::vector<std::optional<Num>> logged;
  for (const TreeBoxInput& in : q.inputs) {
    dims.push_back(in.type == InputType::Real ? Dim::Real : Dim::Int);
    logged.push_back(in.value    ? std::optional<Num>(C::literal(*in.value))
                     : in.logged ? std::optional<Num>(C::literal(*in.logged))
                                 : std::nullopt);
  }
  Premise<C> premise(dims, q.max_premise_boxes);
  const std::optional<Union<C>> u = premise_boxes(premise, q);
  if (!u) return refuse(premise.why().empty() ? "the premise is not a union of boxes" : premise.why());
  r.premise_boxes = u->size();
  r.premise_empty = u->empty();
  search_boxes(model, q, *forest, want, dims, logged, *u, r);
  return r;
}

}  // namespace tree_boxes
}  // namespace

template <typename C>
TreeBoxResult<C> tree_box_query(const Model& model, const TreeBoxQuery& q) {
  return tree_boxes::search<C>(model, q);
}

template TreeBoxResult<ExactDomain> tree_box_query<ExactDomain>(const Model&, const TreeBoxQuery&);
template TreeBoxResult<FloatDomain<double>> tree_box_query<FloatDomain<double>>(const Model&, const TreeBoxQuery&);
template TreeBoxResult<FloatDomain<float>> tree_box_query<FloatDomain<float>>(const Model&, const TreeBoxQuery&);

}  // namespace witness
