// Exact values out of Z3 models, shared by the Z3 backend and the query layer (which talks to Z3
// directly for its floating-point and non-linear encodings).
//
//   z3::expr v = model.eval(x, true);
//   bool rounded = false;
//   std::optional<witness::Rational> r = witness::z3_rational(v, rounded);
//   // r: the exact value; rounded: it was an irrational (algebraic) number, given within 1e-30
//   // below; nullopt: v is not a numeral (the variable is absent from the model)
#pragma once

#include <z3++.h>

#include <optional>

#include "solver/rational.h"

namespace witness {

std::optional<Rational> z3_rational(z3::expr v, bool& rounded);

}  // namespace witness
