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
bool QueryRun::enumerate(QueryAnswer& a) {
  const auto max_cases = static_cast<long long>(options_.enumerate_cases);
  if (subject_.model == nullptr || max_cases <= 0) return false;
  std::vector<std::vector<typename C::Num>> choices;
  long long cases = 1;
  for (const PreparedInput& pi : p_.inputs) {
    std::vector<typename C::Num> values;
    if (pi.value) {
      values.push_back(C::literal(*pi.value));
    } else if (!pi.values.empty()) {
      for (const std::string& v : pi.values) values.push_back(C::literal(v));
    } else if (pi.decl->type == InputType::Bool) {
      values = {C::integer(0), C::integer(1)};
    } else if (pi.decl->type == InputType::Int && pi.min && pi.max) {
      const Rational lo = Rational::parse(*pi.min), hi = Rational::parse(*pi.max);
      if (hi - lo >= Rational(max_cases)) return false;
      for (std::int64_t k = lo.to_int64(); k <= hi.to_int64(); ++k) values.push_back(C::integer(static_cast<long>(k)));
    } else {
      return false;
    }
    if (values.empty()) return false;
    cases *= static_cast<long long>(values.size());
    if (cases > max_cases) return false;
    choices.push_back(std::move(values));
  }
  if (cases <= 1) return false;  // nothing free: the solver's path says so as well
  std::vector<std::size_t> ref;  // free inputs with a logged value (nearest)
  for (std::size_t i = 0; i < p_.inputs.size(); ++i) {
    if (!p_.inputs[i].value && p_.inputs[i].logged) ref.push_back(i);
  }
  C c;
  ModelInterpreter<C> interpreter(*subject_.model, c, {.outputs = p_.needs_outputs});
  std::vector<std::size_t> at(choices.size(), 0);
  std::vector<typename C::Num> xc(choices.size());
  std::optional<std::vector<typename C::Num>> best;
  std::size_t best_changed = 0;
  Rational best_total;
  bool premise_met = false;
  for (bool more = true; more;) {
    for (std::size_t i = 0; i < choices.size(); ++i) xc[i] = choices[i][at[i]];
    c.side.clear();
    const ModelValues<C> mv = interpreter.run(xc);
    if (inputs_declared(c, xc) && premise(c, p_, xc, mv) && c.defined()) {
      premise_met = true;
      if (evaluate_condition(p_.behavior, c, xc, mv) == (q_.kind == QueryKind::Might)) {
        std::size_t changed = 0;
        Rational total;
        for (const std::size_t i : ref) {
          const Rational diff = exact_of(xc[i]) - Rational::parse(*p_.inputs[i].logged);
          changed += diff.sign() != 0 ? 1 : 0;
          total = total + diff.abs();
        }
        if (!best || changed < best_changed || (changed == best_changed && total < best_total)) {
          best = xc;
          best_changed = changed;
          best_total = total;
        }
        if (!q_.nearest) break;
      }
    }
    if ((options_.cancel != nullptr && options_.cancel->load()) ||
        (options_.time_limit > 0 &&
         std::chrono::duration<double>(Clock::now() - start_).count() > options_.time_limit)) {
      a.status = QueryAnswer::Status::Unknown;
      a.reason_unknown = options_.cancel != nullptr && options_.cancel->load() ? "canceled" : "time limit";
      return true;
    }
    more = false;
    for (std::size_t i = 0; i < at.size() && !more; ++i) {
      if (++at[i] < choices[i].size()) {
        more = true;
      } else {
        at[i] = 0;
      }
    }
  }
  const std::string how = fmt::format("evaluated all {} cases of the free inputs, no solver needed", cases);
  a.answer = best.has_value() == (q_.kind == QueryKind::Might);
  if (!best) {
    a.vacuous = !premise_met;
    a.note = how;
    return true;
  }
  for (std::size_t i = 0; i < p_.inputs.size(); ++i) {
    a.scenario.push_back(
        scenario_value(p_.inputs[i].decl->name, (*best)[i], p_.inputs[i].decl->type == InputType::Bool));
    a.scenario.back().free = !p_.inputs[i].value;
  }
  replay<C>(a, *best);
  if (q_.nearest && !ref.empty()) {
    a.changed_inputs = static_cast<int>(best_changed);
    a.nearest_proven = true;
    const std::string near = fmt::format(
        "nearest the logged facts: {} of {} logged inputs changed (fewest possible), total change {:.12g} "
        "(smallest possible)",
        best_changed, ref.size(), best_total.to_double());
    note_before(a, near);
  }
  note_after(a, how);
  return true;
}
template bool QueryRun::enumerate<ExactDomain>(QueryAnswer& a);
template bool QueryRun::enumerate<FloatDomain<double>>(QueryAnswer& a);
template bool QueryRun::enumerate<FloatDomain<float>>(QueryAnswer& a);

}  // namespace witness::query_internal
