// A query's premise as a union of boxes over its inputs, in the numbers of a concrete domain C
// (ExactDomain, FloatDomain<double>, FloatDomain<float>): comparisons of one input with a constant,
// `in`, bool inputs, && || ! and negation, each compared exactly as the query's semantics compares
// it (open ends over the reals, the next float in float semantics, integral ends for integers).
// The tree path of queries (tree_query.h) searches these boxes.
//
//   witness::ExprScope scope;
//   scope.inputs = {{"x", witness::ExprType::Number}, {"n", witness::ExprType::Number}};
//   const witness::Expr e = witness::parse_expression("x > 1 && (n < 0 || n >= 2)", scope);
//   witness::boxes::Premise<witness::ExactDomain> p({witness::boxes::Dim::Real, witness::boxes::Dim::Int}, 4096);
//   auto u = p.of(e, false);  // two boxes: x in (1, inf) and n <= -1, or n >= 2
//   // nullopt, and p.why() says what, for a condition that is no union of boxes (x + n > 1, x < n)
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "model/interpreter.h"
#include "query/expression.h"
#include "query/semantics.h"
#include "solver/exact_domain.h"

namespace witness::boxes {

template <typename C>
constexpr bool kExact = std::is_same_v<C, ExactDomain>;

enum class Dim : std::uint8_t { Real, Int };

// One input's range: ends are C's numbers. Float domains always have both ends (inputs are finite)
// and no open end (the next float stands for it); exact reals keep open and missing ends.
template <typename C>
struct Interval {
  typename C::Num lo{}, hi{};
  bool has_lo = false, has_hi = false;
  bool lo_open = false, hi_open = false;
};

template <typename C>
using Box = std::vector<Interval<C>>;

template <typename C>
using Union = std::vector<Box<C>>;

template <typename F>
F next_int(F v, bool up) {  // v integral: the next integral value of F above (below) it
  const F big = std::ldexp(F(1), std::numeric_limits<F>::digits - 1);
  if (up) return v >= big || v < -big ? std::nextafter(v, std::numeric_limits<F>::infinity()) : v + 1;
  return v <= -big || v > big ? std::nextafter(v, -std::numeric_limits<F>::infinity()) : v - 1;
}

template <typename C>
Interval<C> whole(Dim) {
  Interval<C> i;
  if constexpr (!kExact<C>) {
    using F = typename C::Num;
    i.lo = -std::numeric_limits<F>::max(), i.hi = std::numeric_limits<F>::max();
    i.has_lo = i.has_hi = true;
  }
  return i;
}

template <typename C>
bool empty(const Interval<C>& i) {
  return i.has_lo && i.has_hi && (i.hi < i.lo || (i.lo == i.hi && (i.lo_open || i.hi_open)));
}

// Integers get closed integral ends, float reals closed ends; false when nothing is left.
template <typename C>
bool normalize(Interval<C>& i, Dim dim) {
  if constexpr (kExact<C>) {
    if (dim == Dim::Int) {
      if (i.has_lo) i.lo = i.lo_open && i.lo.is_integer() ? i.lo + Rational(1) : i.lo.ceil();
      if (i.has_hi) i.hi = i.hi_open && i.hi.is_integer() ? i.hi - Rational(1) : i.hi.floor();
      i.lo_open = i.hi_open = false;
    }
  } else {
    using F = typename C::Num;
    constexpr F inf = std::numeric_limits<F>::infinity();
    if (dim == Dim::Int) {
      const F lo = std::ceil(i.lo), hi = std::floor(i.hi);
      i.lo = i.lo_open && lo == i.lo ? next_int(lo, true) : lo;
      i.hi = i.hi_open && hi == i.hi ? next_int(hi, false) : hi;
    } else {
      if (i.lo_open) i.lo = std::nextafter(i.lo, inf);
      if (i.hi_open) i.hi = std::nextafter(i.hi, -inf);
    }
    i.lo_open = i.hi_open = false;
  }
  return !empty(i);
}

template <typename C>
Interval<C> intersect(const Interval<C>& a, const Interval<C>& b) {
  Interval<C> o = a;
  if (b.has_lo) {
    if (!o.has_lo || o.lo < b.lo) {
      o.lo = b.lo, o.lo_open = b.lo_open, o.has_lo = true;
    } else if (o.lo == b.lo) {
      o.lo_open = o.lo_open || b.lo_open;
    }
  }
  if (b.has_hi) {
    if (!o.has_hi || b.hi < o.hi) {
      o.hi = b.hi, o.hi_open = b.hi_open, o.has_hi = true;
    } else if (o.hi == b.hi) {
      o.hi_open = o.hi_open || b.hi_open;
    }
  }
  return o;
}

template <typename C>
bool contains(const Interval<C>& i, const typename C::Num& v) {
  if (i.has_lo && (v < i.lo || (v == i.lo && i.lo_open))) return false;
  return !(i.has_hi && (i.hi < v || (v == i.hi && i.hi_open)));
}

enum class Cmp : std::uint8_t { Lt, Le, Gt, Ge, Eq, Ne };

inline Cmp negated(Cmp c) {
  switch (c) {
    case Cmp::Lt: return Cmp::Ge;
    case Cmp::Le: return Cmp::Gt;
    case Cmp::Gt: return Cmp::Le;
    case Cmp::Ge: return Cmp::Lt;
    case Cmp::Eq: return Cmp::Ne;
    case Cmp::Ne: return Cmp::Eq;
  }
  return c;
}

// The values x with `x cmp v`, as one or two intervals.
template <typename C>
std::vector<Interval<C>> solutions(Cmp cmp, const typename C::Num& v, Dim dim) {
  Interval<C> below = whole<C>(dim), above = below;
  below.hi = v, below.has_hi = true;
  above.lo = v, above.has_lo = true;
  std::vector<Interval<C>> out;
  switch (cmp) {
    case Cmp::Le: out = {below}; break;
    case Cmp::Lt: below.hi_open = true, out = {below}; break;
    case Cmp::Ge: out = {above}; break;
    case Cmp::Gt: above.lo_open = true, out = {above}; break;
    case Cmp::Eq: out = {intersect(below, above)}; break;
    case Cmp::Ne: below.hi_open = above.lo_open = true, out = {below, above}; break;
  }
  std::erase_if(out, [dim](Interval<C>& i) { return !normalize(i, dim); });
  return out;
}

inline bool reads_anything(const Expr& e) {
  if (e.op == Expr::Op::Input || e.op == Expr::Op::Output || e.op == Expr::Op::Label) return true;
  return std::any_of(e.args.begin(), e.args.end(), [](const Expr& a) { return reads_anything(a); });
}

inline bool reads_inputs_or_outputs(const Expr& e) {
  if (e.op == Expr::Op::Input || e.op == Expr::Op::Output) return true;
  return std::any_of(e.args.begin(), e.args.end(), [](const Expr& a) { return reads_inputs_or_outputs(a); });
}

// The premise as a union of boxes (negation normal form, then distributed), or why it is not one.
template <typename C>
class Premise {
 public:
  Premise(std::vector<Dim> dims, std::size_t cap) : dims_(std::move(dims)), cap_(cap) {}

  [[nodiscard]] Box<C> whole_box() const {
    Box<C> b;
    for (Dim d : dims_) b.push_back(whole<C>(d));
    return b;
  }

  std::optional<Union<C>> of(const Expr& e, bool negate) {
    using Op = Expr::Op;
    switch (e.op) {
      case Op::Bool: return (e.index != 0) != negate ? Union<C>{whole_box()} : Union<C>{};
      case Op::Input: return atom(e.index, negate ? Cmp::Ne : Cmp::Eq, C::integer(1));  // a bool input
      case Op::Not: return of(e.args[0], !negate);
      case Op::And:
      case Op::Or: {
        auto a = of(e.args[0], negate);
        if (!a) return a;
        auto b = of(e.args[1], negate);
        if (!b) return b;
        if ((e.op == Op::And) != negate) return meet(*a, *b);
        a->insert(a->end(), b->begin(), b->end());
        return capped(std::move(*a));
      }
      case Op::In: {  // lo <= x <= hi, or its negation x < lo || x > hi
        if (e.args[0].op != Op::Input) return refuse("'in' tests something other than one input");
        const auto lo = constant(e.args[1]), hi = constant(e.args[2]);
        if (!lo || !hi) return refuse("an 'in' bound is not a constant");
        auto a = atom(e.args[0].index, negate ? Cmp::Lt : Cmp::Ge, *lo);
        auto b = atom(e.args[0].index, negate ? Cmp::Gt : Cmp::Le, *hi);
        if (!a || !b) return std::nullopt;
        if (!negate) return meet(*a, *b);
        a->insert(a->end(), b->begin(), b->end());
        return a;
      }
      case Op::Lt:
      case Op::Le:
      case Op::Gt:
      case Op::Ge:
      case Op::Eq:
      case Op::Ne: break;
      default: return refuse("a condition is not a comparison of an input with a constant");
    }
    if (e.args[0].type == ExprType::Bool) {  // a == b as (a && b) || (!a && !b); != the other way round
      const bool same = (e.op == Op::Eq) != negate;
      auto a = of(e.args[0], false), na = of(e.args[0], true), b = of(e.args[1], !same), nb = of(e.args[1], same);
      if (!a || !na || !b || !nb) return std::nullopt;
      auto left = meet(*a, *b);
      if (!left) return left;
      auto right = meet(*na, *nb);
      if (!right) return right;
      left->insert(left->end(), right->begin(), right->end());
      return capped(std::move(*left));
    }
    static constexpr Cmp kOf[] = {Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge, Cmp::Eq, Cmp::Ne};
    Cmp cmp = kOf[static_cast<int>(e.op) - static_cast<int>(Op::Lt)];
    const Expr* x = &e.args[0];
    const Expr* k = &e.args[1];
    if (x->op != Op::Input) {  // c < x reads as x > c
      std::swap(x, k);
      cmp = cmp == Cmp::Lt   ? Cmp::Gt
            : cmp == Cmp::Gt ? Cmp::Lt
            : cmp == Cmp::Le ? Cmp::Ge
            : cmp == Cmp::Ge ? Cmp::Le
                             : cmp;
    }
    if (x->op != Op::Input) return refuse("a comparison does not read one input directly");
    const auto v = constant(*k);
    if (!v) return refuse("an input is compared with something other than a constant");
    return atom(x->index, negate ? negated(cmp) : cmp, *v);
  }

  std::optional<Union<C>> meet(const Union<C>& a, const Union<C>& b) {
    Union<C> out;
    for (const Box<C>& x : a) {
      for (const Box<C>& y : b) {
        Box<C> z(x.size());
        bool ok = true;
        for (std::size_t d = 0; d < x.size() && ok; ++d) {
          z[d] = intersect(x[d], y[d]);
          ok = !empty(z[d]);
        }
        if (ok) out.push_back(std::move(z));
        if (out.size() > cap_) return refuse(fmt::format("the premise splits into more than {} boxes", cap_));
      }
    }
    return out;
  }

  std::optional<Union<C>> atom(int input, Cmp cmp, const typename C::Num& v) {
    const auto d = static_cast<std::size_t>(input);
    Union<C> out;
    for (const Interval<C>& i : solutions<C>(cmp, v, dims_[d])) {
      out.push_back(whole_box());
      out.back()[d] = i;
    }
    return out;
  }

  std::optional<Union<C>> refuse(std::string why) {
    if (why_.empty()) why_ = std::move(why);
    return std::nullopt;
  }
  [[nodiscard]] const std::string& why() const { return why_; }

 private:
  std::optional<Union<C>> capped(Union<C> u) {
    if (u.size() > cap_) return refuse(fmt::format("the premise splits into more than {} boxes", cap_));
    return u;
  }

  // A constant expression's value in C (as the solver computes it), if defined and finite.
  std::optional<typename C::Num> constant(const Expr& e) const {
    if (e.type != ExprType::Number || reads_anything(e)) return std::nullopt;
    C c;
    const ModelValues<C> none{{}, C::integer(0)};
    const typename C::Num v = evaluate_num(e, c, {}, none);
    if (!c.defined()) return std::nullopt;
    if constexpr (!kExact<C>) {
      if (!std::isfinite(v)) return std::nullopt;
    }
    return v;
  }

  std::vector<Dim> dims_;
  std::size_t cap_;
  std::string why_;
};

}  // namespace witness::boxes
