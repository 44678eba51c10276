// Solver-independent terms and constraints: exact linear expressions over solver variables,
// if-then-else terms, and Boolean combinations of comparisons. Plain values, cheap to copy
// (sub-terms are shared), so one encoding can be asserted into any backend.
//
//   const int x = 0;                                          // a variable id, as Solver::real_var returns
//   witness::Term pre = witness::Rational::from_double(0.5) * witness::Term::var(x) - 1;
//   witness::Term relu = witness::ite(witness::gt(pre, 0), pre, 0);     // exact ReLU
//   witness::Constraint c = witness::conjunction({witness::ge(relu, 2), witness::ne(pre, 5)});
//   bool holds = witness::evaluate(c, [](int) { return witness::Rational(8); });  // x = 8: true
#pragma once

#include <concepts>
#include <functional>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "solver/rational.h"

namespace witness {

class Constraint;
struct TermNode;
struct ConstraintNode;

// sum coeff_i * var_i + sum coeff_j * node_j + constant, where nodes are non-linear sub-terms
// (today ite; mul and div have room in TermNode::Kind).
class Term {
 public:
  Term() = default;         // 0
  Term(Rational constant);  // NOLINT(google-explicit-constructor)
  template <std::integral T>
  requires(!std::same_as<T, bool>) Term(T constant)
      : Term(Rational(constant)) {}                             // NOLINT(google-explicit-constructor)
  static Term var(int id);                                      // 1 * var
  static Term from_node(std::shared_ptr<const TermNode> node);  // 1 * node (see ite())

  Term& operator+=(const Term& o);
  Term& operator-=(const Term& o);
  Term& operator*=(const Rational& k);
  friend Term operator+(Term a, const Term& b) { return a += b; }
  friend Term operator-(Term a, const Term& b) { return a -= b; }
  friend Term operator-(Term a) { return a *= Rational(-1); }
  friend Term operator*(Term a, const Rational& k) { return a *= k; }
  friend Term operator*(const Rational& k, Term a) { return a *= k; }

  // Inspection, for backends and evaluators. Coefficients are never zero.
  [[nodiscard]] const std::map<int, Rational>& vars() const { return vars_; }
  [[nodiscard]] const std::vector<std::pair<Rational, std::shared_ptr<const TermNode>>>& nodes() const {
    return nodes_;
  }
  [[nodiscard]] const Rational& constant() const { return constant_; }
  [[nodiscard]] bool is_linear() const { return nodes_.empty(); }
  [[nodiscard]] bool is_constant() const { return vars_.empty() && nodes_.empty(); }

 private:
  std::map<int, Rational> vars_;
  std::vector<std::pair<Rational, std::shared_ptr<const TermNode>>> nodes_;
  Rational constant_;
};

// A Boolean formula over comparisons of terms. Default: true.
class Constraint {
 public:
  enum class Kind { True, False, Le, Lt, Eq, Not, And, Or };  // Le/Lt/Eq: term() <=, <, = 0

  Constraint();
  static Constraint constant(bool value);

  [[nodiscard]] Kind kind() const;
  [[nodiscard]] const Term& term() const;                                   // Le, Lt, Eq
  [[nodiscard]] const std::vector<Constraint>& args() const;                // Not (one), And, Or
  [[nodiscard]] const ConstraintNode* node() const { return node_.get(); }  // identity, for memoising

 private:
  friend struct ConstraintBuilder;
  explicit Constraint(std::shared_ptr<const ConstraintNode> node) : node_(std::move(node)) {}
  std::shared_ptr<const ConstraintNode> node_;
};

struct TermNode {
  enum class Kind { Ite };
  Kind kind = Kind::Ite;
  std::vector<Constraint> conditions;  // Ite: one
  std::vector<Term> args;              // Ite: then, else
};

struct ConstraintNode {
  Constraint::Kind kind = Constraint::Kind::True;
  Term term;
  std::vector<Constraint> args;
};

// Comparisons. Comparisons of constants fold to true/false.
Constraint le(const Term& a, const Term& b);
Constraint lt(const Term& a, const Term& b);
Constraint ge(const Term& a, const Term& b);
Constraint gt(const Term& a, const Term& b);
Constraint eq(const Term& a, const Term& b);
Constraint ne(const Term& a, const Term& b);
// Boolean structure; nested and/or are flattened, constants folded (empty and = true, empty or = false).
Constraint conjunction(const std::vector<Constraint>& cs);
Constraint disjunction(const std::vector<Constraint>& cs);
Constraint negation(const Constraint& c);  // not(a <= b) becomes b < a: stays linear
Constraint implies(const Constraint& a, const Constraint& b);
// if c then a else b, as a term: ReLU is ite(gt(x, 0), x, 0).
Term ite(const Constraint& c, const Term& a, const Term& b);

// Exact evaluation under an assignment of the variables (shared sub-terms are evaluated once).
Rational evaluate(const Term& t, const std::function<Rational(int)>& value_of);
bool evaluate(const Constraint& c, const std::function<Rational(int)>& value_of);

}  // namespace witness
