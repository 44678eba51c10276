// Exact solver terms (solver/term.h) as a domain of the model interpreter (model/interpreter.h):
// node values as linear terms with ite sub-terms, over the Terms given for the model inputs.
// symbolic/network_encoding builds the smt engine's encoding with it.
//
//   const witness::Model model = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   witness::TermDomain d;
//   std::vector<witness::Term> x;
//   for (int i = 0; i < model.input_width(); ++i) x.push_back(witness::Term::var(i));
//   witness::ModelInterpreter<witness::TermDomain> run(model, d, {.node = model.rule.node});
//   const std::vector<witness::Term> z = run.node_values(x);  // exact; ReLU as ite
//
// Linear arithmetic only: a product of two unknowns, a division by an unknown or by zero, and a
// side condition that is not constant true (a lookup's index range) throw DomainLimit.
#pragma once

#include <cmath>
#include <string>

#include "model/interpreter.h"
#include "solver/rational.h"
#include "solver/term.h"

namespace witness {

struct TermDomain {
  using Num = Term;
  using Bool = Constraint;

  static Num literal(const std::string& text) { return Rational::parse(text); }
  static Num weight(double w) { return Rational::from_double(w); }
  static Num integer(long k) { return Rational(k); }
  static Num add(Num a, const Num& b) { return a += b; }
  static Num sub(Num a, const Num& b) { return a -= b; }
  static Num mul(const Num& a, const Num& b) {
    if (a.is_constant()) return b * a.constant();
    if (b.is_constant()) return a * b.constant();
    throw DomainLimit{
        "multiplies two values that depend on the input (an exact linear encoding needs a "
        "constant factor)"};
  }
  static Num div(const Num& a, const Num& b) {
    if (!b.is_constant()) {
      throw DomainLimit{
          "divides by a value that depends on the input (an exact linear encoding needs a constant "
          "divisor)"};
    }
    if (b.constant().sign() == 0) throw DomainLimit{"divides by zero"};
    return a * (Rational(1) / b.constant());
  }
  static Num neg(const Num& a) { return -a; }
  static Bool lt(const Num& a, const Num& b) { return witness::lt(a, b); }
  static Bool le(const Num& a, const Num& b) { return witness::le(a, b); }
  static Bool eq(const Num& a, const Num& b) { return witness::eq(a, b); }
  static Bool and_(const Bool& a, const Bool& b) { return conjunction({a, b}); }
  static Bool or_(const Bool& a, const Bool& b) { return disjunction({a, b}); }
  static Bool not_(const Bool& a) { return negation(a); }
  static Bool truth(bool b) { return Constraint::constant(b); }
  static Num ite(const Bool& c, const Num& a, const Num& b) { return witness::ite(c, a, b); }
  static Bool ite_bool(const Bool& c, const Bool& a, const Bool& b) {
    return disjunction({conjunction({c, a}), conjunction({negation(c), b})});
  }
  static Bool is_nan(const Num& /*a*/) { return Constraint::constant(false); }  // reals have no NaN
  static Num round_half_away(const Num& a) {
    if (a.is_constant()) return Rational(static_cast<long>(std::llround(a.constant().to_double())));
    throw DomainLimit{"rounds a value that depends on the input to a class index (not linear)"};
  }
  static Bool above_double(const Num& v, double t) { return witness::gt(v, Rational::from_double(t)); }

  // Terms carry no side conditions: one that is not constant true cannot be kept.
  static void require(const Bool& c) {
    if (c.kind() != Constraint::Kind::True) {
      throw DomainLimit{
          "has a condition on its input (a table index in range) that an exact term encoding cannot "
          "carry"};
    }
  }
  [[nodiscard]] static std::size_t mark() { return 0; }
  static Bool take_side(std::size_t /*mark*/) { return Constraint::constant(true); }
};

}  // namespace witness
