// A Solver decorator that answers many Sat queries without the exact backend: before each check it
// solves the linear part of the assertions as a floating-point LP (Clp) for a point deep inside
// the feasible region (the largest margin to every inequality), rounds integer variables, and
// checks that point exactly against every assertion. If it holds, check() returns Sat with that
// point as the model; otherwise the inner solver decides. It never answers Unsat by itself, so it
// is exactly as sound as the inner backend.
//
//   auto s = witness::make_solver("lp+z3");           // or witness::with_lp_guess(make_solver("z3"))
//   int x = s->int_var("x", 0, 100);
//   s->assert_(witness::gt(witness::Term::var(x) * witness::Rational(3), 7));
//   s->check();                                         // Sat from the LP guess, no Z3 call
//   std::int64_t g = s->stats().guessed;                // how many checks the guess answered
#pragma once

#include <memory>

#include "solver/solver.h"

namespace witness {

std::unique_ptr<Solver> with_lp_guess(std::unique_ptr<Solver> inner);

}  // namespace witness
