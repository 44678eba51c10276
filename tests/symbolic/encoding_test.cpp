#include "symbolic/encoding.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace witness {
namespace {

// The schema is a file so that its text is written once (tests/fixtures/schemas).
const char* const kSchema = WITNESS_SOURCE_DIR "/tests/fixtures/schemas/encoding.toml";

TEST(Encoding, OneHotSumsToOne) {
  const Schema s = load_schema(kSchema);
  ASSERT_EQ(s.model_width(), 6);
  auto solver = make_solver("z3");
  Eigen::VectorXd raw(4);
  raw << 30, 500, 1, 0;
  const Eigen::VectorXd x0 = s.to_model(raw);
  const std::vector<bool> sym(6, true);
  const DomainEncoding enc = encode_domain(*solver, s, sym, x0);
  ASSERT_EQ(enc.one_hot_vars[2].size(), 3U);
  // Two indicators at once is impossible; none at all too.
  solver->push();
  solver->assert_(eq(enc.model_inputs[2] + enc.model_inputs[3], 2));
  EXPECT_EQ(solver->check(), CheckResult::Unsat);
  solver->pop();
  solver->push();
  solver->assert_(eq(enc.model_inputs[4], 0));
  solver->assert_(eq(enc.model_inputs[3], 0));
  ASSERT_EQ(solver->check(), CheckResult::Sat);
  EXPECT_EQ(solver->value(enc.model_inputs[2]), Rational(1));
  EXPECT_EQ(raw_from_solver(*solver, enc, s, x0)[2], 0.0);
  solver->pop();
  // A one-hot feature half symbolic is an input error.
  std::vector<bool> half(6, false);
  half[2] = true;
  auto s2 = make_solver("z3");
  EXPECT_THROW((void)encode_domain(*s2, s, half, x0), InputError);
}

TEST(Encoding, NormalisationRoundTripIsExact) {
  const Schema s = load_schema(kSchema);
  auto solver = make_solver("z3");
  Eigen::VectorXd raw(4);
  raw << 30, 500, 1, 0;
  const Eigen::VectorXd x0 = s.to_model(raw);
  const DomainEncoding enc = encode_domain(*solver, s, std::vector<bool>(6, true), x0);
  ASSERT_GE(enc.raw_vars[0], 0);
  ASSERT_GE(enc.raw_vars[1], 0);
  for (int age : {18, 41, 77, 90}) {
    for (int income : {0, 333, 1000}) {
      solver->push();
      solver->assert_(eq(Term::var(enc.raw_vars[0]), age));
      solver->assert_(eq(Term::var(enc.raw_vars[1]), income));
      ASSERT_EQ(solver->check(), CheckResult::Sat);
      const Eigen::VectorXd x = model_input_from_solver(*solver, enc, x0);
      Eigen::VectorXd r = s.from_model(x);
      EXPECT_EQ(r[0], age);
      EXPECT_EQ(r[1], income);
      const Eigen::VectorXd back = s.to_model(r);
      for (int i = 0; i < 6; ++i) EXPECT_EQ(back[i], x[i]) << i;  // bit-identical to the schema
      // The exact Term is raw * scale + offset in rationals.
      const Rational exact_age = (Rational(age) - Rational::from_double(41.2)) / Rational::from_double(12.5);
      EXPECT_EQ(solver->value(enc.model_inputs[0]), exact_age);
      EXPECT_EQ(solver->value(enc.model_inputs[1]),
                Rational(income) * Rational::from_double(0.001) + Rational::from_double(-0.5));
      EXPECT_NEAR(solver->value(enc.model_inputs[0]).to_double(), x[0], 1e-15);
      solver->pop();
    }
  }
  // Bounds hold: age 17 is outside.
  solver->push();
  solver->assert_(le(Term::var(enc.raw_vars[0]), 17));
  EXPECT_EQ(solver->check(), CheckResult::Unsat);
  solver->pop();
}

TEST(Encoding, NonSymbolicInputsAreConstantsAndSubstituteWorks) {
  const Schema s = load_schema(kSchema);
  auto solver = make_solver("z3");
  Eigen::VectorXd raw(4);
  raw << 30, 500, 2, 1;
  const Eigen::VectorXd x0 = s.to_model(raw);
  std::vector<bool> sym(6, false);
  sym[5] = true;  // only sex
  const DomainEncoding enc = encode_domain(*solver, s, sym, x0);
  EXPECT_EQ(solver->num_vars(), 1);
  EXPECT_TRUE(enc.model_inputs[0].is_constant());
  EXPECT_EQ(enc.model_inputs[0].constant(), Rational::from_double(x0[0]));
  // 2 * x5 - x0 > 0 over model inputs becomes 2 * sex - x0 > 0 over the solver.
  const Constraint c = gt(Rational(2) * Term::var(5) - Term::var(0), 0);
  solver->assert_(substitute(c, enc.model_inputs));
  ASSERT_EQ(solver->check(), CheckResult::Sat);  // x0 = (30 - 41.2) / 12.5 < 0: any sex works
  EXPECT_EQ(model_input_from_solver(*solver, enc, x0)[0], x0[0]);
}

}  // namespace
}  // namespace witness
