#include "solver/term.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"

namespace witness {
namespace {

std::function<Rational(int)> assign(std::vector<Rational> values) {
  return [values = std::move(values)](int id) { return values.at(static_cast<std::size_t>(id)); };
}

TEST(Term, LinearArithmeticMergesAndDropsZeros) {
  const Term x = Term::var(0);
  const Term y = Term::var(1);
  Term t = 2 * x + Rational(1, 2) * y - 3;
  t -= x * 2;
  EXPECT_EQ(t.vars().size(), 1u);
  EXPECT_EQ(t.vars().at(1), Rational(1, 2));
  EXPECT_EQ(t.constant(), Rational(-3));
  EXPECT_TRUE(t.is_linear());
  EXPECT_FALSE(t.is_constant());
  EXPECT_TRUE((t * 0).is_constant());
  EXPECT_EQ(evaluate(t, assign({5, 4})), Rational(-1));
  EXPECT_EQ(evaluate(-t, assign({5, 4})), Rational(1));
  EXPECT_THROW(Term::var(-1), InternalError);
}

TEST(Term, ConstantComparisonsFold) {
  EXPECT_EQ(le(1, 2).kind(), Constraint::Kind::True);
  EXPECT_EQ(lt(2, 2).kind(), Constraint::Kind::False);
  EXPECT_EQ(ge(Rational(1, 3), Rational(1, 3)).kind(), Constraint::Kind::True);
  EXPECT_EQ(gt(Rational(1, 3), Rational(1, 3)).kind(), Constraint::Kind::False);
  EXPECT_EQ(eq(0, 0).kind(), Constraint::Kind::True);
  EXPECT_EQ(ne(0, 0).kind(), Constraint::Kind::False);
  const Term x = Term::var(0);
  EXPECT_EQ(le(x - x, 0).kind(), Constraint::Kind::True);
}

TEST(Term, BooleanStructure) {
  const Term x = Term::var(0);
  const Constraint a = le(x, 3);
  const Constraint b = ge(x, 1);
  EXPECT_EQ(conjunction({}).kind(), Constraint::Kind::True);
  EXPECT_EQ(disjunction({}).kind(), Constraint::Kind::False);
  EXPECT_EQ(conjunction({a}).node(), a.node());
  EXPECT_EQ(conjunction({a, Constraint::constant(false)}).kind(), Constraint::Kind::False);
  EXPECT_EQ(disjunction({a, Constraint::constant(true)}).kind(), Constraint::Kind::True);
  const Constraint nested = conjunction({conjunction({a, b}), conjunction({a, Constraint()})});
  EXPECT_EQ(nested.kind(), Constraint::Kind::And);
  EXPECT_EQ(nested.args().size(), 3u);  // flattened, true dropped
  EXPECT_EQ(negation(negation(ne(x, 2))).kind(), Constraint::Kind::Not);
  EXPECT_EQ(negation(a).kind(), Constraint::Kind::Lt);  // not(x <= 3) is 3 < x

  for (int v = -2; v <= 6; ++v) {
    const auto at = assign({v});
    SCOPED_TRACE(v);
    EXPECT_EQ(evaluate(a, at), v <= 3);
    EXPECT_EQ(evaluate(negation(a), at), v > 3);
    EXPECT_EQ(evaluate(lt(x, 3), at), v < 3);
    EXPECT_EQ(evaluate(negation(lt(x, 3)), at), v >= 3);
    EXPECT_EQ(evaluate(gt(x, 3), at), v > 3);
    EXPECT_EQ(evaluate(eq(x, 3), at), v == 3);
    EXPECT_EQ(evaluate(ne(x, 3), at), v != 3);
    EXPECT_EQ(evaluate(conjunction({a, b}), at), v >= 1 && v <= 3);
    EXPECT_EQ(evaluate(disjunction({negation(a), negation(b)}), at), v < 1 || v > 3);
    EXPECT_EQ(evaluate(implies(b, a), at), v < 1 || v <= 3);
    EXPECT_EQ(evaluate(negation(conjunction({a, b})), at), !(v >= 1 && v <= 3));
  }
}

TEST(Term, IteIsExactRelu) {
  const Term x = Term::var(0);
  const Term pre = Rational(1, 3) * x - Rational(1, 7);
  const Term relu = ite(gt(pre, 0), pre, 0);
  EXPECT_FALSE(relu.is_linear());
  for (const Rational& v : {Rational(-1), Rational(0), Rational(3, 7), Rational(2, 7), Rational(5)}) {
    const Rational p = v / 3 - Rational(1, 7);
    EXPECT_EQ(evaluate(relu, assign({v})), p > 0 ? p : Rational(0)) << v;
  }
  EXPECT_EQ(ite(Constraint(), x, 0).vars().size(), 1u);  // constant condition folds
  // relu - relu cancels when the same node is subtracted.
  EXPECT_TRUE((relu - relu).is_constant());
}

// A deep chain of shared ReLUs must evaluate in linear time (each node once).
TEST(Term, SharedNodesEvaluateOnce) {
  Term h = Term::var(0);
  for (int layer = 0; layer < 200; ++layer) {
    const Term pre = h * Rational(1, 2) + 1;
    h = ite(gt(pre, 0), pre, 0) + ite(gt(pre, 0), pre, 0) - ite(ge(pre, 0), pre, 0);  // = relu(pre)
  }
  // h_{k+1} = h_k / 2 + 1 from h_0 = 0 converges towards 2.
  const Rational v = evaluate(h, assign({0}));
  EXPECT_GT(v, Rational(199, 100));
  EXPECT_LT(v, Rational(2));
}

TEST(Term, HeaderExample) {
  const int x = 0;
  witness::Term pre = witness::Rational::from_double(0.5) * witness::Term::var(x) - 1;
  witness::Term relu = witness::ite(witness::gt(pre, 0), pre, 0);
  witness::Constraint c = witness::conjunction({witness::ge(relu, 2), witness::ne(pre, 5)});
  EXPECT_TRUE(witness::evaluate(c, [](int) { return witness::Rational(8); }));
  EXPECT_FALSE(witness::evaluate(c, [](int) { return witness::Rational(12); }));  // pre = 5
}

}  // namespace
}  // namespace witness
