// Query expressions evaluated over the domains of the model interpreter (model/interpreter.h):
// concrete (exact rationals, double, float) for replaying scenarios, or symbolic (Z3 terms,
// solver/z3_domain.h) for asking the solver. Writing the semantics once is what makes the replay
// check meaningful: the solver and the replay agree on every rounding step by construction, and
// the replay is then cross-checked against the library Evaluator, which is separate code.
//
//   witness::Model model = witness::load_model("examples/soid/diabetes/diabetes_agent.onnx");
//   witness::ExactDomain d;
//   std::vector<witness::Rational> x(model.input_width(), witness::Rational(1, 2));   // one value per model input
//   witness::ModelInterpreter<witness::ExactDomain> run(model, d, {.outputs = true});
//   auto v = run.run(x);                                       // v.label, v.outputs
//   witness::Expr expr = witness::parse_expression("label == 1", witness::ExprScope{});
//   bool ok = witness::evaluate_condition(expr, d, x, v) && d.defined();
#pragma once

#include <string>
#include <vector>

#include "core/error.h"
#include "model/interpreter.h"
#include "query/expression.h"
#include "solver/exact_domain.h"
#include "solver/rational.h"

namespace witness {

template <typename D>
typename D::Num evaluate_num(const Expr& e, D& d, const std::vector<typename D::Num>& x, const ModelValues<D>& m);

template <typename D>
typename D::Bool evaluate_bool(const Expr& e, D& d, const std::vector<typename D::Num>& x, const ModelValues<D>& m) {
  auto num = [&](std::size_t i) { return evaluate_num(e.args[i], d, x, m); };
  auto boolean = [&](std::size_t i) { return evaluate_bool(e.args[i], d, x, m); };
  switch (e.op) {
    case Expr::Op::Bool: return d.truth(e.index != 0);
    case Expr::Op::Input: return d.eq(x[static_cast<std::size_t>(e.index)], d.integer(1));  // bool inputs are 0/1
    case Expr::Op::Not: return d.not_(boolean(0));
    case Expr::Op::And:
    case Expr::Op::Or: {
      // Defined as C's short-circuit: the right side matters only when the left does not decide.
      const auto mark_a = d.mark();
      const auto a = boolean(0);
      const auto def_a = d.take_side(mark_a);
      const auto mark_b = d.mark();
      const auto b = boolean(1);
      const auto def_b = d.take_side(mark_b);
      const bool is_and = e.op == Expr::Op::And;
      d.require(d.and_(def_a, d.or_(is_and ? d.not_(a) : a, def_b)));
      return is_and ? d.and_(a, b) : d.or_(a, b);
    }
    case Expr::Op::Lt: return d.lt(num(0), num(1));
    case Expr::Op::Le: return d.le(num(0), num(1));
    case Expr::Op::Gt: return d.lt(num(1), num(0));
    case Expr::Op::Ge: return d.le(num(1), num(0));
    case Expr::Op::Eq:
    case Expr::Op::Ne: {
      const auto same = e.args[0].type == ExprType::Bool ? d.ite_bool(boolean(0), boolean(1), d.not_(boolean(1)))
                                                         : d.eq(num(0), num(1));
      return e.op == Expr::Op::Eq ? same : d.not_(same);
    }
    case Expr::Op::In: {  // lo <= x && x <= hi, with the short-circuit definedness of &&
      const auto mark_a = d.mark();
      const auto v = num(0);
      const auto above = d.le(num(1), v);
      const auto def_a = d.take_side(mark_a);
      const auto mark_b = d.mark();
      const auto hi = num(2);
      const auto def_b = d.take_side(mark_b);
      d.require(d.and_(def_a, d.or_(d.not_(above), def_b)));
      return d.and_(above, d.le(v, hi));
    }
    default: break;
  }
  throw InternalError("query: expression is not a condition");
}

// A constraint holds when it is defined (no division by zero over the reals) and true.
template <typename D>
typename D::Bool evaluate_condition(const Expr& e, D& d, const std::vector<typename D::Num>& x,
                                    const ModelValues<D>& m) {
  const auto mark = d.mark();
  const auto v = evaluate_bool(e, d, x, m);
  return d.and_(d.take_side(mark), v);
}

template <typename D>
typename D::Num evaluate_num(const Expr& e, D& d, const std::vector<typename D::Num>& x, const ModelValues<D>& m) {
  auto num = [&](std::size_t i) { return evaluate_num(e.args[i], d, x, m); };
  switch (e.op) {
    case Expr::Op::Number: return d.literal(e.text);
    case Expr::Op::Input: return x[static_cast<std::size_t>(e.index)];
    case Expr::Op::Output: return m.outputs[static_cast<std::size_t>(e.index)];
    case Expr::Op::Label: return m.label;
    case Expr::Op::Neg: return d.neg(num(0));
    case Expr::Op::Add: return d.add(num(0), num(1));
    case Expr::Op::Sub: return d.sub(num(0), num(1));
    case Expr::Op::Mul: return d.mul(num(0), num(1));
    case Expr::Op::Div: return d.div(num(0), num(1));
    case Expr::Op::Abs: {  // as C's fabs: abs(-0) is +0
      const auto v = num(0);
      const auto zero = d.integer(0);
      return d.ite(d.lt(v, zero), d.neg(v), d.ite(d.eq(v, zero), zero, v));
    }
    case Expr::Op::Min:
    case Expr::Op::Max: {
      auto best = num(0);
      for (std::size_t i = 1; i < e.args.size(); ++i) {
        const auto v = num(i);
        best = d.ite(e.op == Expr::Op::Min ? d.lt(v, best) : d.lt(best, v), v, best);
      }
      return best;
    }
    default: break;
  }
  throw InternalError("query: expression is not a number");
}

}  // namespace witness
