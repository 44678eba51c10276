// Symbolic domains of the model interpreter (model/interpreter.h): the same interpreter run over Z3 terms builds the
// query formula. Real semantics uses Z3 reals (non-linear where the model multiplies or divides inputs);
// float64/float32 use Z3's floating-point theory with round-to-nearest-even.
//
//   z3::context ctx;
//   z3::solver solver(ctx);
//   witness::Z3RealDomain d(ctx);
//   z3::expr x = ctx.real_const("x");
//   z3::expr y = d.div(x, d.literal("3"));    // records the side condition x / 3: 3 != 0
//   for (const z3::expr& c : d.side) solver.add(c);   // assert the side conditions with the query
#pragma once

#include <fmt/format.h>
#include <z3++.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "solver/rational.h"

namespace witness {

// Operations shared by both symbolic domains.
struct Z3BoolOps {
  using Num = z3::expr;
  using Bool = z3::expr;
  explicit Z3BoolOps(z3::context& c) : ctx(c) {}
  z3::context& ctx;
  std::vector<z3::expr> side;  // conditions every scenario must meet (domain of the model)

  Bool and_(const Bool& a, const Bool& b) const {
    if (a.is_false() || b.is_false()) return ctx.bool_val(false);
    if (a.is_true()) return b;
    if (b.is_true()) return a;
    return a && b;
  }
  Bool or_(const Bool& a, const Bool& b) const {
    if (a.is_true() || b.is_true()) return ctx.bool_val(true);
    if (a.is_false()) return b;
    if (b.is_false()) return a;
    return a || b;
  }
  static Bool not_(const Bool& a) { return !a; }
  Bool truth(bool b) const { return ctx.bool_val(b); }
  static Num ite(const Bool& c, const Num& a, const Num& b) {
    if (c.is_true()) return a;
    if (c.is_false()) return b;
    return z3::ite(c, a, b);
  }
  static Bool ite_bool(const Bool& c, const Bool& a, const Bool& b) { return ite(c, a, b); }
  void require(const Bool& c) {
    if (!c.is_true()) side.push_back(c);
  }
  [[nodiscard]] std::size_t mark() const { return side.size(); }
  Bool take_side(std::size_t m) {
    Bool all = ctx.bool_val(true);
    for (std::size_t i = m; i < side.size(); ++i) all = and_(all, side[i]);
    side.resize(m, ctx.bool_val(true));
    return all;
  }
};

class Z3RealDomain : public Z3BoolOps {
 public:
  explicit Z3RealDomain(z3::context& c) : Z3BoolOps(c) {}
  [[nodiscard]] Num rational(const Rational& r) const { return ctx.real_val(r.to_string().c_str()); }
  [[nodiscard]] Num literal(const std::string& text) const { return rational(Rational::parse(text)); }
  [[nodiscard]] Num weight(double w) const { return rational(Rational::from_double(w)); }
  [[nodiscard]] Num integer(long k) const { return ctx.real_val(std::to_string(k).c_str()); }
  static Num add(const Num& a, const Num& b) { return a + b; }
  static Num sub(const Num& a, const Num& b) { return a - b; }
  static Num mul(const Num& a, const Num& b) { return a * b; }
  Num div(const Num& a, const Num& b) {
    require(b != integer(0));
    return a / b;
  }
  static Num neg(const Num& a) { return -a; }
  static Bool lt(const Num& a, const Num& b) { return a < b; }
  static Bool le(const Num& a, const Num& b) { return a <= b; }
  static Bool eq(const Num& a, const Num& b) { return a == b; }
  [[nodiscard]] Bool is_nan(const Num& /*a*/) const { return ctx.bool_val(false); }
  [[nodiscard]] Num round_half_away(const Num& a) const {
    const Num half = ctx.real_val(1, 2);
    const Num up = z3::to_real(z3::expr(ctx, Z3_mk_real2int(ctx, a + half)));
    const Num down = -z3::to_real(z3::expr(ctx, Z3_mk_real2int(ctx, -a + half)));
    return z3::ite(a >= integer(0), up, down);
  }
  [[nodiscard]] Bool above_double(const Num& v, double t) const { return v > weight(t); }
};

// A float value: either a Z3 floating-point term, or (while it has few possible values, as when
// it depends only on bool, int-range or `values` inputs) guarded constants: exclusive, exhaustive
// Boolean guards, each with the exact value it takes. Arithmetic on guarded constants is done
// here in C++ with the evaluator's own rounding, so Z3 sees only the Boolean structure; without
// it, every float op on a free input costs Z3 a bit-blasted adder or multiplier.
struct FloatValue {
  std::vector<std::pair<z3::expr, double>> cases;  // empty when `term` is set
  std::optional<z3::expr> term;
};

// IEEE binary64 (float64) or binary32 (float32), rounding to nearest even.
class Z3FloatDomain : public Z3BoolOps {
 public:
  using Num = FloatValue;
  // max_cases bounds the guarded constants of one value; 0 sends every float op to Z3.
  Z3FloatDomain(z3::context& c, bool single, std::size_t max_cases)
      : Z3BoolOps(c), single_(single), max_cases_(max_cases), rne_(c, Z3_mk_fpa_rne(c)) {}
  [[nodiscard]] std::size_t max_cases() const { return max_cases_; }
  [[nodiscard]] bool single() const { return single_; }
  [[nodiscard]] z3::sort sort() const { return single_ ? ctx.fpa_sort(8, 24) : ctx.fpa_sort(11, 53); }

  [[nodiscard]] Num constant(double v) const {
    if (max_cases_ == 0) return symbolic(numeral(round(v)));
    return Num{{{ctx.bool_val(true), round(v)}}, std::nullopt};
  }
  [[nodiscard]] static Num symbolic(const z3::expr& t) { return Num{{}, t}; }
  // One of `values`, chosen by fresh Boolean selectors named after `name`.
  [[nodiscard]] Num choice(const std::string& name, const std::vector<double>& values) const {
    Num out;
    if (values.size() > max_cases_) throw InternalError("query: more choices than guarded cases");
    z3::expr none_before = ctx.bool_val(true);
    for (std::size_t i = 0; i < values.size(); ++i) {
      z3::expr guard = none_before;
      if (i + 1 < values.size()) {
        const z3::expr pick = ctx.bool_const(fmt::format("{}#{}", name, i).c_str());
        guard = and_(none_before, pick);
        none_before = and_(none_before, !pick);
      }
      merge(out.cases, guard, round(values[i]));
    }
    return out;
  }

  [[nodiscard]] Num literal(const std::string& text) const {
    return constant(single_ ? std::strtof(text.c_str(), nullptr) : std::strtod(text.c_str(), nullptr));
  }
  [[nodiscard]] Num weight(double w) const { return constant(w); }
  [[nodiscard]] Num integer(long k) const { return constant(static_cast<double>(k)); }

  [[nodiscard]] Num add(const Num& a, const Num& b) const {
    return arith(
        a, b, [](auto x, auto y) { return x + y; }, Z3_mk_fpa_add);
  }
  [[nodiscard]] Num sub(const Num& a, const Num& b) const {
    return arith(
        a, b, [](auto x, auto y) { return x - y; }, Z3_mk_fpa_sub);
  }
  [[nodiscard]] Num mul(const Num& a, const Num& b) const {
    return arith(
        a, b, [](auto x, auto y) { return x * y; }, Z3_mk_fpa_mul);
  }
  [[nodiscard]] Num div(const Num& a, const Num& b) const {
    return arith(
        a, b, [](auto x, auto y) { return x / y; }, Z3_mk_fpa_div);
  }
  [[nodiscard]] Num neg(const Num& a) const {
    if (a.term) return symbolic(wrap(Z3_mk_fpa_neg(ctx, *a.term)));
    return map(a, [](double v) { return -v; });
  }
  [[nodiscard]] Bool lt(const Num& a, const Num& b) const {
    return compare(
        a, b, [](double x, double y) { return x < y; }, Z3_mk_fpa_lt);
  }
  [[nodiscard]] Bool le(const Num& a, const Num& b) const {
    return compare(
        a, b, [](double x, double y) { return x <= y; }, Z3_mk_fpa_leq);
  }
  [[nodiscard]] Bool eq(const Num& a, const Num& b) const {
    return compare(
        a, b, [](double x, double y) { return x == y; }, Z3_mk_fpa_eq);
  }
  [[nodiscard]] Num ite(const Bool& c, const Num& a, const Num& b) const {
    if (c.is_true()) return a;
    if (c.is_false()) return b;
    if (!a.term && !b.term && a.cases.size() + b.cases.size() <= max_cases_) {
      Num out;
      for (const auto& [g, v] : a.cases) merge(out.cases, and_(c, g), v);
      for (const auto& [g, v] : b.cases) merge(out.cases, and_(!c, g), v);
      return out;
    }
    return symbolic(z3::ite(c, term(a), term(b)));
  }
  [[nodiscard]] Bool is_nan(const Num& a) const {
    return test(
        a, [](double v) { return std::isnan(v); }, Z3_mk_fpa_is_nan);
  }
  [[nodiscard]] Bool is_infinite(const Num& a) const {
    return test(
        a, [](double v) { return std::isinf(v); }, Z3_mk_fpa_is_infinite);
  }
  [[nodiscard]] Num round_half_away(const Num& a) const {
    if (a.term) return symbolic(wrap(Z3_mk_fpa_round_to_integral(ctx, Z3_mk_fpa_rna(ctx), *a.term)));
    return map(a, [](double v) { return std::round(v); });
  }
  // x is integral iff rounding leaves it unchanged.
  [[nodiscard]] Bool is_integral(const Num& a) const {
    if (a.term) return wrap(Z3_mk_fpa_eq(ctx, Z3_mk_fpa_round_to_integral(ctx, rne_, *a.term), *a.term));
    return test(
        a, [](double v) { return std::nearbyint(v) == v; }, Z3_mk_fpa_is_nan);
  }
  [[nodiscard]] Bool above_double(const Num& v, double t) const {
    if (!v.term)
      return test(
          v, [t](double x) { return x > t; }, Z3_mk_fpa_is_nan);
    // The evaluator widens to double before comparing with the threshold (exact for floats).
    const z3::expr wide = single_ ? wrap(Z3_mk_fpa_to_fp_float(ctx, rne_, *v.term, ctx.fpa_sort(11, 53))) : *v.term;
    return wrap(Z3_mk_fpa_gt(ctx, wide, ctx.fpa_val(t)));
  }

  // The value of v in a model of the solver.
  [[nodiscard]] double value_in(const z3::model& m, const Num& v) const {
    if (!v.term) {
      for (const auto& [g, x] : v.cases) {
        if (m.eval(g, true).is_true()) return x;
      }
      throw InternalError("query: no case of a guarded float holds in the model");
    }
    const std::uint64_t bits = m.eval(wrap(Z3_mk_fpa_to_ieee_bv(ctx, *v.term)), true).get_numeral_uint64();
    return single_ ? static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits)))
                   : std::bit_cast<double>(bits);
  }

  [[nodiscard]] z3::expr term(const Num& v) const {
    if (v.term) return *v.term;
    z3::expr t = numeral(v.cases.back().second);
    for (std::size_t i = v.cases.size() - 1; i-- > 0;) t = z3::ite(v.cases[i].first, numeral(v.cases[i].second), t);
    return t;
  }

 private:
  using FpOp = Z3_ast (*)(Z3_context, Z3_ast, Z3_ast, Z3_ast);
  using FpCmp = Z3_ast (*)(Z3_context, Z3_ast, Z3_ast);
  using FpTest = Z3_ast (*)(Z3_context, Z3_ast);

  [[nodiscard]] double round(double v) const { return single_ ? static_cast<double>(static_cast<float>(v)) : v; }

  [[nodiscard]] z3::expr numeral(double v) const {
    if (std::isnan(v)) return ctx.fpa_nan(sort());
    if (std::isinf(v)) return ctx.fpa_inf(sort(), v < 0);
    if (v == 0) return wrap(Z3_mk_fpa_zero(ctx, sort(), std::signbit(v)));
    return single_ ? ctx.fpa_val(static_cast<float>(v)) : ctx.fpa_val(v);
  }

  // Adds a case, joining guards of bit-identical values (every NaN is one value here).
  void merge(std::vector<std::pair<z3::expr, double>>& cases, const z3::expr& guard, double v) const {
    if (guard.is_false()) return;
    for (auto& [g, x] : cases) {
      if ((std::isnan(x) && std::isnan(v)) || std::bit_cast<std::uint64_t>(x) == std::bit_cast<std::uint64_t>(v)) {
        g = or_(g, guard);
        return;
      }
    }
    cases.emplace_back(guard, v);
  }

  template <typename F>
  [[nodiscard]] Num map(const Num& a, F f) const {
    Num out;
    for (const auto& [g, v] : a.cases) merge(out.cases, g, round(f(v)));
    return out;
  }

  // x op y rounded once to the format, as the evaluator computes it in T.
  template <typename F>
  [[nodiscard]] double apply(F f, double x, double y) const {
    if (single_) return static_cast<double>(f(static_cast<float>(x), static_cast<float>(y)));
    return f(x, y);
  }

  template <typename F>
  [[nodiscard]] Num arith(const Num& a, const Num& b, F f, FpOp op) const {
    if (!a.term && !b.term && a.cases.size() * b.cases.size() <= max_cases_) {
      Num out;
      for (const auto& [ga, x] : a.cases) {
        for (const auto& [gb, y] : b.cases) merge(out.cases, and_(ga, gb), apply(f, x, y));
      }
      return out;
    }
    return symbolic(wrap(op(ctx, rne_, term(a), term(b))));
  }

  template <typename F>
  [[nodiscard]] Bool compare(const Num& a, const Num& b, F f, FpCmp op) const {
    if (!a.term && !b.term && a.cases.size() * b.cases.size() <= max_cases_) {
      Bool out = ctx.bool_val(false);
      for (const auto& [ga, x] : a.cases) {
        for (const auto& [gb, y] : b.cases) {
          if (f(x, y)) out = or_(out, and_(ga, gb));
        }
      }
      return out;
    }
    return wrap(op(ctx, term(a), term(b)));
  }

  // A predicate of one value: on the cases in C++, else the Z3 test `op`.
  template <typename F>
  [[nodiscard]] Bool test(const Num& a, F f, FpTest op) const {
    if (a.term) return wrap(op(ctx, *a.term));
    return on_cases(a, f);
  }
  // The predicate on guarded constants: the disjunction of the guards whose value satisfies it.
  template <typename F>
  [[nodiscard]] Bool on_cases(const Num& a, F f) const {
    Bool out = ctx.bool_val(false);
    for (const auto& [g, v] : a.cases) {
      if (f(v)) out = or_(out, g);
    }
    return out;
  }

  [[nodiscard]] z3::expr wrap(Z3_ast a) const {
    z3::expr e(ctx, a);
    ctx.check_error();
    return e;
  }
  bool single_;
  std::size_t max_cases_;
  z3::expr rne_;
};

}  // namespace witness
