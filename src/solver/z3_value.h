// Exact values out of Z3 models, shared by the Z3 backend and the query layer (which talks to Z3
// directly for its floating-point and non-linear encodings).
//
//   z3::context ctx;
//   z3::solver s(ctx);
//   z3::expr x = ctx.real_const("x");
//   s.add(x * x == 2);
//   s.check();
//   bool rounded = false;
//   std::optional<witness::Rational> r = witness::z3_rational(s.get_model().eval(x, true), rounded);
//   // r: the exact value; rounded: it was an irrational (algebraic) number, given within 1e-30
//   // below (here x = -sqrt(2) or sqrt(2)); nullopt: v is not a numeral (x absent from the model)
#pragma once

#include <z3++.h>

#include <optional>

#include "solver/rational.h"

namespace witness {

std::optional<Rational> z3_rational(z3::expr v, bool& rounded);

}  // namespace witness
