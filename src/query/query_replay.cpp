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
bool QueryRun::inputs_declared(C& c, const std::vector<typename C::Num>& xc) const {
  bool ok = true;
  for (std::size_t i = 0; i < p_.inputs.size(); ++i) {
    ok = ok && declared(c, p_.inputs[i], xc[i]);
    if (p_.inputs[i].decl->type != InputType::Real) ok = ok && C::round_half_away(xc[i]) == xc[i];
  }
  return ok;
}
template bool QueryRun::inputs_declared<ExactDomain>(ExactDomain& c,
                                                     const std::vector<typename ExactDomain::Num>& xc) const;
template bool QueryRun::inputs_declared<FloatDomain<double>>(
    FloatDomain<double>& c, const std::vector<typename FloatDomain<double>::Num>& xc) const;
template bool QueryRun::inputs_declared<FloatDomain<float>>(
    FloatDomain<float>& c, const std::vector<typename FloatDomain<float>::Num>& xc) const;

template <typename C>
bool QueryRun::scenario_holds(C& c, const std::vector<typename C::Num>& xc, const ModelValues<C>& mv) const {
  if constexpr (!std::is_same_v<C, ExactDomain>) {
    if (!std::all_of(xc.begin(), xc.end(), [](auto v) { return std::isfinite(v); })) return false;
  }
  return inputs_declared(c, xc) && premise(c, p_, xc, mv) && c.defined() &&
         evaluate_condition(p_.behavior, c, xc, mv) == (q_.kind == QueryKind::Might);
}
template bool QueryRun::scenario_holds<ExactDomain>(ExactDomain& c, const std::vector<typename ExactDomain::Num>& xc,
                                                    const ModelValues<ExactDomain>& mv) const;
template bool QueryRun::scenario_holds<FloatDomain<double>>(FloatDomain<double>& c,
                                                            const std::vector<typename FloatDomain<double>::Num>& xc,
                                                            const ModelValues<FloatDomain<double>>& mv) const;
template bool QueryRun::scenario_holds<FloatDomain<float>>(FloatDomain<float>& c,
                                                           const std::vector<typename FloatDomain<float>::Num>& xc,
                                                           const ModelValues<FloatDomain<float>>& mv) const;

template <typename C>
void QueryRun::check_scenario(C& c, const std::vector<typename C::Num>& xc, const ModelValues<C>& mv) const {
  const bool inputs_ok = inputs_declared(c, xc);
  const bool pre = premise(c, p_, xc, mv);
  const bool defined = c.defined();  // the model's own side conditions
  const bool behavior = evaluate_condition(p_.behavior, c, xc, mv);
  const bool want = q_.kind == QueryKind::Might;
  if (!inputs_ok || !pre || !defined || behavior != want) {
    throw InternalError(fmt::format(
        "{}: the solver's scenario failed its replay (inputs in range: {}, premise: {}, defined: {}, behavior: {})",
        q_.where, inputs_ok, pre, defined, behavior));
  }
}
template void QueryRun::check_scenario<ExactDomain>(ExactDomain& c, const std::vector<typename ExactDomain::Num>& xc,
                                                    const ModelValues<ExactDomain>& mv) const;
template void QueryRun::check_scenario<FloatDomain<double>>(FloatDomain<double>& c,
                                                            const std::vector<typename FloatDomain<double>::Num>& xc,
                                                            const ModelValues<FloatDomain<double>>& mv) const;
template void QueryRun::check_scenario<FloatDomain<float>>(FloatDomain<float>& c,
                                                           const std::vector<typename FloatDomain<float>::Num>& xc,
                                                           const ModelValues<FloatDomain<float>>& mv) const;

template <typename C>
void QueryRun::replay(QueryAnswer& a, const std::vector<typename C::Num>& xc) {
  const Model& model = *subject_.model;
  C c;
  ModelInterpreter<C> interpreter(model, c, {.outputs = p_.needs_outputs});
  const ModelValues<C> mv = interpreter.run(xc);
  check_scenario<C>(c, xc, mv);
  a.label = label_of(mv.label);
  const int label = *a.label;
  if (label >= 0 && static_cast<std::size_t>(label) < model.rule.class_labels.size()) {
    a.label_name = model.rule.class_labels[static_cast<std::size_t>(label)];
  }
  Eigen::MatrixXd col(static_cast<Eigen::Index>(xc.size()), 1);
  for (std::size_t i = 0; i < xc.size(); ++i) col(static_cast<Eigen::Index>(i), 0) = a.scenario[i].number;
  Evaluation ev;
  try {
    ev = evaluate(model, col, q_.semantics == Semantics::Float32 ? Precision::Float32 : Precision::Float64);
  } catch (const InputError& e) {
    // The evaluator also computes outputs the decision does not read; one of them may be
    // outside its domain (a lookup beyond its table) while the decision is well defined.
    a.note =
        fmt::format("the library evaluator cannot run this scenario ({}); the decision was replayed exactly", e.what());
    return;
  }
  a.evaluator_label = ev.labels[0];
  for (Eigen::Index o = 0; o < ev.outputs.rows(); ++o) {
    ScenarioValue s;
    s.name = model.output_names[static_cast<std::size_t>(o)];
    s.number = ev.outputs(o, 0);
    s.text = q_.semantics == Semantics::Float32 ? shortest(static_cast<float>(s.number)) : shortest(s.number);
    a.outputs.push_back(s);
  }
  if (*a.evaluator_label != label) {
    a.note = fmt::format(
        "the library evaluator ({}) labels this scenario {}, not {}: it sits on a decision boundary where {}",
        q_.semantics == Semantics::Float32 ? "float32" : "float64", *a.evaluator_label, label,
        q_.semantics == Semantics::Real ? "rounding to double changes the decision"
                                        : "the evaluator's summation order rounds differently");
  }
}
template void QueryRun::replay<ExactDomain>(QueryAnswer& a, const std::vector<typename ExactDomain::Num>& xc);
template void QueryRun::replay<FloatDomain<double>>(QueryAnswer& a,
                                                    const std::vector<typename FloatDomain<double>::Num>& xc);
template void QueryRun::replay<FloatDomain<float>>(QueryAnswer& a,
                                                   const std::vector<typename FloatDomain<float>::Num>& xc);

}  // namespace witness::query_internal
