#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "model/evaluator.h"
#include "query/expression.h"
#include "query/query_run.h"
#include "query/semantics.h"
#include "query/tree_query.h"
#include "solver/z3_value.h"

namespace witness::query_internal {

template <typename S>
typename S::Num QueryRun::query_view(S& d, const ProgramInput& in, const z3::expr& t) const {
  if (in.kind == ProgramInput::Kind::Bool) return d.ite(t, d.integer(1), d.integer(0));
  if constexpr (std::is_same_v<S, Z3RealDomain>) {
    if (in.kind == ProgramInput::Kind::Int) return z3::to_real(z3::bv2int(t, in.is_signed));
    return t;
  } else {
    z3::context& ctx = t.ctx();
    const z3::expr rne(ctx, Z3_mk_fpa_rne(ctx));
    if (in.kind == ProgramInput::Kind::Int) {
      return S::symbolic(z3::expr(ctx, in.is_signed ? Z3_mk_fpa_to_fp_signed(ctx, rne, t, d.sort())
                                                    : Z3_mk_fpa_to_fp_unsigned(ctx, rne, t, d.sort())));
    }
    if ((in.bits == 32) == d.single()) return S::symbolic(t);
    return S::symbolic(z3::expr(ctx, Z3_mk_fpa_to_fp_float(ctx, rne, t, d.sort())));
  }
}

z3::expr QueryRun::program_literal(z3::context& ctx, const ProgramInput& in, const std::string& text, bool real) const {
  switch (in.kind) {
    case ProgramInput::Kind::Bool: return ctx.bool_val(text == "1");
    case ProgramInput::Kind::Int: {
      const Rational r = Rational::parse(text);
      return in.is_signed ? ctx.bv_val(static_cast<std::int64_t>(r.to_int64()), in.bits)
                          : ctx.bv_val(static_cast<std::uint64_t>(r.to_int64()), in.bits);
    }
    case ProgramInput::Kind::Float:
      if (real) return ctx.real_val(Rational::parse(text).to_string().c_str());
      if (in.bits == 32) return ctx.fpa_val(std::strtof(text.c_str(), nullptr));
      return ctx.fpa_val(std::strtod(text.c_str(), nullptr));
  }
  throw InternalError("query: unknown program input kind");
}

template <typename S>
ModelValues<S> QueryRun::encode_program(S& d, z3::context& ctx, std::vector<typename S::Num>& x) {
  const Program& program = *subject_.program;
  const bool real = std::is_same_v<S, Z3RealDomain>;
  const ProgramFloats floats = real ? ProgramFloats::Real : ProgramFloats::Ieee;
  std::vector<std::optional<z3::expr>> args(program.inputs().size());
  for (std::size_t i = 0; i < p_.inputs.size(); ++i) {
    const PreparedInput& pi = p_.inputs[i];
    const ProgramInput& in = program.inputs()[subject_.program_input[i]];
    const z3::expr t = pi.value ? program_literal(ctx, in, *pi.value, real) : program.fresh_input(ctx, in, floats);
    program_terms_.push_back(t);
    args[subject_.program_input[i]] = t;
    x.push_back(query_view(d, in, t));
    if (!pi.value && in.kind == ProgramInput::Kind::Float) {
      if constexpr (std::is_same_v<S, Z3RealDomain>) {
        if (pi.decl->type == InputType::Int) d.require(z3::is_int(t));
      } else {
        const auto own = S::symbolic(t);
        d.require(!d.is_nan(own) && !d.is_infinite(own));  // finite, as for models
        if (pi.decl->type == InputType::Int) d.require(d.is_integral(own));
      }
    }
    d.require(declared(d, pi, x.back()));
  }
  ProgramRunOptions run;
  run.floats = floats;
  // The executor may ignore inputs outside the declarations and the premise (the answer is about
  // those only). The premise never reads the decision, so a placeholder stands for it here.
  z3::expr assume = premise(d, p_, x, ModelValues<S>{{}, d.integer(0)});
  for (const z3::expr& c : d.side) assume = assume && c;
  run.assume = assume;
  run.loop_bound = q_.loop_bound;
  if (options_.time_limit > 0) {
    run.deadline =
        start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.time_limit));
  }
  run.cancel = options_.cancel;
  ProgramPaths paths = program.execute(ctx, args, run);
  program_timed_out_ = paths.timed_out;
  if (paths.done.empty() && !paths.timed_out && !paths.cut.empty()) {
    // No run finishes at all (an endless loop, endless recursion, undefined behaviour on every
    // path): there is nothing to ask a question of.
    std::vector<std::string> reasons;
    for (const ProgramCut& c : paths.cut) {
      if (std::find(reasons.begin(), reasons.end(), c.reason) == reasons.end()) reasons.push_back(c.reason);
    }
    throw UnsupportedError(fmt::format(
        "{}: the program {} finishes on no input of the query ({}){}", q_.where, program.path(),
        fmt::join(reasons, "; "),
        reasons[0].find("loop bound") != std::string::npos ? "; raise loop_bound if the loop does end" : ""));
  }
  // The returned value: the finished paths' values, chosen by their (disjoint) conditions.
  const ProgramInput& res = program.result();
  z3::expr value = paths.done.empty() ? program_literal(ctx, res, "0", real) : paths.done.back().value;
  z3::expr defined = ctx.bool_val(false);
  for (std::size_t i = paths.done.size(); i-- > 0;) {
    if (i + 1 < paths.done.size()) value = z3::ite(paths.done[i].condition, paths.done[i].value, value);
    defined = defined || paths.done[i].condition;
  }
  program_result_ = value;
  program_defined_ = defined.simplify();
  for (const ProgramCut& c : paths.cut) {
    auto same =
        std::find_if(program_cuts_.begin(), program_cuts_.end(), [&](const auto& k) { return k.second == c.reason; });
    if (same == program_cuts_.end()) {
      program_cuts_.emplace_back(c.condition, c.reason);
    } else {
      same->first = same->first || c.condition;
    }
  }
  ModelValues<S> mv{{}, query_view(d, res, value)};
  return mv;
}
template ModelValues<Z3RealDomain> QueryRun::encode_program<Z3RealDomain>(Z3RealDomain& d, z3::context& ctx,
                                                                          std::vector<typename Z3RealDomain::Num>& x);
template ModelValues<Z3FloatDomain> QueryRun::encode_program<Z3FloatDomain>(
    Z3FloatDomain& d, z3::context& ctx, std::vector<typename Z3FloatDomain::Num>& x);

void QueryRun::report_cuts(z3::solver& s, QueryAnswer& a) const {
  for (const auto& [condition, reason] : program_cuts_) {
    s.push();
    s.add(condition);
    std::string why;
    const z3::check_result r = check(s, why);
    s.pop();
    if (r == z3::unsat) continue;
    a.cut.push_back(r == z3::sat ? reason : reason + " (maybe: the check gave up)");
  }
  if (!a.cut.empty()) {
    a.note = fmt::format(
        "some scenarios of the premise leave the explored paths ({}); the answer covers only the "
        "scenarios on which the program finished, so it is not a proof",
        fmt::join(a.cut, "; "));
  }
}

template <typename C>
void QueryRun::replay_program(QueryAnswer& a, const std::vector<typename C::Num>& xc, const typename C::Num& label,
                              const z3::model& m) {
  const Program& program = *subject_.program;
  std::vector<std::optional<NativeValue>> native(program.inputs().size());
  bool rounded_inputs = false;
  for (std::size_t i = 0; i < p_.inputs.size(); ++i) {
    const ProgramInput& in = program.inputs()[subject_.program_input[i]];
    const z3::expr v = m.eval(program_terms_[i], true);
    NativeValue nv;
    if (in.kind == ProgramInput::Kind::Bool) {
      nv.integer = v.is_true() ? 1 : 0;
      nv.unsigned_integer = static_cast<std::uint64_t>(nv.integer);
    } else if (in.kind == ProgramInput::Kind::Int) {
      nv.unsigned_integer = v.get_numeral_uint64();
      nv.integer = static_cast<std::int64_t>(nv.unsigned_integer);
      if (in.is_signed && in.bits < 64 && ((nv.unsigned_integer >> (in.bits - 1)) & 1U) != 0) {
        nv.integer = static_cast<std::int64_t>(nv.unsigned_integer | (~std::uint64_t{0} << in.bits));
      }
    } else if constexpr (std::is_same_v<C, ExactDomain>) {
      bool irrational = false;
      const auto r = z3_rational(v, irrational);
      if (!r) throw InternalError(fmt::format("{}: z3 gave no value for input {}", q_.where, in.name));
      nv.number = in.bits == 32 ? static_cast<double>(static_cast<float>(r->to_double())) : r->to_double();
      rounded_inputs = rounded_inputs || Rational::from_double(nv.number) != *r;
    } else {
      const z3::expr bits = m.eval(z3::expr(v.ctx(), Z3_mk_fpa_to_ieee_bv(v.ctx(), v)), true);
      const std::uint64_t b = bits.get_numeral_uint64();
      nv.number = in.bits == 32 ? static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(b)))
                                : std::bit_cast<double>(b);
    }
    native[subject_.program_input[i]] = nv;
  }
  C c;
  const ModelValues<C> mv{{}, label};
  check_scenario<C>(c, xc, mv);
  a.label = label_of(label);
  const NativeValue got = program.run_native(native);
  const std::string text = program.result().kind == ProgramInput::Kind::Float ? shortest(got.number)
                           : program.result().is_signed                       ? std::to_string(got.integer)
                                                                              : std::to_string(got.unsigned_integer);
  ScenarioValue out;
  out.name = "return";
  out.number = got.number;
  out.text = program.result().kind == ProgramInput::Kind::Bool ? (got.integer != 0 ? "true" : "false") : text;
  a.outputs.push_back(out);
  a.evaluator_label = static_cast<int>(got.integer);
  bool same = false;
  if constexpr (std::is_same_v<C, ExactDomain>) {
    same = Rational::from_double(got.number) == label;
  } else {
    const auto native_value = static_cast<typename C::Num>(got.number);
    same = native_value == label || (std::isnan(native_value) && std::isnan(label));
  }
  if (same) {
    if (rounded_inputs) a.note = "the scenario's exact values were rounded to doubles for the native run";
    return;
  }
  if constexpr (!std::is_same_v<C, ExactDomain>) {
    throw InternalError(
        fmt::format("{}: on the scenario the compiled program returns {}, but its symbolic execution "
                    "gives {}",
                    q_.where, text, shortest(label)));
  }
  a.note = fmt::format(
      "the compiled program (float arithmetic) returns {} on this scenario, not {}: rounding "
      "changes the result{}",
      text, scenario_value("", label, false).text,
      rounded_inputs ? " (the exact inputs were also rounded to doubles)" : "");
}
template void QueryRun::replay_program<ExactDomain>(QueryAnswer& a, const std::vector<typename ExactDomain::Num>& xc,
                                                    const typename ExactDomain::Num& label, const z3::model& m);
template void QueryRun::replay_program<FloatDomain<double>>(QueryAnswer& a,
                                                            const std::vector<typename FloatDomain<double>::Num>& xc,
                                                            const typename FloatDomain<double>::Num& label,
                                                            const z3::model& m);
template void QueryRun::replay_program<FloatDomain<float>>(QueryAnswer& a,
                                                           const std::vector<typename FloatDomain<float>::Num>& xc,
                                                           const typename FloatDomain<float>::Num& label,
                                                           const z3::model& m);

}  // namespace witness::query_internal
