// What a query is, checked and prepared for answering (query.cpp and the strategies of
// query_run.h): its inputs in the subject's order with their values, its conditions parsed, and
// the helpers that turn concrete values into a scenario. Internal to the query layer.
//
//   witness::Model model = witness::load_model("examples/soid/diabetes/diabetes_agent.onnx");
//   witness::Query q;  // inputs, behavior, ... (query.h)
//   const witness::query_internal::Subject s = witness::query_internal::subject_of(model);
//   const witness::query_internal::Prepared p = witness::query_internal::prepare(s, q);
//   const bool fixed = !p.inputs.empty() && p.inputs.front().value.has_value();
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/interpreter.h"
#include "program/program.h"
#include "query/expression.h"
#include "query/query.h"
#include "solver/rational.h"

namespace witness::query_internal {

// Thrown by the encoding's poll at the time limit or a cancel: the query is unknown.
struct EncodingStopped {};

using Clock = std::chrono::steady_clock;

inline std::string place(const std::string& where, const std::string& fallback) {
  return where.empty() ? fallback : where;
}

struct PreparedInput {
  const QueryInput* decl = nullptr;
  std::optional<std::string> value;
  std::optional<std::string> logged;
  std::optional<std::string> min, max;
  std::vector<std::string> values;
};

struct Prepared {
  std::vector<PreparedInput> inputs;  // in model order
  std::optional<Expr> environment, state, factual, validity;
  QueryText validity_text;  // the schema's constraints in the query language
  Expr behavior;
  bool needs_outputs = false;
  std::vector<std::string> notes;  // for the answer's note: literals the float format rounds
};

// What a query is asked of: a model, or a program with its inputs.
struct Subject {
  std::string source;
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  const Model* model = nullptr;
  const Program* program = nullptr;
  std::vector<std::size_t> program_input;  // programs: index in program->inputs() of each input
};

Subject subject_of(const Model& model);
// A program's inputs are its parameters, and the globals the query declares.
Subject subject_of(const Program& program, const Query& q);

// The query checked against its subject: inputs in the subject's order, conditions parsed (errors
// name the query file, line and column).
Prepared prepare(const Subject& subject, const Query& q);

// The declared range of one input, as a condition in domain D.
template <typename D>
typename D::Bool declared(D& d, const PreparedInput& pi, const typename D::Num& x) {
  auto c = d.truth(true);
  if (pi.min) c = d.and_(c, d.le(d.literal(*pi.min), x));
  if (pi.max) c = d.and_(c, d.le(x, d.literal(*pi.max)));
  if (!pi.values.empty()) {
    auto any = d.truth(false);
    for (const auto& v : pi.values) any = d.or_(any, d.eq(x, d.literal(v)));
    c = d.and_(c, any);
  }
  return c;
}

// env and state and the schema's constraints and not factual (the premise); the behavior is added
// by the caller.
template <typename D>
typename D::Bool premise(D& d, const Prepared& p, const std::vector<typename D::Num>& x, const ModelValues<D>& m) {
  auto c = d.truth(true);
  if (p.environment) c = d.and_(c, evaluate_condition(*p.environment, d, x, m));
  if (p.state) c = d.and_(c, evaluate_condition(*p.state, d, x, m));
  if (p.validity) c = d.and_(c, evaluate_condition(*p.validity, d, x, m));
  if (p.factual) c = d.and_(c, d.not_(evaluate_condition(*p.factual, d, x, m)));
  return c;
}

inline std::string shortest(double v) { return fmt::format("{}", v); }
inline std::string shortest(float v) { return fmt::format("{}", v); }

inline ScenarioValue scenario_value(const std::string& name, const Rational& r, bool is_bool) {
  ScenarioValue s;
  s.name = name;
  s.number = r.to_double();
  if (is_bool) {
    s.text = r.sign() != 0 ? "true" : "false";
    return s;
  }
  if (!std::isfinite(s.number) || (r.is_integer() && r.abs() < Rational(std::int64_t{1} << 53))) {
    s.text = r.to_string();  // beyond the double range, or an integer: exact
    return s;
  }
  s.text = shortest(s.number);
  if (Rational::parse(s.text) != r) s.exact = r.to_string();
  return s;
}

template <typename F>
ScenarioValue scenario_value(const std::string& name, F v, bool is_bool) {
  ScenarioValue s;
  s.name = name;
  s.number = static_cast<double>(v);
  s.text = is_bool ? (v != F(0) ? "true" : "false") : shortest(v);
  return s;
}

inline int label_of(const Rational& r) { return static_cast<int>(r.to_int64()); }

// A concrete value as the exact rational it is.
inline Rational exact_of(const Rational& r) { return r; }
template <typename F>
Rational exact_of(F v) {
  return Rational::from_double(static_cast<double>(v));
}
template <typename F>
int label_of(F v) {
  return static_cast<int>(v);
}

}  // namespace witness::query_internal
