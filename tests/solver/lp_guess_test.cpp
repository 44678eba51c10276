#include "solver/lp_guess.h"

#include <gtest/gtest.h>

#include <random>

#include "support/sanitized.h"

namespace witness {
namespace {

// Random systems over a few small integer variables: the LP shortcut must agree with Z3 and with
// enumeration of every point, and its Sat models must satisfy every assertion.
TEST(LpGuess, AgreesWithZ3AndEnumeration) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> coeff(-9, 9);
  std::uniform_int_distribution<int> den(1, 7);
  int guessed = 0;
  int refuted = 0;
  for (int round = 0; round < test::sized(150, 24); ++round) {  // 2 Z3 contexts a round
    const int n = 2 + round % 3;
    const int m = 2 + round % 6;
    std::vector<Constraint> cs;
    for (int i = 0; i < m; ++i) {
      Term t(Rational(coeff(rng), den(rng)));
      for (int v = 0; v < n; ++v) t += Term::var(v) * Rational(coeff(rng), den(rng));
      cs.push_back(round % 2 == 0 ? le(t, 0) : lt(t, 0));
    }
    if (round % 3 == 0) cs.push_back(ne(Term::var(0), Term::var(1)));  // like p != p'
    if (round % 5 == 0) cs.push_back(disjunction({ge(Term::var(0), 3), le(Term::var(1), 1)}));

    auto fast = make_solver("lp+z3");
    auto exact = make_solver("z3");
    for (int v = 0; v < n; ++v) {
      fast->int_var("x" + std::to_string(v), 0, 4);
      exact->int_var("x" + std::to_string(v), 0, 4);
    }
    fast->push();  // the shortcut must see assertions in every scope
    for (const Constraint& c : cs) {
      fast->assert_(c);
      exact->assert_(c);
    }
    bool any = false;
    std::vector<int> x(static_cast<std::size_t>(n), 0);
    for (int code = 0; code < (1 << (3 * n)) && !any; ++code) {
      bool in = true;
      for (int v = 0; v < n; ++v) {
        x[static_cast<std::size_t>(v)] = (code >> (3 * v)) & 7;
        in = in && x[static_cast<std::size_t>(v)] <= 4;
      }
      if (!in) continue;
      bool all = true;
      for (const Constraint& c : cs) {
        all = all && evaluate(c, [&](int v) { return Rational(x[static_cast<std::size_t>(v)]); });
      }
      any = all;
    }
    const CheckResult want = any ? CheckResult::Sat : CheckResult::Unsat;
    ASSERT_EQ(exact->check(), want) << "round " << round;
    ASSERT_EQ(fast->check(), want) << "round " << round;
    if (want == CheckResult::Sat) {
      for (const Constraint& c : cs) EXPECT_TRUE(fast->holds(c)) << "round " << round;
    }
    guessed += static_cast<int>(fast->stats().guessed);
    refuted += static_cast<int>(fast->stats().refuted);
    fast->pop();
  }
  // The shortcut must actually answer some of them, or it is dead code.
  EXPECT_GT(guessed, test::sized(10, 2));
  EXPECT_GT(refuted, test::sized(10, 2));
}

TEST(LpGuess, FallsBackForRealEqualities) {
  auto s = make_solver("lp+z3");
  const int x = s->real_var("x", Rational(0), Rational(10));
  s->assert_(eq(Term::var(x) * Rational(3), Rational(1)));  // x = 1/3: not a double
  ASSERT_EQ(s->check(), CheckResult::Sat);
  EXPECT_EQ(s->value(x), Rational(1, 3));
  EXPECT_EQ(s->backend(), "lp+z3");
}

}  // namespace
}  // namespace witness
