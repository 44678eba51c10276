// A narrow interface over exact SMT backends (today Z3), created by name through make_solver().
//
//   auto s = witness::make_solver("z3");
//   int x = s->int_var("x", 0, 10);
//   int y = s->real_var("y", witness::Rational(0));            // y >= 0, no upper bound
//   s->assert_(witness::eq(witness::Term::var(x) + witness::Term::var(y), witness::Rational(7, 2)));
//   if (s->check(1.0) == witness::CheckResult::Sat) {          // at most one second
//     witness::Rational vx = s->value(x);                       // exact model values
//   }
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "solver/rational.h"
#include "solver/term.h"

namespace witness {

enum class CheckResult { Sat, Unsat, Unknown };
const char* to_string(CheckResult r);  // "sat", "unsat", "unknown"

struct SolverStats {
  std::int64_t checks = 0;
  std::int64_t sat = 0;
  std::int64_t unsat = 0;
  std::int64_t unknown = 0;
  double seconds = 0.0;      // wall time spent inside check()
  std::int64_t guessed = 0;  // Sat answers found by a rounded LP point, without the exact backend
  std::int64_t refuted = 0;  // Unsat answers from LP duals checked in exact arithmetic
};

class Solver {
 public:
  virtual ~Solver() = default;
  Solver() = default;
  Solver(const Solver&) = delete;
  Solver& operator=(const Solver&) = delete;

  [[nodiscard]] virtual std::string backend() const = 0;

  // Variables live for the solver's lifetime (also after a pop() below the scope that made them);
  // their bounds always hold. Ids are 0, 1, 2, ... in creation order; names need not be unique.
  virtual int int_var(const std::string& name, std::int64_t lo, std::int64_t hi) = 0;
  virtual int real_var(const std::string& name, std::optional<Rational> lo = std::nullopt,
                       std::optional<Rational> hi = std::nullopt) = 0;
  [[nodiscard]] virtual int num_vars() const = 0;
  [[nodiscard]] virtual bool is_int(int var) const = 0;
  [[nodiscard]] virtual const std::string& var_name(int var) const = 0;

  // Asserts into the current scope. Terms may only name this solver's variables (else InternalError).
  virtual void assert_(const Constraint& c) = 0;
  virtual void push() = 0;
  virtual void pop(int levels = 1) = 0;  // InternalError when popping more than pushed
  [[nodiscard]] virtual int scope_level() const = 0;

  // Unknown on timeout, resource limits or incompleteness; never throws for those.
  // time_limit_seconds <= 0 or infinite means no limit.
  virtual CheckResult check(double time_limit_seconds = 0.0) = 0;
  // Why the last check returned Unknown ("timeout", "canceled", ...); empty otherwise.
  [[nodiscard]] virtual std::string reason_unknown() const = 0;

  // Exact value in the model of the last check, which must have returned Sat (else InternalError).
  [[nodiscard]] virtual Rational value(int var) const = 0;
  [[nodiscard]] Rational value(const Term& t) const;
  [[nodiscard]] bool holds(const Constraint& c) const;  // c evaluated exactly in that model

  [[nodiscard]] virtual const SolverStats& stats() const = 0;
};

// "z3", or "lp+z3" (Z3 behind the LP guess of lp_guess.h). Unknown names: UnsupportedError.
std::unique_ptr<Solver> make_solver(const std::string& backend = "z3");
std::vector<std::string> solver_backends();

}  // namespace witness
