#include "query/query.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <z3++.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "model/columns.h"
#include "query/query_run.h"
#include "solver/exact_domain.h"
#include "solver/z3_check.h"

namespace witness {

const char* to_string(QueryKind k) { return k == QueryKind::Might ? "might" : "would"; }
const char* to_string(Semantics s) {
  switch (s) {
    case Semantics::Real: return "real";
    case Semantics::Float64: return "float64";
    case Semantics::Float32: return "float32";
  }
  return "?";
}
const char* to_string(InputRole r) { return r == InputRole::Environment ? "environment" : "state"; }
const char* to_string(InputType t) {
  switch (t) {
    case InputType::Bool: return "bool";
    case InputType::Int: return "int";
    case InputType::Real: return "real";
  }
  return "?";
}

QueryInput QueryInput::fixed(std::string name, InputRole role, InputType type, std::string value) {
  QueryInput i;
  i.name = std::move(name);
  i.role = role;
  i.type = type;
  i.value = std::move(value);
  return i;
}

QueryInput QueryInput::range(std::string name, InputRole role, InputType type, std::optional<std::string> min,
                             std::optional<std::string> max) {
  QueryInput i;
  i.name = std::move(name);
  i.role = role;
  i.type = type;
  i.min = std::move(min);
  i.max = std::move(max);
  return i;
}

QueryInput QueryInput::one_of(std::string name, InputRole role, InputType type, std::vector<std::string> values) {
  QueryInput i;
  i.name = std::move(name);
  i.role = role;
  i.type = type;
  i.values = std::move(values);
  return i;
}

namespace query_internal {

QueryAnswer QueryRun::run() {
  start_ = Clock::now();
  const auto start = start_;
  QueryAnswer a;
  a.name = q_.name;
  a.kind = q_.kind;
  a.semantics = q_.semantics;
  if (q_.semantics == Semantics::Real) {
    if (!enumerate<ExactDomain>(a) && !tree_boxes<ExactDomain>(a)) solve<Z3RealDomain, ExactDomain>(a);
  } else if (q_.semantics == Semantics::Float64) {
    if (!enumerate<FloatDomain<double>>(a) && !tree_boxes<FloatDomain<double>>(a) &&
        !scenario_from_real<FloatDomain<double>>(a))
      solve<Z3FloatDomain, FloatDomain<double>>(a);
  } else {
    if (!enumerate<FloatDomain<float>>(a) && !tree_boxes<FloatDomain<float>>(a) &&
        !scenario_from_real<FloatDomain<float>>(a))
      solve<Z3FloatDomain, FloatDomain<float>>(a);
  }
  a.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return a;
}

}  // namespace query_internal

namespace {

using query_internal::place;
using query_internal::prepare;
using query_internal::Prepared;
using query_internal::QueryRun;
using query_internal::Subject;
using query_internal::subject_of;

// An unknown answer to `q`, named as the query (what the solver's state no longer says).
QueryAnswer unanswered(const Query& q, std::string reason) {
  QueryAnswer a;
  a.name = q.name;
  a.kind = q.kind;
  a.semantics = q.semantics;
  a.status = QueryAnswer::Status::Unknown;
  a.reason_unknown = std::move(reason);
  return a;
}

QueryAnswer answer(const Subject& subject, const Query& q, const QueryOptions& options) {
  // Z3's memory bound is one for the process: it holds for this query (and any run beside it).
  limit_solver_memory(options.memory_limit_mb);
  const Prepared p = prepare(subject, q);
  try {
    QueryAnswer a = QueryRun(subject, q, options, p).run();
    a.schema_constraints = p.validity.has_value();
    for (const std::string& n : p.notes) query_internal::note_before(a, n);
    return a;
  } catch (const z3::exception& e) {
    // Out of memory (--memory-limit) or interrupted: the query is not answered, the run goes on.
    if (!is_z3_resource_message(e.msg())) throw InternalError(fmt::format("{}: z3: {}", q.where, e.msg()));
    return unanswered(q, e.msg());
  } catch (const std::bad_alloc&) {
    return unanswered(q, "out of memory");
  }
}

// A query over the raw columns of a model that carries its preprocessing, as a query over the
// inputs of raw_input_model: category labels become their codes, a categorical input left free
// ranges over all its codes, and names are the model's (a data column "education-num" is the
// skl2onnx input "education_num").
Query over_codes(const std::vector<RawColumn>& cols, const Query& q) {
  Query out = q;
  for (QueryInput& in : out.inputs) {
    const auto it =
        std::find_if(cols.begin(), cols.end(), [&](const RawColumn& c) { return same_column(in.name, c.name); });
    if (it == cols.end()) continue;  // prepare() names inputs the model does not have
    const std::string at = fmt::format("{}: input '{}'", place(in.where, q.where), in.name);
    in.name = it->name;
    if (!it->categorical) {
      if (in.category) throw InputError(fmt::format("{}: the model reads a number here; declare it int or real", at));
      continue;
    }
    if (!in.category && in.type != InputType::Int) {
      throw InputError(fmt::format("{}: a categorical column ({} categories: {}); declare type = \"category\"", at,
                                   it->categories.size(), fmt::join(it->categories, ", ")));
    }
    auto code = [&](const std::string& text, const char* field) {
      const auto c = std::find(it->categories.begin(), it->categories.end(), text);
      if (c != it->categories.end()) return std::to_string(c - it->categories.begin());
      if (!in.category) return text;  // an int input: codes as given
      throw InputError(fmt::format("{}: {} '{}' is not a category of '{}' ({})", at, field, text, it->name,
                                   fmt::join(it->categories, ", ")));
    };
    if (in.category && (in.min || in.max))
      throw InputError(fmt::format("{}: categories have no min/max; give values = [...] or leave it free", at));
    if (in.value) in.value = code(*in.value, "value");
    if (in.logged) in.logged = code(*in.logged, "logged");
    for (std::string& v : in.values) v = code(v, "values");
    if (!in.value && in.values.empty() && !in.min && !in.max) {
      in.min = "0";
      in.max = std::to_string(it->categories.size() - 1);
    }
    in.type = InputType::Int;
  }
  return out;
}

// The answer in the query's own terms: its names for the inputs, category labels for codes.
void in_query_terms(const std::vector<RawColumn>& cols, const Query& q, QueryAnswer& a) {
  for (ScenarioValue& v : a.scenario) {
    const auto it = std::find_if(cols.begin(), cols.end(), [&](const RawColumn& c) { return c.name == v.name; });
    if (it == cols.end()) continue;
    for (const QueryInput& in : q.inputs) {
      if (same_column(in.name, v.name)) v.name = in.name;
    }
    const double code = v.number;
    if (it->categorical && code >= 0 && code < static_cast<double>(it->categories.size()) && std::floor(code) == code) {
      v.text = it->categories[static_cast<std::size_t>(code)];
      v.exact.clear();
      v.category = true;
    }
  }
}

}  // namespace

QueryAnswer answer_query(const Model& model, const Query& q, const QueryOptions& options) {
  if (model.columns.empty()) return answer(subject_of(model), q, options);
  const Model raw = raw_input_model(model);
  QueryAnswer a = answer(subject_of(raw), over_codes(model.columns, q), options);
  in_query_terms(model.columns, q, a);
  return a;
}

QueryAnswer answer_query(const Program& program, const Query& q, const QueryOptions& options) {
  return answer(subject_of(program, q), q, options);
}

}  // namespace witness
