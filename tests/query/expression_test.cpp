#include "query/expression.h"

#include <gtest/gtest.h>

#include "query/semantics.h"

namespace witness {
namespace {

ExprScope scope() {
  ExprScope s;
  s.inputs = {{"x", ExprType::Number}, {"y", ExprType::Number}, {"flag", ExprType::Bool}};
  s.outputs = {"p_low", "p_high"};
  return s;
}

// Evaluates a condition exactly with x, y, flag and a decision (label, outputs).
bool holds(const std::string& text, const std::vector<Rational>& in, int label = 0,
           std::vector<Rational> outputs = {Rational(1, 4), Rational(3, 4)}) {
  ExactDomain d;
  const Expr e = parse_expression(text, scope());
  const ModelValues<ExactDomain> m{std::move(outputs), Rational(label)};
  const bool v = evaluate_condition(e, d, in, m);
  EXPECT_TRUE(d.side.empty()) << text;  // the condition took its own side conditions
  return v;
}

int error_column(const std::string& text, const ExprScope& s = scope()) {
  try {
    parse_expression(text, s);
  } catch (const ExprError& e) {
    return e.column();
  }
  return -1;
}

std::string error_text(const std::string& text, const ExprScope& s = scope()) {
  try {
    parse_expression(text, s);
  } catch (const ExprError& e) {
    return e.what();
  }
  return "";
}

TEST(Expression, PrecedenceAndOperators) {
  const std::vector<Rational> v = {Rational(3), Rational(-2), Rational(1)};
  EXPECT_TRUE(holds("x + y * 2 == -1", v));  // * binds tighter than +
  EXPECT_TRUE(holds("(x + y) * 2 == 2", v));
  EXPECT_TRUE(holds("x - y - 1 == 4", v));    // left associative
  EXPECT_TRUE(holds("x / 2 / 3 == 0.5", v));  // exact: 3/2/3 = 1/2
  EXPECT_TRUE(holds("-x == -3 && - -x == 3", v));
  EXPECT_TRUE(holds("flag && x > 2 || y > 0", v));
  EXPECT_FALSE(holds("flag && (x > 3 || y > 0)", v));
  EXPECT_TRUE(holds("!(x < 3) && !!flag", v));
  EXPECT_TRUE(holds("x in [3, 4] && !(y in [-1, 5])", v));
  EXPECT_TRUE(holds("abs(y) == 2 && min(x, y, 0) == y && max(x, y) == 3", v));
  EXPECT_TRUE(holds("flag == true && flag != false", v));
  EXPECT_TRUE(holds("x != y && x >= 3 && x <= 3", v));
  EXPECT_TRUE(holds("1e-3 * 1000 == 1 && .5 + 0.25 == 0.75 && 2.5E+1 == 25", v));
}

TEST(Expression, NumbersAreExactInRealSemantics) {
  // 0.1 + 0.2 == 0.3 over the rationals, unlike doubles.
  EXPECT_TRUE(holds("0.1 + 0.2 == 0.3", {Rational(0), Rational(0), Rational(0)}));
  ExprScope s = scope();
  const Expr e = parse_expression("0.1 + 0.2 == 0.3", s);
  FloatDomain<double> d;
  const ModelValues<FloatDomain<double>> m{{}, 0.0};
  EXPECT_FALSE(evaluate_bool(e, d, {0.0, 0.0, 0.0}, m));  // as C would compute it
}

TEST(Expression, DecisionAndOutputs) {
  const std::vector<Rational> v = {Rational(0), Rational(0), Rational(0)};
  EXPECT_TRUE(holds("label == 1", v, 1));
  EXPECT_TRUE(holds("output[1] > output[0] && p_high == 0.75 && p_low + p_high == 1", v));
  EXPECT_TRUE(parse_expression("label == 1", scope()).uses_decision);
  EXPECT_FALSE(parse_expression("x == 1", scope()).uses_decision);
}

TEST(Expression, ErrorsPointAtTheColumn) {
  EXPECT_EQ(error_column("wieght > 3"), 1);
  EXPECT_NE(error_text("wieght > 3").find("unknown name 'wieght'"), std::string::npos);
  EXPECT_NE(error_text("wieght > 3").find("inputs: x, y, flag"), std::string::npos);
  EXPECT_EQ(error_column("x > 1 && zz"), 10);
  EXPECT_EQ(error_column("label == = 1"), 10);
  EXPECT_EQ(error_column("label = 1"), 7);
  EXPECT_NE(error_text("label = 1").find("'=='"), std::string::npos);
  EXPECT_EQ(error_column("label <"), 8);
  EXPECT_NE(error_text("label <").find("ends too early"), std::string::npos);
  EXPECT_EQ(error_column("(label == 1"), 12);
  EXPECT_NE(error_text("(label == 1").find("to close the '('"), std::string::npos);
  EXPECT_EQ(error_column("label == 1 1"), 12);
  EXPECT_EQ(error_column("x < 1 < 2"), 7);
  EXPECT_NE(error_text("x < 1 < 2").find("do not chain"), std::string::npos);
  EXPECT_EQ(error_column("3 + flag > 1"), 5);
  EXPECT_NE(error_text("3 + flag > 1").find("needs a number"), std::string::npos);
  EXPECT_EQ(error_column("x + 1"), 3);  // a number is not a constraint
  EXPECT_EQ(error_column("flag == 1"), 6);
  EXPECT_EQ(error_column("output[2] > 0"), 8);
  EXPECT_EQ(error_column("abs(x, y) > 0"), 1);
  EXPECT_EQ(error_column("min(x) > 0"), 1);
  EXPECT_EQ(error_column("x > 1.2.3"), 5);
  EXPECT_EQ(error_column("x > 3a"), 5);
  EXPECT_EQ(error_column("x # 3"), 3);
  EXPECT_EQ(error_column("x & y"), 3);
  EXPECT_EQ(error_column(""), 1);
  EXPECT_EQ(error_column("x in [1 2]"), 9);
  EXPECT_EQ(error_column("x in 1"), 6);
}

TEST(Expression, ScopesRestrictNames) {
  ExprScope s = scope();
  s.allow_decision = false;
  EXPECT_EQ(error_column("x > 0 && label == 1", s), 10);
  EXPECT_NE(error_text("p_high > 0", s).find("only 'behavior'"), std::string::npos);
  s.allowed_inputs = {true, false, true};
  s.allowed_reason = "is not an environment input";
  EXPECT_EQ(error_column("x > 0 && y > 0", s), 10);
  EXPECT_NE(error_text("y > 0", s).find("'y' is not an environment input"), std::string::npos);
}

TEST(Expression, DivisionByZeroMakesAConditionFalseWithCShortCircuit) {
  const std::vector<Rational> v = {Rational(1), Rational(0), Rational(0)};  // y = 0
  EXPECT_FALSE(holds("x / y > 1", v));
  EXPECT_FALSE(holds("!(x / y > 1)", v));  // undefined, not false: its negation does not hold either
  EXPECT_TRUE(holds("y == 0 || x / y > 1", v));
  EXPECT_FALSE(holds("x / y > 1 || y == 0", v));  // the left side is evaluated first, as in C
  EXPECT_FALSE(holds("y != 0 && x / y > 1", v));
  EXPECT_TRUE(holds("!(y != 0 && x / y > 1)", v));
  EXPECT_TRUE(holds("x / 2 == 0.5", v));
  EXPECT_TRUE(holds("!(x in [2, x / y])", v));  // `in` is && : the upper end is not needed
  EXPECT_FALSE(holds("x in [0, x / y]", v));
}

TEST(Expression, AbsOfNegativeZeroIsPositiveAsInC) {
  const Expr e = parse_expression("1 / abs(x) > 0", scope());
  FloatDomain<double> d;
  const ModelValues<FloatDomain<double>> m{{}, 0.0};
  EXPECT_TRUE(evaluate_condition(e, d, {-0.0, 0.0, 0.0}, m));  // 1 / +0 = +inf
}

TEST(Expression, LimitsNestingAndNumberRange) {
  const std::string deep = std::string(5000, '(') + "x > 0" + std::string(5000, ')');
  EXPECT_NE(error_text(deep).find("nested more than 200 levels"), std::string::npos);
  EXPECT_NE(error_text(std::string(100000, '-') + "x > 0").find("nested more than"), std::string::npos);
  EXPECT_EQ(error_column("x < 1e200000"), 5);
  EXPECT_NE(error_text("x < 1e200000").find("exponent out of range"), std::string::npos);
  EXPECT_TRUE(holds(std::string(150, '(') + "x > 0" + std::string(150, ')'), {Rational(1), Rational(0), Rational(0)}));
}

// A chain of operators is a tree as tall as it has terms, and everything that walks the tree
// recurses over it: chains are bounded too (a 100,000-term sum is refused, not copied over and
// over or walked off the end of the stack).
TEST(Expression, LimitsChainsOfOperators) {
  auto chain = [](int terms, const std::string& op) {
    std::string text = "x";
    for (int i = 1; i < terms; ++i) text += op + "x";
    return text;
  };
  EXPECT_NE(error_text(chain(100000, " + ") + " > 0").find("more than 2000 operators deep"), std::string::npos);
  EXPECT_NE(error_text(chain(100000, " > 0 && ") + " > 0").find("more than 2000 operators deep"), std::string::npos);
  const Expr sum = parse_expression(chain(1500, " + ") + " > 1", scope());
  EXPECT_EQ(sum.height, 1501);
  EXPECT_TRUE(holds(chain(1500, " + ") + " > 1", {Rational(1), Rational(0), Rational(0)}));
  EXPECT_FALSE(holds(chain(1500, " + ") + " > 1500", {Rational(1), Rational(0), Rational(0)}));
}

// Names that are not identifiers (adult's hours-per-week) are written in backticks; a quoted name
// is never a keyword, and errors say how to spell such names.
TEST(Expression, BacktickQuotedNames) {
  ExprScope scope;
  scope.inputs = {{"hours-per-week", ExprType::Number}, {"in", ExprType::Number}, {"age", ExprType::Number}};
  const Expr e = parse_expression("`hours-per-week` > 40 && `in` < `age`", scope);
  EXPECT_EQ(e.type, ExprType::Bool);
  try {
    (void)parse_expression("hours > 1", scope);
    ADD_FAILURE() << "no ExprError";
  } catch (const ExprError& err) {
    EXPECT_NE(std::string(err.what()).find("`hours-per-week`, `in`, age"), std::string::npos) << err.what();
  }
  try {
    (void)parse_expression("age + `hours-per", scope);
    ADD_FAILURE() << "no ExprError";
  } catch (const ExprError& err) {
    EXPECT_EQ(err.column(), 7);
    EXPECT_NE(std::string(err.what()).find("unterminated"), std::string::npos) << err.what();
  }
  EXPECT_THROW((void)parse_expression("`` > 1", scope), ExprError);
  EXPECT_THROW((void)parse_expression("`weight` > 1", scope), ExprError);  // unknown, quoted or not
}

}  // namespace
}  // namespace witness
