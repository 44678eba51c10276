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

template <typename C>
bool QueryRun::scenario_from_real(QueryAnswer& a) {
  if (subject_.program != nullptr || subject_.model == nullptr || q_.nearest) return false;
  if (std::none_of(p_.inputs.begin(), p_.inputs.end(), [](const PreparedInput& pi) { return !pi.value; })) {
    return false;
  }
  Query rq = q_;
  rq.semantics = Semantics::Real;
  QueryOptions ro = options_;
  const double left = options_.time_limit > 0 ? options_.time_limit - elapsed() : 0.0;
  ro.time_limit = options_.time_limit > 0 ? std::min(left / 4, 5.0) : 5.0;
  if (ro.time_limit <= 0.01) return false;
  QueryAnswer ra;
  try {
    const Prepared rp = prepare(subject_, rq);
    ra = QueryRun(subject_, rq, ro, rp).run();
  } catch (const Error&) {
    return false;  // e.g. an op without an exact real encoding: leave it to the float solver
  }
  if (ra.status != QueryAnswer::Status::Answered || ra.scenario.empty()) return false;
  using F = typename C::Num;
  std::vector<F> base;
  for (const ScenarioValue& v : ra.scenario) base.push_back(static_cast<F>(v.number));
  std::vector<std::vector<F>> candidates{base};
  // Moves of one free real input at a time: by 1, 2, 4, ... units in the last place, and by
  // relative steps, both ways (the real scenario often sits on the decision boundary).
  for (std::size_t i = 0; i < p_.inputs.size(); ++i) {
    if (p_.inputs[i].value || p_.inputs[i].decl->type != InputType::Real) continue;
    for (const F dir : {std::numeric_limits<F>::infinity(), -std::numeric_limits<F>::infinity()}) {
      F v = base[i];
      for (int k = 0; k < 12; ++k) {
        for (int u = 0; u < (1 << k) - (k == 0 ? 0 : (1 << (k - 1))); ++u) v = std::nextafter(v, dir);
        candidates.push_back(base);
        candidates.back()[i] = v;
      }
      for (const F rel : {F(1e-6), F(1e-4), F(1e-2)}) {
        candidates.push_back(base);
        const F step = std::max(std::abs(base[i]) * rel, rel);
        candidates.back()[i] = base[i] + (dir > 0 ? step : -step);
      }
    }
  }
  for (const std::vector<F>& xc : candidates) {
    C c;
    std::optional<ModelValues<C>> mv;
    try {
      mv = ModelInterpreter<C>(*subject_.model, c, {.outputs = p_.needs_outputs}).run(xc);
    } catch (const Error&) {
      continue;
    }
    if (!scenario_holds<C>(c, xc, *mv)) continue;
    a.answer = q_.kind == QueryKind::Might;
    for (std::size_t i = 0; i < p_.inputs.size(); ++i) {
      a.scenario.push_back(scenario_value(p_.inputs[i].decl->name, xc[i], p_.inputs[i].decl->type == InputType::Bool));
      a.scenario.back().free = !p_.inputs[i].value;
    }
    replay<C>(a, xc);
    const std::string how =
        fmt::format("found at the real-semantics scenario{}, checked exactly in {} (no float solver needed)",
                    xc == base ? "" : " moved slightly", to_string(q_.semantics));
    note_before(a, how);
    return true;
  }
  return false;
}
template bool QueryRun::scenario_from_real<FloatDomain<double>>(QueryAnswer& a);
template bool QueryRun::scenario_from_real<FloatDomain<float>>(QueryAnswer& a);

template <typename S>
z3::model QueryRun::nearest(S& d, z3::solver& s, const std::vector<typename S::Num>& x, z3::model m, QueryAnswer& a) {
  z3::context& ctx = s.ctx();
  std::vector<std::size_t> ref;
  for (std::size_t i = 0; i < p_.inputs.size(); ++i) {
    if (!p_.inputs[i].value && p_.inputs[i].logged) ref.push_back(i);
  }
  if (ref.empty()) {
    a.note = "nearest: no free input has a logged value (logged = ...) to measure changes from";
    return m;
  }
  constexpr unsigned kBits = 16;
  z3::expr count = ctx.bv_val(0, kBits);
  auto dist = d.integer(0);
  for (const std::size_t i : ref) {
    const auto logged = d.literal(*p_.inputs[i].logged);
    count = count + z3::ite(d.eq(x[i], logged), ctx.bv_val(0, kBits), ctx.bv_val(1, kBits));
    const auto diff = d.sub(x[i], logged);
    dist = d.add(dist, d.ite(d.lt(diff, d.integer(0)), d.neg(diff), diff));
  }
  for (const auto& c : d.side) s.add(c);  // conditions the distance terms added
  // Improves while the solver finds a better scenario; true when no better one exists.
  auto improve = [&](const auto& better_than_best, const auto& update, int max_steps) {
    for (int step = 0; step < max_steps; ++step) {
      s.push();
      s.add(better_than_best());
      std::string why;
      const z3::check_result r = check(s, why);
      if (r == z3::sat) m = s.get_model();
      s.pop();
      if (r == z3::unsat) return true;
      if (r != z3::sat) return false;
      update();
    }
    return false;
  };
  std::uint64_t changed = m.eval(count, true).get_numeral_uint64();
  const bool fewest = changed == 0 || improve([&] { return z3::ult(count, ctx.bv_val(changed, kBits)); },
                                              [&] { changed = m.eval(count, true).get_numeral_uint64(); },
                                              static_cast<int>(ref.size()));
  s.push();
  s.add(count == ctx.bv_val(changed, kBits));
  auto best = [&] {
    if constexpr (std::is_same_v<S, Z3RealDomain>) {
      bool rounded = false;
      return z3_rational(m.eval(dist, true), rounded).value_or(Rational(0)).to_string();
    } else {
      return fmt::format("{}", d.value_in(m, dist));
    }
  };
  // Bisection between a total known impossible (lo) and the best found, then one check for
  // anything strictly smaller (which proves the best smallest).
  std::string total = best();
  double lo = 0.0;
  constexpr int kSteps = 24;
  int steps = 0;
  bool stopped = false;
  for (; steps < kSteps; ++steps) {
    const double hi = Rational::parse(total).to_double();
    if (!std::isfinite(hi) || hi - lo <= 1e-9 * std::max(1.0, hi)) break;
    const double mid = lo + (hi - lo) / 2;
    s.push();
    s.add(d.le(dist, d.literal(fmt::format("{}", mid))));
    std::string why;
    const z3::check_result r = check(s, why);
    if (r == z3::sat) m = s.get_model();
    s.pop();
    if (r == z3::unknown) {
      stopped = true;
      break;
    }
    if (r == z3::sat) {
      total = best();
    } else {
      lo = mid;
    }
  }
  const bool smallest = !stopped && improve([&] { return d.lt(dist, d.literal(total)); }, [&] { total = best(); }, 8);
  s.pop();
  a.changed_inputs = static_cast<int>(changed);
  a.nearest_proven = fewest && smallest;
  a.note = fmt::format(
      "nearest the logged facts: {} of {} logged inputs changed ({}), total change {:.12g} ({})", changed, ref.size(),
      fewest ? "fewest possible" : "the search for fewer stopped", Rational::parse(total).to_double(),
      smallest ? "smallest possible"
               : fmt::format("within {:.3g} of the smallest{}", Rational::parse(total).to_double() - lo,
                             stopped ? "; the search stopped at the time limit" : ""));
  return m;
}
template z3::model QueryRun::nearest<Z3RealDomain>(Z3RealDomain& d, z3::solver& s,
                                                   const std::vector<typename Z3RealDomain::Num>& x, z3::model m,
                                                   QueryAnswer& a);
template z3::model QueryRun::nearest<Z3FloatDomain>(Z3FloatDomain& d, z3::solver& s,
                                                    const std::vector<typename Z3FloatDomain::Num>& x, z3::model m,
                                                    QueryAnswer& a);

}  // namespace witness::query_internal
