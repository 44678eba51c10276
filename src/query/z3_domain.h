// Symbolic domains for semantics.h: the same interpreter run over Z3 terms builds the query
// formula. Real semantics uses Z3 reals (non-linear where the model multiplies or divides
// inputs); float64/float32 use Z3's floating-point theory with round-to-nearest-even.
//
//   z3::context ctx;
//   witness::Z3RealDomain d(ctx);
//   z3::expr x = ctx.real_const("x");
//   z3::expr y = d.div(x, d.literal("3"));    // records the side condition x / 3: 3 != 0
//   solver.add(z3::mk_and(d.side));           // assert the side conditions with the query
#pragma once

#include <z3++.h>

#include <cstdlib>
#include <string>
#include <vector>

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

// IEEE binary64 (float64) or binary32 (float32).
class Z3FloatDomain : public Z3BoolOps {
 public:
  Z3FloatDomain(z3::context& c, bool single) : Z3BoolOps(c), single_(single), rne_(c, Z3_mk_fpa_rne(c)) {}
  [[nodiscard]] bool single() const { return single_; }
  [[nodiscard]] z3::sort sort() const { return single_ ? ctx.fpa_sort(8, 24) : ctx.fpa_sort(11, 53); }

  [[nodiscard]] Num literal(const std::string& text) const {
    return single_ ? ctx.fpa_val(std::strtof(text.c_str(), nullptr)) : ctx.fpa_val(std::strtod(text.c_str(), nullptr));
  }
  [[nodiscard]] Num weight(double w) const { return single_ ? ctx.fpa_val(static_cast<float>(w)) : ctx.fpa_val(w); }
  [[nodiscard]] Num integer(long k) const { return weight(static_cast<double>(k)); }
  [[nodiscard]] Num add(const Num& a, const Num& b) const { return wrap(Z3_mk_fpa_add(ctx, rne_, a, b)); }
  [[nodiscard]] Num sub(const Num& a, const Num& b) const { return wrap(Z3_mk_fpa_sub(ctx, rne_, a, b)); }
  [[nodiscard]] Num mul(const Num& a, const Num& b) const { return wrap(Z3_mk_fpa_mul(ctx, rne_, a, b)); }
  [[nodiscard]] Num div(const Num& a, const Num& b) const { return wrap(Z3_mk_fpa_div(ctx, rne_, a, b)); }
  [[nodiscard]] Num neg(const Num& a) const { return wrap(Z3_mk_fpa_neg(ctx, a)); }
  [[nodiscard]] Bool lt(const Num& a, const Num& b) const { return wrap(Z3_mk_fpa_lt(ctx, a, b)); }
  [[nodiscard]] Bool le(const Num& a, const Num& b) const { return wrap(Z3_mk_fpa_leq(ctx, a, b)); }
  [[nodiscard]] Bool eq(const Num& a, const Num& b) const { return wrap(Z3_mk_fpa_eq(ctx, a, b)); }
  [[nodiscard]] Bool is_nan(const Num& a) const { return wrap(Z3_mk_fpa_is_nan(ctx, a)); }
  [[nodiscard]] Bool is_infinite(const Num& a) const { return wrap(Z3_mk_fpa_is_infinite(ctx, a)); }
  [[nodiscard]] Num round_half_away(const Num& a) const {
    return wrap(Z3_mk_fpa_round_to_integral(ctx, Z3_mk_fpa_rna(ctx), a));
  }
  // Nearest even integer check for int inputs: x is integral iff rounding leaves it unchanged.
  [[nodiscard]] Bool is_integral(const Num& a) const {
    return wrap(Z3_mk_fpa_eq(ctx, Z3_mk_fpa_round_to_integral(ctx, rne_, a), a));
  }
  [[nodiscard]] Bool above_double(const Num& v, double t) const {
    // The evaluator widens to double before comparing with the threshold (exact for floats).
    const Num wide = single_ ? wrap(Z3_mk_fpa_to_fp_float(ctx, rne_, v, ctx.fpa_sort(11, 53))) : v;
    return wrap(Z3_mk_fpa_gt(ctx, wide, ctx.fpa_val(t)));
  }

 private:
  [[nodiscard]] z3::expr wrap(Z3_ast a) const {
    z3::expr e(ctx, a);
    ctx.check_error();
    return e;
  }
  bool single_;
  z3::expr rne_;
};

}  // namespace witness
