#include "solver/z3_value.h"

#include <string>

#include "core/error.h"

namespace witness {

std::optional<Rational> z3_rational(z3::expr v, bool& rounded) {
  if (!v.is_numeral() && !v.is_algebraic() && v.is_app() && v.num_args() > 0) v = v.simplify();
  if (v.is_algebraic()) {
    rounded = true;
    v = z3::expr(v.ctx(), Z3_get_algebraic_number_lower(v.ctx(), v, 30));
    v.ctx().check_error();
  }
  if (!v.is_numeral()) return std::nullopt;
  const std::string text = Z3_get_numeral_string(v.ctx(), v);
  v.ctx().check_error();
  try {
    return Rational::parse(text);
  } catch (const InputError&) {
    throw InternalError("z3: model value '" + text + "' is not a rational");
  }
}

}  // namespace witness
