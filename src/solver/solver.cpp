#include "solver/solver.h"

#include "core/error.h"
#include "solver/lp_guess.h"

namespace witness {

namespace detail {
std::unique_ptr<Solver> make_z3_solver();  // z3_solver.cpp
}

const char* to_string(CheckResult r) {
  switch (r) {
    case CheckResult::Sat: return "sat";
    case CheckResult::Unsat: return "unsat";
    case CheckResult::Unknown: return "unknown";
  }
  return "unknown";
}

Rational Solver::value(const Term& t) const {
  return evaluate(t, [this](int v) { return value(v); });
}

bool Solver::holds(const Constraint& c) const {
  return evaluate(c, [this](int v) { return value(v); });
}

std::unique_ptr<Solver> make_solver(const std::string& backend) {
  if (backend == "z3") return detail::make_z3_solver();
  if (backend == "lp+z3") return with_lp_guess(detail::make_z3_solver());
  std::string known;
  for (const std::string& b : solver_backends()) known += (known.empty() ? "" : ", ") + b;
  throw UnsupportedError("", "solver backend '" + backend + "'", "not available (known: " + known + ")");
}

std::vector<std::string> solver_backends() { return {"z3", "lp+z3"}; }

}  // namespace witness
