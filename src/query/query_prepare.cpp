#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "core/error.h"
#include "model/evaluator.h"
#include "query/prepared.h"
#include "query/schema_rules.h"
#include "query/semantics.h"
#include "solver/z3_domain.h"

namespace witness::query_internal {
namespace {

// A number or bool of an input declaration, checked and normalised to decimal text.
std::string input_value(const Query& q, const QueryInput& in, const std::string& text, const char* field) {
  const std::string at = fmt::format("{}: input '{}': {}", place(in.where, q.where), in.name, field);
  if (in.type == InputType::Bool) {
    if (text == "true" || text == "1") return "1";
    if (text == "false" || text == "0") return "0";
    throw InputError(fmt::format("{}: '{}' is not a bool (true or false)", at, text));
  }
  Rational r;
  try {
    r = Rational::parse(text);
  } catch (const InputError&) {
    throw InputError(fmt::format("{}: '{}' is not a number", at, text));
  }
  if (in.type == InputType::Int && !r.is_integer()) {
    throw InputError(fmt::format("{}: {} is not an integer, but the input is declared int", at, text));
  }
  if (q.semantics != Semantics::Real) {
    // Float literals are read as C reads them (strtod/strtof): decimals only, and finite.
    if (text.find('/') != std::string::npos) {
      throw InputError(
          fmt::format("{}: {} is a fraction; {} semantics reads decimals (a fraction is exact only in "
                      "real semantics)",
                      at, text, to_string(q.semantics)));
    }
    const bool single = q.semantics == Semantics::Float32;
    if (!std::isfinite(single ? std::strtof(text.c_str(), nullptr) : std::strtod(text.c_str(), nullptr))) {
      throw InputError(fmt::format("{}: {} is beyond the range of {}", at, text, to_string(q.semantics)));
    }
  }
  return text;
}

// Float semantics read a literal as the FloatDomain does. One that overflows to infinity is an
// error (1e400 is no float64); an integer the format cannot hold (16777217 in float32) is noted.
template <typename F>
void check_float_literal(const std::string& text, const std::string& where, const char* format,
                         std::vector<std::string>& notes) {
  const F value = FloatDomain<F>::literal(text);
  if (!std::isfinite(value)) {
    throw InputError(fmt::format("{}: the literal {} is outside the finite {} range (it would read as {})", where, text,
                                 format, value));
  }
  const Rational exact = Rational::parse(text);
  if (exact.is_integer() && Rational::from_double(static_cast<double>(value)) != exact) {
    notes.push_back(fmt::format("{}: the integer {} is {} in {}", where, text, value, format));
  }
}

void check_literals(const Query& q, Prepared& p) {
  if (q.semantics == Semantics::Real) return;
  auto check = [&](const std::string& text, const std::string& where) {
    if (q.semantics == Semantics::Float64) {
      check_float_literal<double>(text, where, "float64", p.notes);
    } else {
      check_float_literal<float>(text, where, "float32", p.notes);
    }
  };
  for (const PreparedInput& pi : p.inputs) {
    const std::string where = fmt::format("{}: input '{}'", place(pi.decl->where, q.where), pi.decl->name);
    for (const auto& v : {pi.value, pi.min, pi.max}) {
      if (v) check(*v, where);
    }
    for (const std::string& v : pi.values) check(v, where);
  }
  const std::pair<const std::optional<Expr>*, const QueryText*> parts[] = {{&p.environment, &q.environment},
                                                                           {&p.state, &q.state},
                                                                           {&p.factual, &q.factual},
                                                                           {&p.validity, &p.validity_text}};
  auto walk = [&](const Expr& root, const QueryText& t) {
    std::vector<const Expr*> stack{&root};
    while (!stack.empty()) {
      const Expr* e = stack.back();
      stack.pop_back();
      if (e->op == Expr::Op::Number) {
        check(e->text, t.column_shift >= 0
                           ? fmt::format("{}, column {}", place(t.where, q.where), t.column_shift + e->column)
                           : place(t.where, q.where));
      }
      for (const Expr& a : e->args) stack.push_back(&a);
    }
  };
  for (const auto& [expr, text] : parts) {
    if (*expr) walk(**expr, *text);
  }
  walk(p.behavior, q.behavior);
}

std::optional<Expr> parse_part(const Query& q, const QueryText& t, const char* field, const ExprScope& scope,
                               bool required) {
  if (t.text.find_first_not_of(" \t\r\n") == std::string::npos) {
    if (required)
      throw InputError(fmt::format("{}: '{}' is missing (an expression over the decision)", q.where, field));
    return std::nullopt;
  }
  try {
    return parse_expression(t.text, scope);
  } catch (const ExprError& e) {
    const std::string where = place(t.where, q.where);
    if (t.column_shift >= 0) {
      throw InputError(fmt::format("{}, column {}: {}: {}", where, t.column_shift + e.column(), field, e.what()));
    }
    throw InputError(fmt::format("{}: {}, column {}: {}", where, field, e.column(), e.what()));
  }
}

}  // namespace

Subject subject_of(const Model& model) {
  return {model.source, model.input_names, model.output_names, &model, nullptr, {}};
}

// A program's inputs are its parameters, and the globals the query declares.
Subject subject_of(const Program& program, const Query& q) {
  Subject s;
  s.source = program.path();
  s.program = &program;
  for (std::size_t i = 0; i < program.inputs().size(); ++i) {
    const ProgramInput& in = program.inputs()[i];
    const bool declared =
        std::any_of(q.inputs.begin(), q.inputs.end(), [&](const QueryInput& d) { return d.name == in.name; });
    if (in.global && !declared) continue;
    s.input_names.push_back(in.name);
    s.program_input.push_back(i);
  }
  return s;
}

namespace {

// The integer range of a program input.
std::pair<Rational, Rational> int_range(const ProgramInput& in) {
  const Rational two(2);
  Rational span(1);
  for (unsigned i = 0; i < in.bits; ++i) span = span * two;
  if (!in.is_signed) return {Rational(0), span - Rational(1)};
  const Rational half = span / two;
  return {-half, half - Rational(1)};
}

// A program's parameter fixes what its declaration may say: bool for bool, int for integers,
// real or int for float/double; integer values must fit the parameter's type.
void check_program_types(const Subject& subject, const Query& q, const Prepared& p) {
  for (std::size_t i = 0; i < p.inputs.size(); ++i) {
    const QueryInput& d = *p.inputs[i].decl;
    const ProgramInput& in = subject.program->inputs()[subject.program_input[i]];
    const char* want = in.kind == ProgramInput::Kind::Bool  ? "bool"
                       : in.kind == ProgramInput::Kind::Int ? "int"
                                                            : "real (or int)";
    const bool ok = in.kind == ProgramInput::Kind::Bool  ? d.type == InputType::Bool
                    : in.kind == ProgramInput::Kind::Int ? d.type == InputType::Int
                                                         : d.type != InputType::Bool;
    if (!ok) {
      throw InputError(fmt::format("{}: input '{}' is declared {}, but the program's {} '{}' is {}; declare it {}",
                                   place(d.where, q.where), d.name, to_string(d.type),
                                   in.global ? "global" : "parameter", in.name, in.type_name, want));
    }
    if (in.kind != ProgramInput::Kind::Int) continue;
    const auto [lo, hi] = int_range(in);
    std::vector<std::string> texts = p.inputs[i].values;
    for (const auto& v : {p.inputs[i].value, p.inputs[i].min, p.inputs[i].max}) {
      if (v) texts.push_back(*v);
    }
    for (const std::string& t : texts) {
      const Rational r = Rational::parse(t);
      if (r < lo || r > hi) {
        throw InputError(fmt::format("{}: input '{}': {} does not fit the program's {} (from {} to {})",
                                     place(d.where, q.where), d.name, t, in.type_name, lo.to_string(), hi.to_string()));
      }
    }
  }
}

// The query's schema constraints over its inputs: each feature they name is read from the input of
// its name, else from the model input at its position; that input holds the feature's raw value.
QueryText schema_condition(const Subject& subject, const Query& q) {
  const Schema schema = q.schema ? *q.schema : load_schema(q.schema_path);
  const std::vector<std::string>& names = subject.input_names;
  std::vector<std::string> input_of(static_cast<std::size_t>(schema.size()));
  for (const int f : schema.constraints().features()) {
    const Feature& feat = schema.feature(f);
    const auto named = [&](const std::string& n) {
      return std::find_if(q.inputs.begin(), q.inputs.end(), [&](const QueryInput& i) { return i.name == n; });
    };
    auto in = named(feat.name);
    if (in == q.inputs.end() && !feat.one_hot && schema.model_width() == static_cast<int>(names.size()))
      in = named(names[static_cast<std::size_t>(feat.model_offset)]);
    if (in == q.inputs.end())
      throw InputError(fmt::format(
          "{}: the constraints name '{}', which is no input of the query, and the schema does not read the model's "
          "inputs in order ({} model inputs, the schema describes {})",
          q.schema_where, feat.name, names.size(), schema.model_width()));
    if (in->category || in->type == InputType::Bool)
      throw InputError(
          fmt::format("{}: input '{}' (feature '{}') is declared {}; the constraints need it as int or "
                      "real, holding the schema's values (codes for categories)",
                      q.schema_where, in->name, feat.name, in->category ? "a category" : "bool"));
    if (feat.one_hot || feat.norm.form != Normalisation::Form::None)
      throw InputError(fmt::format("{}: the schema {} '{}' before the model, so input '{}' is not its raw value",
                                   q.schema_where, feat.one_hot ? "one-hot encodes" : "normalises", feat.name,
                                   in->name));
    input_of[static_cast<std::size_t>(f)] = in->name;
  }
  QueryText t;
  t.text = schema_rules_condition(schema, input_of);
  t.where = q.schema_where;
  return t;
}

// Every model input declared once in [inputs], each declaration checked (one form, ranges in order).
void prepare_inputs(const Subject& subject, const Query& q, Prepared& p) {
  const auto& names = subject.input_names;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), names[i]) !=
        names.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw InputError(fmt::format("{}: the model {} has two inputs named '{}'; a query needs unique input names",
                                   q.where, subject.source, names[i]));
    }
  }
  for (std::size_t i = 0; i < q.inputs.size(); ++i) {
    const QueryInput& in = q.inputs[i];
    if (std::find(names.begin(), names.end(), in.name) == names.end()) {
      std::string all;
      for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
      throw InputError(fmt::format("{}: input '{}' is not an input of the {} {} (its inputs: {})",
                                   place(in.where, q.where), in.name, subject.program ? "program" : "model",
                                   subject.source, all));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (q.inputs[j].name == in.name) {
        throw InputError(fmt::format("{}: input '{}' is declared twice", place(in.where, q.where), in.name));
      }
    }
  }
  std::string missing;
  p.inputs.reserve(names.size());
  for (const auto& n : names) {
    const auto it = std::find_if(q.inputs.begin(), q.inputs.end(), [&](const QueryInput& in) { return in.name == n; });
    if (it == q.inputs.end()) {
      missing += (missing.empty() ? "" : ", ") + n;
      continue;
    }
    PreparedInput pi;
    pi.decl = &*it;
    const int forms = (it->value ? 1 : 0) + (it->min || it->max ? 1 : 0) + (it->values.empty() ? 0 : 1);
    if (forms > 1) {
      throw InputError(fmt::format("{}: input '{}': give either value, or min/max, or values, not several",
                                   place(it->where, q.where), n));
    }
    if (it->value) pi.value = input_value(q, *it, *it->value, "value");
    if (it->min) pi.min = input_value(q, *it, *it->min, "min");
    if (it->max) pi.max = input_value(q, *it, *it->max, "max");
    if (it->logged) pi.logged = input_value(q, *it, *it->logged, "logged");
    if (it->type == InputType::Bool && (pi.min || pi.max)) {
      throw InputError(fmt::format("{}: input '{}': a bool has no min/max; use values = [true, false] or leave it free",
                                   place(it->where, q.where), n));
    }
    if (pi.min && pi.max && Rational::parse(*pi.min) > Rational::parse(*pi.max)) {
      throw InputError(
          fmt::format("{}: input '{}': min {} is above max {}", place(it->where, q.where), n, *pi.min, *pi.max));
    }
    for (const auto& v : it->values) pi.values.push_back(input_value(q, *it, v, "values"));
    p.inputs.push_back(std::move(pi));
  }
  if (!missing.empty()) {
    throw InputError(fmt::format("{}: every model input needs a declaration in [inputs]; missing: {}",
                                 place(q.inputs_where, q.where), missing));
  }
}

// The constraints and the behavior, parsed against the declared inputs and the subject's outputs.
void prepare_conditions(const Subject& subject, const Query& q, Prepared& p) {
  ExprScope scope;
  for (const auto& pi : p.inputs) {
    scope.inputs.push_back({pi.decl->name, pi.decl->type == InputType::Bool ? ExprType::Bool : ExprType::Number});
  }
  if (subject.program != nullptr) check_program_types(subject, q, p);
  scope.outputs = subject.output_names;
  scope.allow_decision = false;
  for (const InputRole role : {InputRole::Environment, InputRole::State}) {
    ExprScope s = scope;
    for (const auto& pi : p.inputs) s.allowed_inputs.push_back(pi.decl->role == role);
    s.allowed_reason =
        fmt::format("is not {} input; the {} constraint may only name {} inputs",
                    role == InputRole::Environment ? "an environment" : "a state", to_string(role), to_string(role));
    auto& slot = role == InputRole::Environment ? p.environment : p.state;
    slot = parse_part(q, role == InputRole::Environment ? q.environment : q.state, to_string(role), s, false);
  }
  p.factual = parse_part(q, q.factual, "factual", scope, false);
  if (q.schema || !q.schema_path.empty()) {
    p.validity_text = schema_condition(subject, q);
    p.validity = parse_part(q, p.validity_text, "schema constraints", scope, false);
  }
  scope.allow_decision = true;
  p.behavior = *parse_part(q, q.behavior, "behavior", scope, true);
  if (!p.behavior.uses_decision) {
    const std::string at = q.behavior.column_shift >= 0 ? fmt::format(", column {}", q.behavior.column_shift + 1) : "";
    throw InputError(fmt::format("{}{}: behavior does not mention the decision (label, output[i] or an output name)",
                                 place(q.behavior.where, q.where), at));
  }
}

}  // namespace

Prepared prepare(const Subject& subject, const Query& q) {
  Prepared p;
  prepare_inputs(subject, q, p);
  prepare_conditions(subject, q, p);
  p.needs_outputs = false;
  // Outputs are encoded only when the behavior reads them (they may need ops the label does not).
  const Expr* first_output = nullptr;
  std::vector<const Expr*> stack{&p.behavior};
  while (!stack.empty()) {
    const Expr* e = stack.back();
    stack.pop_back();
    if (e->op == Expr::Op::Output && (first_output == nullptr || e->column < first_output->column)) first_output = e;
    for (const Expr& a : e->args) stack.push_back(&a);
  }
  p.needs_outputs = first_output != nullptr;
  check_literals(q, p);
  if (p.needs_outputs && subject.model != nullptr) {
    const Model& model = *subject.model;
    // An output without an exact encoding (a sigmoid) is the behavior's problem: say where it reads it.
    FloatDomain<double> d;
    (void)ModelInterpreter<FloatDomain<double>>(model, d, {});  // the decision alone: the model's own error
    try {
      (void)ModelInterpreter<FloatDomain<double>>(model, d, {.outputs = true});
    } catch (const UnsupportedError& e) {
      const std::string at = q.behavior.column_shift >= 0
                                 ? fmt::format(", column {}", q.behavior.column_shift + first_output->column)
                                 : "";
      throw UnsupportedError(fmt::format(
          "{}{}: behavior reads the model's output '{}', which has no exact encoding: {}; "
          "ask about the decision (label) instead",
          place(q.behavior.where, q.where), at,
          first_output->text == "output" ? fmt::format("output[{}]", first_output->index) : first_output->text,
          e.what()));
    }
  }
  return p;
}

}  // namespace witness::query_internal
