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
bool QueryRun::tree_boxes(QueryAnswer& a) {
  if (subject_.model == nullptr || options_.tree_boxes == 0 || q_.nearest) return false;
  TreeBoxQuery bq;
  bq.might = q_.kind == QueryKind::Might;
  for (const PreparedInput& pi : p_.inputs)
    bq.inputs.push_back({pi.decl->type, pi.value, pi.min, pi.max, pi.values, pi.logged});
  for (const auto* part : {&p_.environment, &p_.state, &p_.validity})
    if (*part) bq.premise.push_back(&**part);
  if (p_.factual) bq.factual = &*p_.factual;
  bq.behavior = &p_.behavior;
  bq.max_boxes = options_.tree_boxes;
  bq.stop = [this] { return stopped(); };
  const TreeBoxResult<C> r = tree_box_query<C>(*subject_.model, bq);
  using Status = typename TreeBoxResult<C>::Status;
  if (r.status == Status::Refused || (r.status == Status::Stopped && r.why == "boxes")) return false;
  if (r.status == Status::Stopped) {
    a.status = QueryAnswer::Status::Unknown;
    a.reason_unknown = options_.cancel != nullptr && options_.cancel->load()
                           ? "canceled"
                           : fmt::format("time limit ({} s)", options_.time_limit);
    return true;
  }
  const std::string how =
      fmt::format("branch and bound over {} boxes cut at the trees' thresholds, no solver needed", r.boxes);
  a.answer = (r.status == Status::Found) == (q_.kind == QueryKind::Might);
  if (r.status == Status::None) {
    a.vacuous = r.premise_empty;
    a.note = how;
    return true;
  }
  for (std::size_t i = 0; i < p_.inputs.size(); ++i) {
    a.scenario.push_back(
        scenario_value(p_.inputs[i].decl->name, r.point[i], p_.inputs[i].decl->type == InputType::Bool));
    a.scenario.back().free = !p_.inputs[i].value;
  }
  replay<C>(a, r.point);
  note_after(a, how);
  return true;
}
template bool QueryRun::tree_boxes<ExactDomain>(QueryAnswer& a);
template bool QueryRun::tree_boxes<FloatDomain<double>>(QueryAnswer& a);
template bool QueryRun::tree_boxes<FloatDomain<float>>(QueryAnswer& a);

}  // namespace witness::query_internal
