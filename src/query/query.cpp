#include "query/query.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <z3++.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "model/columns.h"
#include "model/evaluator.h"
#include "program/program.h"
#include "query/expression.h"
#include "query/schema_rules.h"
#include "query/semantics.h"
#include "query/tree_query.h"
#include "solver/rational.h"
#include "solver/z3_check.h"
#include "solver/z3_domain.h"
#include "solver/z3_value.h"

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

namespace {

// Thrown by the encoding's poll at the time limit or a cancel: the query is unknown.
struct EncodingStopped {};

using Clock = std::chrono::steady_clock;

std::string place(const std::string& where, const std::string& fallback) { return where.empty() ? fallback : where; }

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

// What a query is asked of: a model, or a program with its inputs.
struct Subject {
  std::string source;
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  const Model* model = nullptr;
  const Program* program = nullptr;
  std::vector<std::size_t> program_input;  // programs: index in program->inputs() of each input
};

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

std::string shortest(double v) { return fmt::format("{}", v); }
std::string shortest(float v) { return fmt::format("{}", v); }

ScenarioValue scenario_value(const std::string& name, const Rational& r, bool is_bool) {
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

int label_of(const Rational& r) { return static_cast<int>(r.to_int64()); }

// A concrete value as the exact rational it is.
Rational exact_of(const Rational& r) { return r; }
template <typename F>
Rational exact_of(F v) {
  return Rational::from_double(static_cast<double>(v));
}
template <typename F>
int label_of(F v) {
  return static_cast<int>(v);
}

class QueryRun {
 public:
  QueryRun(const Subject& subject, const Query& q, const QueryOptions& options, const Prepared& p)
      : subject_(subject), q_(q), options_(options), p_(p) {}

  QueryAnswer run() {
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

 private:
  // When every free input of a model takes few values (categories, bools, short int ranges, value
  // lists) and their combinations are few, the answer comes from evaluating each case in the query's
  // semantics, as a handful of predictions answers "had she been of another race": exact, and
  // without a solver over the whole network. False when the query is not of that kind.
  template <typename C>
  bool enumerate(QueryAnswer& a) {
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
        for (std::int64_t k = lo.to_int64(); k <= hi.to_int64(); ++k)
          values.push_back(C::integer(static_cast<long>(k)));
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
      a.note = a.note.empty() ? near : near + "; " + a.note;
    }
    a.note = a.note.empty() ? how : a.note + "; " + how;
    return true;
  }

  // A tree model's query over a union of boxes, about the label: branch and bound over boxes cut
  // at the trees' thresholds (query/tree_query.h), exact in the query's semantics and much faster
  // than the solver over a large forest. False when it does not apply or runs out of boxes.
  template <typename C>
  bool tree_boxes(QueryAnswer& a) {
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
    a.note = a.note.empty() ? how : a.note + "; " + how;
    return true;
  }

  [[nodiscard]] bool stopped() const {
    return (options_.cancel != nullptr && options_.cancel->load()) ||
           (options_.time_limit > 0 &&
            std::chrono::duration<double>(Clock::now() - start_).count() > options_.time_limit);
  }

  template <typename S>
  S make_domain(z3::context& ctx) const {
    if constexpr (std::is_same_v<S, Z3RealDomain>) {
      return Z3RealDomain(ctx);
    } else {
      return Z3FloatDomain(ctx, q_.semantics == Semantics::Float32, options_.float_cases);
    }
  }

  // The finite values an input may take in float semantics, when few: bools, `values`, and int
  // ranges of at most max_cases integers. Empty otherwise.
  static std::vector<double> finite_values(const PreparedInput& pi, bool single, std::size_t max_cases) {
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
  typename S::Num symbol(S& d, const PreparedInput& pi, z3::context& ctx) const {
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
  void solve(QueryAnswer& a) {
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

  template <typename S>
  ModelValues<S> encode_model(S& d, z3::context& ctx, std::vector<typename S::Num>& x) {
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

  // A program input's term of its own type, seen as a number of the query's domain S.
  template <typename S>
  typename S::Num query_view(S& d, const ProgramInput& in, const z3::expr& t) const {
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

  // A fixed input value as a term of the program input's type.
  z3::expr program_literal(z3::context& ctx, const ProgramInput& in, const std::string& text, bool real) const {
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
  ModelValues<S> encode_program(S& d, z3::context& ctx, std::vector<typename S::Num>& x) {
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

  // Without a scenario, an answer covers only the finished paths: say which cut paths the premise
  // reaches (s holds the side conditions and the premise).
  void report_cuts(z3::solver& s, QueryAnswer& a) const {
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

  // The program ran symbolically to `label` on the scenario: check the query on it, then run the
  // compiled program natively on the same inputs and compare.
  template <typename C>
  void replay_program(QueryAnswer& a, const std::vector<typename C::Num>& xc, const typename C::Num& label,
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

  // The scenario meets the declarations, the premise and the behavior in concrete semantics C.
  // Float semantics, first try: the same query over the reals (linear, fast), then the float
  // points at and around its scenario, each checked exactly in the float semantics. A point that
  // passes is a scenario of the float query; bit-blasting the network's float arithmetic (minutes
  // and gigabytes for a free input into a network) is then not needed. False: no luck, solve.
  template <typename C>
  bool scenario_from_real(QueryAnswer& a) {
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
        a.scenario.push_back(
            scenario_value(p_.inputs[i].decl->name, xc[i], p_.inputs[i].decl->type == InputType::Bool));
        a.scenario.back().free = !p_.inputs[i].value;
      }
      replay<C>(a, xc);
      const std::string how =
          fmt::format("found at the real-semantics scenario{}, checked exactly in {} (no float solver needed)",
                      xc == base ? "" : " moved slightly", to_string(q_.semantics));
      a.note = a.note.empty() ? how : how + "; " + a.note;
      return true;
    }
    return false;
  }

  // The scenario nearest the logged facts, from a first one (m): fewer changed inputs while the
  // solver finds them, then a smaller total change |x - logged|, each step a check for a strictly
  // better scenario. The solver holds the query (premise and behavior).
  template <typename S>
  z3::model nearest(S& d, z3::solver& s, const std::vector<typename S::Num>& x, z3::model m, QueryAnswer& a) {
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

  [[nodiscard]] double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  // The inputs meet their declarations (range, values, integrality).
  template <typename C>
  bool inputs_declared(C& c, const std::vector<typename C::Num>& xc) const {
    bool ok = true;
    for (std::size_t i = 0; i < p_.inputs.size(); ++i) {
      ok = ok && declared(c, p_.inputs[i], xc[i]);
      if (p_.inputs[i].decl->type != InputType::Real) ok = ok && C::round_half_away(xc[i]) == xc[i];
    }
    return ok;
  }

  // A model's scenario in concrete semantics C: finite inputs (as the solver's are) meeting the
  // declarations, the premise and the behavior.
  template <typename C>
  bool scenario_holds(C& c, const std::vector<typename C::Num>& xc, const ModelValues<C>& mv) const {
    if constexpr (!std::is_same_v<C, ExactDomain>) {
      if (!std::all_of(xc.begin(), xc.end(), [](auto v) { return std::isfinite(v); })) return false;
    }
    return inputs_declared(c, xc) && premise(c, p_, xc, mv) && c.defined() &&
           evaluate_condition(p_.behavior, c, xc, mv) == (q_.kind == QueryKind::Might);
  }

  template <typename C>
  void check_scenario(C& c, const std::vector<typename C::Num>& xc, const ModelValues<C>& mv) const {
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

  // Checks the scenario on the concrete semantics (the same rounding as the encoding), then asks
  // the library evaluator (separate code) for its label.
  template <typename C>
  void replay(QueryAnswer& a, const std::vector<typename C::Num>& xc) {
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
      a.note = fmt::format("the library evaluator cannot run this scenario ({}); the decision was replayed exactly",
                           e.what());
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

  static void record_stats(const z3::solver& s, QueryAnswer& a) {
    const z3::stats st = s.statistics();
    for (unsigned i = 0; i < st.size(); ++i) {
      a.solver_stats[st.key(i)] = st.is_uint(i) ? static_cast<double>(st.uint_value(i)) : st.double_value(i);
    }
    a.solver_stats["assertions"] = static_cast<double>(s.assertions().size());
  }

  // Runs one check within what is left of the time limit; Unknown once it has passed.
  z3::check_result check(z3::solver& s, std::string& reason) const {
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
    if (c.result == z3::unknown)
      reason = c.timed_out ? fmt::format("time limit ({} s)", options_.time_limit) : c.reason;
    return c.result;
  }

  const Subject& subject_;
  const Query& q_;
  const QueryOptions& options_;
  const Prepared& p_;
  Clock::time_point start_;
  // Programs: the input terms of the program's own types, the returned value, and the inputs on
  // which no finished path decides (with why).
  std::vector<z3::expr> program_terms_;
  std::optional<z3::expr> program_result_;
  std::optional<z3::expr> program_defined_;
  std::vector<std::pair<z3::expr, std::string>> program_cuts_;
  bool program_timed_out_ = false;
  RetiringContext* retiring_ = nullptr;  // the context of the query being solved (solve())
};

}  // namespace

namespace {

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
    for (const std::string& n : p.notes) a.note = a.note.empty() ? n : n + "; " + a.note;
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
