#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "core/error.h"
#include "solver/solver.h"

namespace witness {
namespace {

Term v(int id) { return Term::var(id); }

// Asserts every constraint and, on sat, checks the model exactly against all of them.
CheckResult solve(Solver& s, const std::vector<Constraint>& cs, double limit = 10.0) {
  for (const Constraint& c : cs) s.assert_(c);
  const CheckResult r = s.check(limit);
  if (r == CheckResult::Sat) {
    for (const Constraint& c : cs) EXPECT_TRUE(s.holds(c));
  }
  return r;
}

TEST(Z3Solver, UnknownBackendIsUnsupported) {
  EXPECT_THROW(make_solver("cvc9"), UnsupportedError);
  try {
    make_solver("cvc9");
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("z3"), std::string::npos) << e.what();
  }
  EXPECT_EQ(make_solver()->backend(), "z3");
  EXPECT_EQ(solver_backends(), (std::vector<std::string>{"z3", "lp+z3"}));
}

TEST(Z3Solver, SmallLpHasExactOptimumVertex) {
  // x + y <= 1, x - y = 1/3, x, y >= 0, x >= 2/3  ->  x = 2/3, y = 1/3 exactly.
  auto s = make_solver();
  const int x = s->real_var("x", Rational(0));
  const int y = s->real_var("y", Rational(0));
  const std::vector<Constraint> cs = {le(v(x) + v(y), 1), eq(v(x) - v(y), Rational(1, 3)), ge(v(x), Rational(2, 3))};
  ASSERT_EQ(solve(*s, cs), CheckResult::Sat);
  EXPECT_EQ(s->value(x), Rational(2, 3));
  EXPECT_EQ(s->value(y), Rational(1, 3));
  EXPECT_EQ(s->value(v(x) + 2 * v(y)), Rational(4, 3));
}

TEST(Z3Solver, ExactDoubleCoefficients) {
  // 0.1 as a double is slightly above 1/10: 10 * w > 1 must hold exactly, and w * x = 1 has the exact root.
  auto s = make_solver();
  const Rational w = Rational::from_double(0.1);
  const int x = s->real_var("x");
  ASSERT_EQ(solve(*s, {eq(w * v(x), 1)}), CheckResult::Sat);
  EXPECT_EQ(s->value(x), Rational(1) / w);
  EXPECT_EQ(s->value(x).to_string(), "36028797018963968/3602879701896397");
  auto t = make_solver();
  const int z = t->real_var("z", Rational(1), Rational(1));
  EXPECT_EQ(solve(*t, {le(Rational(10) * w * v(z), 1)}), CheckResult::Unsat);
}

TEST(Z3Solver, SmallIlp) {
  // 3a + 5b = 22, a, b in [0, 10], a > b  ->  (a, b) = (4, 2) is the only solution.
  auto s = make_solver();
  const int a = s->int_var("a", 0, 10);
  const int b = s->int_var("b", 0, 10);
  ASSERT_EQ(solve(*s, {eq(3 * v(a) + 5 * v(b), 22), gt(v(a), v(b))}), CheckResult::Sat);
  EXPECT_EQ(s->value(a), Rational(4));
  EXPECT_EQ(s->value(b), Rational(2));
  s->assert_(ne(v(a), 4));
  EXPECT_EQ(s->check(10), CheckResult::Unsat);
}

TEST(Z3Solver, RationalCoefficientsOverIntegers) {
  // x/2 + y/3 = 7/6 with x, y in [0, 5]: 3x + 2y = 7 -> (1, 2).
  auto s = make_solver();
  const int x = s->int_var("x", 0, 5);
  const int y = s->int_var("y", 0, 5);
  ASSERT_EQ(solve(*s, {eq(Rational(1, 2) * v(x) + Rational(1, 3) * v(y), Rational(7, 6))}), CheckResult::Sat);
  EXPECT_EQ(s->value(x), Rational(1));
  EXPECT_EQ(s->value(y), Rational(2));
  // x/2 < 1/3 over integers means x <= 0.
  auto t = make_solver();
  const int z = t->int_var("z", -3, 3);
  ASSERT_EQ(solve(*t, {lt(Rational(1, 2) * v(z), Rational(1, 3)), gt(v(z), -1)}), CheckResult::Sat);
  EXPECT_EQ(t->value(z), Rational(0));
}

TEST(Z3Solver, IntegersVersusReals) {
  // x + y = 1, x - y = 0: x = y = 1/2 over the reals, nothing over the integers.
  auto r = make_solver();
  const int rx = r->real_var("x");
  const int ry = r->real_var("y");
  ASSERT_EQ(solve(*r, {eq(v(rx) + v(ry), 1), eq(v(rx) - v(ry), 0)}), CheckResult::Sat);
  EXPECT_EQ(r->value(rx), Rational(1, 2));
  EXPECT_EQ(r->value(ry), Rational(1, 2));
  auto i = make_solver();
  const int ix = i->int_var("x", -100, 100);
  const int iy = i->int_var("y", -100, 100);
  EXPECT_EQ(solve(*i, {eq(v(ix) + v(iy), 1), eq(v(ix) - v(iy), 0)}), CheckResult::Unsat);
  // Mixed: an integer x and a real y.
  auto m = make_solver();
  const int mx = m->int_var("x", -100, 100);
  const int my = m->real_var("y");
  ASSERT_EQ(solve(*m, {eq(v(mx) + v(my), 1), eq(2 * v(mx) - v(my), Rational(1, 2))}), CheckResult::Unsat);
  auto m2 = make_solver();
  const int nx = m2->int_var("x", -100, 100);
  const int ny = m2->real_var("y");
  ASSERT_EQ(solve(*m2, {eq(v(nx) + v(ny), Rational(5, 2)), eq(v(nx) - v(ny), Rational(-1, 2))}), CheckResult::Sat);
  EXPECT_EQ(m2->value(nx), Rational(1));
  EXPECT_EQ(m2->value(ny), Rational(3, 2));
}

TEST(Z3Solver, StrictVersusNonStrictBounds) {
  // Reals: x <= 1 and x >= 1 is sat; x < 1 and x >= 1 is unsat; x < 1 and x > 0 has a model strictly inside.
  auto a = make_solver();
  const int x = a->real_var("x");
  ASSERT_EQ(solve(*a, {le(v(x), 1), ge(v(x), 1)}), CheckResult::Sat);
  EXPECT_EQ(a->value(x), Rational(1));
  auto b = make_solver();
  const int y = b->real_var("y");
  EXPECT_EQ(solve(*b, {lt(v(y), 1), ge(v(y), 1)}), CheckResult::Unsat);
  auto c = make_solver();
  const int z = c->real_var("z");
  ASSERT_EQ(solve(*c, {lt(v(z), Rational(1, 1000000)), gt(v(z), 0)}), CheckResult::Sat);
  EXPECT_GT(c->value(z), Rational(0));
  EXPECT_LT(c->value(z), Rational(1, 1000000));
  // Integers: 0 < n < 1 is empty, 0 < n < 2 is {1}.
  auto d = make_solver();
  const int n = d->int_var("n", -10, 10);
  EXPECT_EQ(solve(*d, {gt(v(n), 0), lt(v(n), 1)}), CheckResult::Unsat);
  auto e = make_solver();
  const int m = e->int_var("m", -10, 10);
  ASSERT_EQ(solve(*e, {gt(v(m), 0), lt(v(m), 2)}), CheckResult::Sat);
  EXPECT_EQ(e->value(m), Rational(1));
}

TEST(Z3Solver, VariableBounds) {
  auto s = make_solver();
  const int i = s->int_var("i", 3, 5);
  const int r = s->real_var("r", Rational(-1, 2), Rational(1, 4));
  const int lo_only = s->real_var("lo", Rational(7));
  const int hi_only = s->real_var("hi", std::nullopt, Rational(-7));
  EXPECT_EQ(s->num_vars(), 4);
  EXPECT_TRUE(s->is_int(i));
  EXPECT_FALSE(s->is_int(r));
  EXPECT_EQ(s->var_name(r), "r");
  EXPECT_THROW((void)s->var_name(4), InternalError);
  ASSERT_EQ(s->check(10), CheckResult::Sat);
  EXPECT_GE(s->value(i), Rational(3));
  EXPECT_LE(s->value(i), Rational(5));
  EXPECT_GE(s->value(r), Rational(-1, 2));
  EXPECT_LE(s->value(r), Rational(1, 4));
  EXPECT_GE(s->value(lo_only), Rational(7));
  EXPECT_LE(s->value(hi_only), Rational(-7));
  s->assert_(gt(v(r), Rational(1, 4)));
  EXPECT_EQ(s->check(10), CheckResult::Unsat);
  // An empty integer range is simply unsat.
  auto e = make_solver();
  e->int_var("empty", 2, 1);
  EXPECT_EQ(e->check(10), CheckResult::Unsat);
}

TEST(Z3Solver, SameNamesAreDistinctVariables) {
  auto s = make_solver();
  const int a = s->int_var("x", 0, 0);
  const int b = s->int_var("x", 1, 1);
  ASSERT_EQ(s->check(10), CheckResult::Sat);
  EXPECT_EQ(s->value(a), Rational(0));
  EXPECT_EQ(s->value(b), Rational(1));
}

TEST(Z3Solver, IteEncodesReluExactly) {
  // y = relu(w . x + b) with exact double weights; fix x and read y back.
  const Rational w0 = Rational::from_double(0.3);
  const Rational w1 = Rational::from_double(-1.7);
  const Rational b = Rational::from_double(0.05);
  for (const auto& [x0, x1] : std::vector<std::pair<Rational, Rational>>{
           {Rational(1), Rational(0)}, {Rational(0), Rational(1)}, {Rational(-1, 3), Rational(-1, 7)}, {0, 0}}) {
    auto s = make_solver();
    const int a = s->real_var("a");
    const int c = s->real_var("c");
    const int y = s->real_var("y");
    const Term pre = w0 * v(a) + w1 * v(c) + b;
    const Term relu = ite(gt(pre, 0), pre, 0);
    ASSERT_EQ(solve(*s, {eq(v(a), x0), eq(v(c), x1), eq(v(y), relu)}), CheckResult::Sat);
    const Rational p = w0 * x0 + w1 * x1 + b;
    EXPECT_EQ(s->value(y), p > 0 ? p : Rational(0)) << x0 << " " << x1;
    EXPECT_EQ(s->value(relu), s->value(y));
  }
  // relu(x) = -1 is impossible; relu(x) = 0 with x > 0 too; relu(x) = 2 forces x = 2.
  auto s = make_solver();
  const int x = s->real_var("x");
  const Term relu = ite(gt(v(x), 0), v(x), 0);
  s->push();
  EXPECT_EQ(solve(*s, {eq(relu, -1)}), CheckResult::Unsat);
  s->pop();
  s->push();
  EXPECT_EQ(solve(*s, {eq(relu, 0), gt(v(x), 0)}), CheckResult::Unsat);
  s->pop();
  ASSERT_EQ(solve(*s, {eq(relu, 2)}), CheckResult::Sat);
  EXPECT_EQ(s->value(x), Rational(2));
}

TEST(Z3Solver, DeepSharedReluChainTranslatesOnce) {
  // 100 layers of relu(h/2 + 1) with three uses of each node: exponential without sharing.
  auto s = make_solver();
  const int x = s->real_var("x", Rational(0), Rational(0));
  Term h = v(x);
  for (int layer = 0; layer < 100; ++layer) {
    const Term pre = h * Rational(1, 2) + 1;
    h = ite(gt(pre, 0), pre, 0) + ite(gt(pre, 0), pre, 0) - ite(ge(pre, 0), pre, 0);
  }
  const int y = s->real_var("y");
  ASSERT_EQ(solve(*s, {eq(v(y), h)}), CheckResult::Sat);
  EXPECT_EQ(s->value(y), s->value(h));
  EXPECT_EQ(s->value(y), Rational(2) - Rational(1) / Rational(mpq_class(mpz_class(1) << 99)));
}

TEST(Z3Solver, DisjunctionImplicationAndNegation) {
  auto s = make_solver();
  const int x = s->int_var("x", -5, 5);
  const int y = s->int_var("y", -5, 5);
  // (x <= -4 or x >= 4), x >= 0 -> x = 4 or 5; (x = 5 -> y = 1); not(y >= 0) -> y < 0; so x = 4.
  const std::vector<Constraint> cs = {disjunction({le(v(x), -4), ge(v(x), 4)}), ge(v(x), 0),
                                      implies(eq(v(x), 5), eq(v(y), 1)), negation(ge(v(y), 0))};
  ASSERT_EQ(solve(*s, cs), CheckResult::Sat);
  EXPECT_EQ(s->value(x), Rational(4));
  EXPECT_LT(s->value(y), Rational(0));
  s->assert_(negation(conjunction({eq(v(x), 4), lt(v(y), 0)})));
  EXPECT_EQ(s->check(10), CheckResult::Unsat);
  // Constant constraints go through as well.
  auto t = make_solver();
  t->assert_(Constraint::constant(true));
  EXPECT_EQ(t->check(10), CheckResult::Sat);
  t->assert_(Constraint::constant(false));
  EXPECT_EQ(t->check(10), CheckResult::Unsat);
}

TEST(Z3Solver, PushPop) {
  auto s = make_solver();
  const int x = s->int_var("x", 0, 10);
  s->assert_(ge(v(x), 3));
  EXPECT_EQ(s->scope_level(), 0);
  s->push();
  s->assert_(le(v(x), 2));
  EXPECT_EQ(s->check(10), CheckResult::Unsat);
  s->push();
  EXPECT_EQ(s->scope_level(), 2);
  s->pop(2);
  EXPECT_EQ(s->scope_level(), 0);
  ASSERT_EQ(s->check(10), CheckResult::Sat);
  EXPECT_GE(s->value(x), Rational(3));
  EXPECT_THROW(s->pop(), InternalError);
  // A variable made inside a scope keeps its bounds after the pop.
  s->push();
  const int y = s->int_var("y", 7, 7);
  s->pop();
  s->assert_(eq(v(y), v(x)));
  ASSERT_EQ(s->check(10), CheckResult::Sat);
  EXPECT_EQ(s->value(y), Rational(7));
  EXPECT_EQ(s->value(x), Rational(7));
  s->assert_(ne(v(y), 7));
  EXPECT_EQ(s->check(10), CheckResult::Unsat);
}

TEST(Z3Solver, ValueNeedsSat) {
  auto s = make_solver();
  const int x = s->int_var("x", 0, 1);
  EXPECT_THROW((void)s->value(x), InternalError);
  s->assert_(gt(v(x), 1));
  ASSERT_EQ(s->check(10), CheckResult::Unsat);
  EXPECT_THROW((void)s->value(x), InternalError);
  EXPECT_THROW(s->assert_(ge(v(x + 5), 0)), InternalError);  // a variable of no solver
  EXPECT_EQ(s->check(10), CheckResult::Unsat);               // the failed assert left nothing behind
}

TEST(Z3Solver, UnconstrainedVariableGetsItsLowerBoundOrZero) {
  auto s = make_solver();
  const int a = s->int_var("a", 0, 3);
  ASSERT_EQ(s->check(10), CheckResult::Sat);
  const int b = s->real_var("b", Rational(5, 2));  // made after the check: not in the model
  const int c = s->real_var("c");
  const int d = s->real_var("d", std::nullopt, Rational(-3));
  EXPECT_GE(s->value(a), Rational(0));
  EXPECT_EQ(s->value(b), Rational(5, 2));
  EXPECT_EQ(s->value(c), Rational(0));
  EXPECT_EQ(s->value(d), Rational(-3));
}

// n + 1 pigeons in n holes, pairwise different: hard for Z3 at this size.
void pigeonhole(Solver& s, int holes) {
  std::vector<int> p;
  for (int i = 0; i <= holes; ++i) p.push_back(s.int_var("p" + std::to_string(i), 0, holes - 1));
  for (int i = 0; i <= holes; ++i) {
    for (int j = i + 1; j <= holes; ++j) s.assert_(ne(v(p[i]), v(p[j])));
  }
}

TEST(Z3Solver, TinyTimeLimitGivesUnknown) {
  auto s = make_solver();
  pigeonhole(*s, 12);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(s->check(0.001), CheckResult::Unknown);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 2.0);
  EXPECT_EQ(s->reason_unknown(), "timeout");
  EXPECT_THROW((void)s->value(0), InternalError);
  // Incremental too: after a push, with a slightly longer limit.
  s->push();
  EXPECT_EQ(s->check(0.05), CheckResult::Unknown);
  EXPECT_EQ(s->reason_unknown(), "timeout");  // Z3 itself says "canceled" here
  EXPECT_EQ(s->stats().unknown, 2);
  // The solver is still usable: an easy query after the timeouts.
  s->pop();
  s->assert_(eq(v(0), 99));
  EXPECT_EQ(s->check(10), CheckResult::Unsat);
}

TEST(Z3Solver, StatisticsCountChecks) {
  auto s = make_solver();
  const int x = s->int_var("x", 0, 3);
  EXPECT_EQ(s->stats().checks, 0);
  EXPECT_EQ(s->check(10), CheckResult::Sat);
  EXPECT_EQ(s->check(), CheckResult::Sat);
  s->push();
  s->assert_(gt(v(x), 3));
  EXPECT_EQ(s->check(10), CheckResult::Unsat);
  s->pop();
  const SolverStats& st = s->stats();
  EXPECT_EQ(st.checks, 3);
  EXPECT_EQ(st.sat, 2);
  EXPECT_EQ(st.unsat, 1);
  EXPECT_EQ(st.unknown, 0);
  EXPECT_GE(st.seconds, 0.0);
  EXPECT_LT(st.seconds, 10.0);
}

TEST(Z3Solver, SolversInThreadsAreIndependent) {
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &ok] {
      auto s = make_solver();
      const int x = s->int_var("x", 0, 100);
      const int y = s->int_var("y", 0, 100);
      int good = 0;
      for (int k = 0; k < 20; ++k) {
        s->push();
        s->assert_(eq(v(x) + v(y), t + k));
        s->assert_(eq(v(x) - v(y), (t + k) % 2));
        if (s->check(10) == CheckResult::Sat && s->value(x) + s->value(y) == t + k) ++good;
        s->pop();
      }
      ok[static_cast<std::size_t>(t)] = good;
    });
  }
  for (auto& th : threads) th.join();
  for (int good : ok) EXPECT_EQ(good, 20);
}

// 200 random systems of 2-3 integer variables in [-5, 5], each of 1-4 constraints (random
// relation, small integer and fractional coefficients, some disjunctions), against enumeration.
TEST(Z3Solver, RandomIntegerSystemsAgreeWithEnumeration) {
  std::mt19937 rng(2024);
  auto pick = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int sat = 0;
  int unsat = 0;
  // One solver, one scope per system: also exercises push/pop (and is 20x faster than new solvers).
  auto s = make_solver();
  std::vector<int> all_ids;
  for (int i = 0; i < 3; ++i) all_ids.push_back(s->int_var("x" + std::to_string(i), -5, 5));
  for (int round = 0; round < 200; ++round) {
    const int n = pick(2, 3);
    const std::vector<int> ids(all_ids.begin(), all_ids.begin() + n);
    s->push();
    auto random_atom = [&] {
      Term t = Rational(pick(-12, 12), pick(1, 3));
      for (int id : ids) t += Rational(pick(-4, 4), pick(1, 2)) * v(id);
      switch (pick(0, 5)) {
        case 0: return le(t, 0);
        case 1: return lt(t, 0);
        case 2: return ge(t, 0);
        case 3: return gt(t, 0);
        case 4: return eq(t, 0);
        default: return ne(t, 0);
      }
    };
    std::vector<Constraint> cs;
    const int m = pick(1, 4);
    for (int k = 0; k < m; ++k)
      cs.push_back(pick(0, 3) == 0 ? disjunction({random_atom(), random_atom()}) : random_atom());
    bool expected = false;
    std::vector<Rational> point(static_cast<std::size_t>(n));
    const auto value_of = [&point](int id) { return point.at(static_cast<std::size_t>(id)); };
    for (int code = 0; code < 1331 && !expected; ++code) {
      int rest = code;
      for (int i = 0; i < n; ++i) {
        point[static_cast<std::size_t>(i)] = Rational(rest % 11 - 5);
        rest /= 11;
      }
      if (n == 2 && code >= 121) break;
      bool all = true;
      for (const Constraint& c : cs) all = all && evaluate(c, value_of);
      expected = all;
    }
    const CheckResult r = solve(*s, cs);
    ASSERT_NE(r, CheckResult::Unknown) << round;
    EXPECT_EQ(r == CheckResult::Sat, expected) << "round " << round;
    if (r == CheckResult::Sat) {
      for (int id : ids) {
        EXPECT_TRUE(s->value(id).is_integer());
        EXPECT_GE(s->value(id), Rational(-5));
        EXPECT_LE(s->value(id), Rational(5));
      }
    }
    (expected ? sat : unsat) += 1;
    s->pop();
  }
  // Both outcomes are exercised.
  EXPECT_GT(sat, 30);
  EXPECT_GT(unsat, 30);
}

TEST(Z3Solver, HeaderExample) {
  auto s = witness::make_solver("z3");
  int x = s->int_var("x", 0, 10);
  int y = s->real_var("y", witness::Rational(0));
  s->assert_(witness::eq(witness::Term::var(x) + witness::Term::var(y), witness::Rational(7, 2)));
  ASSERT_EQ(s->check(1.0), witness::CheckResult::Sat);
  EXPECT_EQ(s->value(x) + s->value(y), Rational(7, 2));
  EXPECT_TRUE(s->value(x).is_integer());
  EXPECT_GE(s->value(y), Rational(0));
}

}  // namespace
}  // namespace witness
