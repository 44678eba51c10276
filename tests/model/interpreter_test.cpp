#include "model/interpreter.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "model/evaluator.h"

namespace witness {
namespace {

// A Lookup reads the row ONNX's Gather(Cast(v)) reads: trunc(v) toward zero, negative rows from
// the end, undefined outside [-rows, rows - 1]; the interpreter (double and float) and the batched
// evaluator agree at every quarter from -4.75 to 3.75 and just inside the boundaries.
TEST(Interpreter, LookupTruncatesAndCountsNegativeRowsFromTheEnd) {
  ModelBuilder b("lookup", {"v"});
  Eigen::MatrixXd table(3, 2);
  table << 10, 11, 20, 21, 30, 31;
  const int row = b.lookup(b.input(), table, "q");
  const Model m = b.finish(row, DecisionRule::argmax_of(row));
  std::vector<double> values = {-0.51, -0.99, 0.99, 2.999, -3.999, -4.0, 3.0, std::nan("")};
  for (int k = -19; k <= 15; ++k) values.push_back(k / 4.0);
  Evaluator<double> ev(m);
  for (const double v : values) {
    SCOPED_TRACE(v);
    const double t = std::trunc(v);
    const bool inside = t >= -3 && t <= 2;  // NaN: false
    Eigen::MatrixXd x(1, 1);
    x << v;
    FloatDomain<double> d;
    ModelInterpreter<FloatDomain<double>> run(m, d, {.outputs = true});
    const ModelValues<FloatDomain<double>> got = run.run({v});
    EXPECT_EQ(d.defined(), inside);
    if (!inside) {
      EXPECT_THROW((void)ev.run(x), InputError);
      continue;
    }
    const int want = static_cast<int>(t < 0 ? t + 3 : t);
    const Evaluation e = ev.run(x);
    EXPECT_DOUBLE_EQ(e.outputs(0, 0), table(want, 0));
    EXPECT_DOUBLE_EQ(got.outputs[0], table(want, 0));
    EXPECT_DOUBLE_EQ(got.outputs[1], table(want, 1));
    FloatDomain<float> f;
    ModelInterpreter<FloatDomain<float>> run32(m, f, {.outputs = true});
    EXPECT_FLOAT_EQ(run32.run({static_cast<float>(v)}).outputs[0], static_cast<float>(table(want, 0)));
  }
}

// One node's values without a decision: the mode the exact term encoding uses.
TEST(Interpreter, OneNodeModeHasNoDecision) {
  ModelBuilder b("node", {"a", "b"});
  const int sum = b.binary(OpKind::Add, b.select(b.input(), {0}), b.select(b.input(), {1}));
  const Model m = b.finish(sum, DecisionRule::threshold_on(sum, 0.0));
  FloatDomain<double> d;
  ModelInterpreter<FloatDomain<double>> node(m, d, {.node = sum});
  EXPECT_EQ(node.node_values({1.5, 2.0}), std::vector<double>{3.5});
  EXPECT_THROW((void)node.run({1.5, 2.0}), InternalError);
  EXPECT_THROW((void)(ModelInterpreter<FloatDomain<double>>(m, d, {.node = 99})), InternalError);
  ModelInterpreter<FloatDomain<double>> whole(m, d, {});
  EXPECT_THROW((void)whole.node_values({1.5, 2.0}), InternalError);
  EXPECT_EQ(whole.run({1.5, 2.0}).label, 1.0);
}

}  // namespace
}  // namespace witness
