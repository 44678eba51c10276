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
S QueryRun::make_domain(z3::context& ctx) const {
  if constexpr (std::is_same_v<S, Z3RealDomain>) {
    return Z3RealDomain(ctx);
  } else {
    return Z3FloatDomain(ctx, q_.semantics == Semantics::Float32, options_.float_cases);
  }
}

std::vector<double> QueryRun::finite_values(const PreparedInput& pi, bool single, std::size_t max_cases) {
  auto read = [single](const std::string& t) {
    return single ? static_cast<double>(std::strtof(t.c_str(), nullptr)) : std::strtod(t.c_str(), nullptr);
  };
  std::vector<double> out;
  const InputType type = pi.decl->type;
  if (!pi.values.empty()) {
    for (const auto& v : pi.values) out.push_back(read(v));
  } else if (type == InputType::Bool) {
    out = {0.0, 1.0};
  } else if (type == InputType::Int && pi.min && pi.max) {
    const Rational lo = Rational::parse(*pi.min);
    const Rational hi = Rational::parse(*pi.max);
    if (hi - lo < Rational(static_cast<std::int64_t>(max_cases))) {
      for (std::int64_t k = lo.to_int64(); k <= hi.to_int64(); ++k) out.push_back(static_cast<double>(k));
    }
  }
  // Float rounding can make an int non-integral or out of range: leave those to the solver.
  std::erase_if(out, [&](double v) {
    return !std::isfinite(v) || (type != InputType::Real && std::nearbyint(v) != v) ||
           (pi.min && v < Rational::parse(*pi.min).to_double_down()) ||
           (pi.max && v > Rational::parse(*pi.max).to_double_up());
  });
  return out;
}

template <typename S>
typename S::Num QueryRun::symbol(S& d, const PreparedInput& pi, z3::context& ctx) const {
  const QueryInput& in = *pi.decl;
  if (pi.value) return d.literal(*pi.value);
  if constexpr (std::is_same_v<S, Z3RealDomain>) {
    if (in.type == InputType::Real) return ctx.real_const(in.name.c_str());
    const z3::expr i = ctx.int_const(in.name.c_str());
    if (in.type == InputType::Bool) d.require(i >= 0 && i <= 1);
    return z3::to_real(i);
  } else {
    const std::vector<double> values = finite_values(pi, d.single(), d.max_cases());
    if (!values.empty() && values.size() <= d.max_cases())
      return d.choice(in.name, values);  // declared() still checks them
    auto x = Z3FloatDomain::symbolic(ctx.constant(in.name.c_str(), d.sort()));
    d.require(!d.is_nan(x) && !d.is_infinite(x));
    if (in.type == InputType::Int) d.require(d.is_integral(x));
    if (in.type == InputType::Bool) d.require(d.eq(x, d.integer(0)) || d.eq(x, d.integer(1)));
    return x;
  }
}

template <typename S, typename C>
void QueryRun::solve(QueryAnswer& a) {
  RetiringContext owned;  // deleted on a helper thread, after every term of it below
  z3::context& ctx = *owned;
  retiring_ = &owned;
  // The program's terms belong to ctx: drop them before it goes (on every return).
  struct ForgetTerms {
    QueryRun& run;
    explicit ForgetTerms(QueryRun& r) : run(r) {}
    ForgetTerms(const ForgetTerms&) = delete;
    ForgetTerms& operator=(const ForgetTerms&) = delete;
    ~ForgetTerms() {
      run.retiring_ = nullptr;
      run.program_terms_.clear();
      run.program_result_.reset();
      run.program_defined_.reset();
      run.program_cuts_.clear();
    }
  } forget{*this};
  S d = make_domain<S>(ctx);
  std::vector<typename S::Num> x;
  std::optional<ModelValues<S>> encoded;
  try {
    encoded = subject_.program != nullptr ? encode_program(d, ctx, x) : encode_model(d, ctx, x);
  } catch (const EncodingStopped&) {
    a.status = QueryAnswer::Status::Unknown;
    a.reason_unknown = options_.cancel != nullptr && options_.cancel->load()
                           ? "canceled"
                           : fmt::format("time limit ({} s) while the model was encoded", options_.time_limit);
    return;
  }
  const ModelValues<S>& mv = *encoded;
  if (program_timed_out_) {
    a.status = QueryAnswer::Status::Unknown;
    a.reason_unknown =
        options_.cancel != nullptr && options_.cancel->load()
            ? "canceled"
            : fmt::format("time limit ({} s) during the symbolic execution of the program", options_.time_limit);
    return;
  }
  const z3::expr pre = premise(d, p_, x, mv);
  const z3::expr behavior = evaluate_condition(p_.behavior, d, x, mv);

  // Float queries are pure QF_FP: Z3's qffp tactic (simplify, then bit-blast to SAT) is 10 to
  // 100x faster than the default solver here (6.5 s -> 0.06 s on the diabetes weight query).
  // Programs mix bit-vectors and floats: QF_FPBV, which the same tactic handles.
  z3::solver s = make_z3_solver(ctx, std::is_same_v<S, Z3RealDomain> ? nullptr : "qffp");
  owned.keep(s);
  for (const auto& c : d.side) s.add(c);
  s.add(pre);
  s.push();
  if (program_defined_) s.add(*program_defined_);
  s.push();
  s.add(q_.kind == QueryKind::Might ? behavior : !behavior);
  const z3::check_result r = check(s, a.reason_unknown);
  record_stats(s, a);
  if (r == z3::unknown) {
    a.status = QueryAnswer::Status::Unknown;
    return;
  }
  a.answer = (r == z3::sat) == (q_.kind == QueryKind::Might);
  if (r == z3::unsat) {
    // No scenario: say whether that is because the family of scenarios is empty.
    s.pop();
    std::string reason;
    const z3::check_result e = check(s, reason);
    a.vacuous = e == z3::unsat ? std::optional<bool>(true) : e == z3::sat ? std::optional<bool>(false) : std::nullopt;
    s.pop();
    report_cuts(s, a);
    return;
  }
  z3::model m = s.get_model();
  if (q_.nearest) m = nearest(d, s, x, m, a);
  std::vector<typename C::Num> xc;
  bool irrational = false;
  for (std::size_t i = 0; i < p_.inputs.size(); ++i) {
    const PreparedInput& pi = p_.inputs[i];
    if (pi.value) {
      xc.push_back(C::literal(*pi.value));
    } else if constexpr (std::is_same_v<C, ExactDomain>) {
      const auto value = z3_rational(m.eval(x[i], true), irrational);  // complete model: always a numeral
      if (!value) throw InternalError(fmt::format("{}: z3 gave no value for input {}", q_.where, i));
      xc.push_back(*value);
    } else {
      xc.push_back(static_cast<typename C::Num>(d.value_in(m, x[i])));
    }
  }
  for (std::size_t i = 0; i < p_.inputs.size(); ++i) {
    a.scenario.push_back(scenario_value(p_.inputs[i].decl->name, xc[i], p_.inputs[i].decl->type == InputType::Bool));
    a.scenario.back().free = !p_.inputs[i].value;
  }
  if (irrational) {
    a.note = "the solver's scenario has irrational values; they are shown rounded and were not replayed exactly";
  } else if (subject_.program != nullptr) {
    typename C::Num label{};
    if constexpr (std::is_same_v<C, ExactDomain>) {
      bool rounded = false;
      const auto value = z3_rational(m.eval(mv.label, true), rounded);
      if (!value || rounded) throw InternalError(fmt::format("{}: z3 gave no value for the decision", q_.where));
      label = *value;
    } else {
      label = static_cast<typename C::Num>(d.value_in(m, mv.label));
    }
    replay_program<C>(a, xc, label, m);
  } else {
    replay<C>(a, xc);
  }
}
template void QueryRun::solve<Z3RealDomain, ExactDomain>(QueryAnswer& a);
template void QueryRun::solve<Z3FloatDomain, FloatDomain<double>>(QueryAnswer& a);
template void QueryRun::solve<Z3FloatDomain, FloatDomain<float>>(QueryAnswer& a);

template <typename S>
ModelValues<S> QueryRun::encode_model(S& d, z3::context& ctx, std::vector<typename S::Num>& x) {
  for (const auto& pi : p_.inputs) {
    x.push_back(symbol(d, pi, ctx));
    d.require(declared(d, pi, x.back()));
  }
  // The time limit and cancel hold while the network becomes terms, not only in the solver.
  auto poll = [this] {
    if ((options_.cancel != nullptr && options_.cancel->load()) ||
        (options_.time_limit > 0 && elapsed() > options_.time_limit))
      throw EncodingStopped{};
  };
  // Stopped, the terms made so far go with the context to its helper thread.
  auto on_stop = [this](std::vector<std::vector<typename S::Num>>&& partial) {
    if (retiring_ != nullptr)
      retiring_->keep_terms(std::make_shared<std::vector<std::vector<typename S::Num>>>(std::move(partial)));
  };
  ModelInterpreter<S> interpreter(*subject_.model, d,
                                  {.outputs = p_.needs_outputs, .node = -1, .poll = poll, .on_stop = on_stop});
  return interpreter.run(x);
}

void QueryRun::record_stats(const z3::solver& s, QueryAnswer& a) {
  const z3::stats st = s.statistics();
  for (unsigned i = 0; i < st.size(); ++i) {
    a.solver_stats[st.key(i)] = st.is_uint(i) ? static_cast<double>(st.uint_value(i)) : st.double_value(i);
  }
  a.solver_stats["assertions"] = static_cast<double>(s.assertions().size());
}

z3::check_result QueryRun::check(z3::solver& s, std::string& reason) const {
  double left = 0.0;  // no limit
  if (options_.time_limit > 0) {
    left = options_.time_limit - std::chrono::duration<double>(Clock::now() - start_).count();
    if (left <= 0) {
      reason = fmt::format("time limit ({} s)", options_.time_limit);
      return z3::unknown;
    }
  }
  // Float queries bit-blast: Z3 notices an interrupt only between phases, up to a tenth of the
  // time later (measured on a free input into Fairify's AC1), so it gets that much less.
  if (left > 0 && q_.semantics != Semantics::Real) left *= 0.88;
  const Z3Check c = z3_check(s, left, options_.cancel);
  if (c.result == z3::unknown) reason = c.timed_out ? fmt::format("time limit ({} s)", options_.time_limit) : c.reason;
  return c.result;
}

}  // namespace witness::query_internal
