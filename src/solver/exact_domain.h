// Exact rational arithmetic as a domain of the model interpreter (model/interpreter.h): the
// "real" semantics of queries and the exact replay of scenarios.
//
//   const witness::Model model = witness::load_model("examples/soid/diabetes/diabetes_agent.onnx");
//   witness::ExactDomain d;
//   std::vector<witness::Rational> x(static_cast<std::size_t>(model.input_width()), witness::Rational(1, 2));
//   witness::ModelInterpreter<witness::ExactDomain> run(model, d, {.outputs = true});
//   const auto v = run.run(x);  // v.label, v.outputs, exact; d.defined(): no division by zero
#pragma once

#include <string>

#include "model/interpreter.h"
#include "solver/rational.h"

namespace witness {

struct ExactDomain : ConcreteSide {
  using Num = Rational;
  using Bool = bool;

  static Num literal(const std::string& text) { return Rational::parse(text); }
  static Num weight(double w) { return Rational::from_double(w); }
  static Num integer(long k) { return Rational(k); }
  static Num add(const Num& a, const Num& b) { return a + b; }
  static Num sub(const Num& a, const Num& b) { return a - b; }
  static Num mul(const Num& a, const Num& b) { return a * b; }
  Num div(const Num& a, const Num& b) {
    if (b.sign() == 0) {
      require(false);
      return Rational(0);
    }
    return a / b;
  }
  static Num neg(const Num& a) { return -a; }
  static Bool lt(const Num& a, const Num& b) { return a < b; }
  static Bool le(const Num& a, const Num& b) { return a <= b; }
  static Bool eq(const Num& a, const Num& b) { return a == b; }
  static Bool and_(Bool a, Bool b) { return a && b; }
  static Bool or_(Bool a, Bool b) { return a || b; }
  static Bool not_(Bool a) { return !a; }
  static Bool truth(bool b) { return b; }
  static Num ite(Bool c, const Num& a, const Num& b) { return c ? a : b; }
  static Bool ite_bool(Bool c, Bool a, Bool b) { return c ? a : b; }
  static Bool is_nan(const Num& /*a*/) { return false; }
  static Num round_half_away(const Num& a) {
    const Rational half(1, 2);
    return a.sign() >= 0 ? (a + half).floor() : -((-a + half).floor());
  }
  static Bool above_double(const Num& v, double t) { return v > Rational::from_double(t); }
};

// IEEE arithmetic in F (double or float), as the C++ code of the evaluator runs it.

}  // namespace witness
