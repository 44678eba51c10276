#include <gmpxx.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <ios>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bounds/relu_network.h"
#include "solver/rational.h"
#include "support/float_bits.h"

namespace witness {
namespace {

using test::fraction_bits;
using test::hex;
using test::Rng;
using test::uniform;
using test::uniform_int;

// ---------------------------------------------------------------------------------------------
// Exact evaluation. Every double is a dyadic rational, so each layer's exact values are integers
// over one power of two: h_k = (W_k 2^wk)(a 2^ak) 2^-(wk + ak) + (b_k 2^bk) 2^-bk.

mpz_class scaled(double d, int bits) { return mpz_class(std::ldexp(d, bits)); }  // exact: an integral double

class ExactNetwork {
 public:
  explicit ExactNetwork(const ReluNetwork& net) {
    for (const auto& layer : net.layers) {
      Layer& l = layers_.emplace_back();
      l.rows = layer.weights.rows(), l.cols = layer.weights.cols();
      for (Eigen::Index i = 0; i < layer.weights.size(); ++i)
        l.weight_bits = std::max(l.weight_bits, fraction_bits(layer.weights.data()[i]));
      for (Eigen::Index i = 0; i < layer.bias.size(); ++i)
        l.bias_bits = std::max(l.bias_bits, fraction_bits(layer.bias(i)));
      for (Eigen::Index r = 0; r < l.rows; ++r) {
        for (Eigen::Index c = 0; c < l.cols; ++c) l.weights.push_back(scaled(layer.weights(r, c), l.weight_bits));
        l.bias.push_back(scaled(layer.bias(r), l.bias_bits));
      }
    }
  }

  // The exact logit at the exact input x + d (ReLU = max(., 0) on exact values).
  [[nodiscard]] Rational logit(const Eigen::VectorXd& x, const Eigen::VectorXd& d) const {
    int bits = 0;
    for (Eigen::Index i = 0; i < x.size(); ++i) bits = std::max({bits, fraction_bits(x(i)), fraction_bits(d(i))});
    std::vector<mpz_class> a;
    for (Eigen::Index i = 0; i < x.size(); ++i) a.push_back(scaled(x(i), bits) + scaled(d(i), bits));
    for (std::size_t k = 0; k < layers_.size(); ++k) {
      const Layer& l = layers_[k];
      const int out_bits = std::max(l.weight_bits + bits, l.bias_bits);
      std::vector<mpz_class> h(static_cast<std::size_t>(l.rows));
      for (Eigen::Index r = 0; r < l.rows; ++r) {
        mpz_class& acc = h[static_cast<std::size_t>(r)];
        for (Eigen::Index c = 0; c < l.cols; ++c) {
          const mpz_class& w = l.weights[static_cast<std::size_t>(r * l.cols + c)];
          const mpz_class& v = a[static_cast<std::size_t>(c)];
          if (sgn(w) != 0 && sgn(v) != 0) mpz_addmul(acc.get_mpz_t(), w.get_mpz_t(), v.get_mpz_t());
        }
        acc <<= static_cast<mp_bitcnt_t>(out_bits - l.weight_bits - bits);
        acc += l.bias[static_cast<std::size_t>(r)] << static_cast<mp_bitcnt_t>(out_bits - l.bias_bits);
      }
      bits = out_bits;
      if (k + 1 == layers_.size()) {
        mpq_class q(h[0], mpz_class(1) << static_cast<mp_bitcnt_t>(bits));
        q.canonicalize();
        return Rational(q);
      }
      for (mpz_class& v : h)
        if (sgn(v) < 0) v = 0;
      a = std::move(h);
    }
    return Rational(0);  // no layers
  }

 private:
  struct Layer {
    Eigen::Index rows = 0, cols = 0;
    int weight_bits = 0, bias_bits = 0;
    std::vector<mpz_class> weights;  // row-major, times 2^weight_bits
    std::vector<mpz_class> bias;     // times 2^bias_bits
  };
  std::vector<Layer> layers_;
};

// |z - exact| <= error, exactly. An infinite error is no bound (and so never wrong).
::testing::AssertionResult within(double z, double error, const Rational& exact) {
  if (std::isnan(z) || std::isnan(error) || !(error >= 0.0))
    return ::testing::AssertionFailure() << "z " << z << ", error " << error;
  if (std::isinf(error)) return ::testing::AssertionSuccess();
  const Rational gap = (Rational::from_double(z) - exact).abs();
  if (gap <= Rational::from_double(error)) return ::testing::AssertionSuccess();
  std::ostringstream why;
  why.precision(17);
  why << "z " << z << " (" << hex(z) << "), exact " << exact.to_double() << ", |z - exact| " << gap.to_double()
      << " > error " << error << " (" << hex(error) << ")";
  return ::testing::AssertionFailure() << why.str();
}

// ---------------------------------------------------------------------------------------------
// Random networks and inputs.

enum class Weights {
  He,          // N(0, 2 / fan-in), some exact zeros
  Magnitudes,  // +-10^U(-8, 3), many exact zeros
  Mixed,       // He, with some entries 1e3 times larger or 1e-8 times smaller
};

double random_weight(Rng& rng, Weights kind, Eigen::Index fan_in) {
  const double he = std::normal_distribution<double>(0.0, std::sqrt(2.0 / static_cast<double>(fan_in)))(rng);
  const int k = uniform_int(rng, 0, 19);
  switch (kind) {
    case Weights::He: return k < 2 ? 0.0 : he;
    case Weights::Magnitudes: return k < 4 ? 0.0 : (k % 2 == 0 ? 1.0 : -1.0) * std::pow(10.0, uniform(rng, -8.0, 3.0));
    case Weights::Mixed: return k < 2 ? 0.0 : k < 4 ? he * 1e3 : k < 6 ? he * 1e-8 : he;
  }
  return he;
}

double random_bias(Rng& rng, Weights kind) {
  const int k = uniform_int(rng, 0, 9);
  if (k < 3) return 0.0;
  if (kind == Weights::Magnitudes) return (k % 2 == 0 ? 1.0 : -1.0) * std::pow(10.0, uniform(rng, -8.0, 3.0));
  return std::normal_distribution<double>(0.0, 0.1)(rng);
}

// widths: the input width, the hidden widths, then 1.
ReluNetwork random_network(Rng& rng, const std::vector<int>& widths, Weights kind) {
  ReluNetwork net;
  net.input_width = widths[0];
  for (std::size_t k = 1; k < widths.size(); ++k) {
    ReluNetwork::Layer layer{Eigen::MatrixXd(widths[k], widths[k - 1]), Eigen::VectorXd(widths[k])};
    for (Eigen::Index r = 0; r < layer.weights.rows(); ++r) {
      for (Eigen::Index c = 0; c < layer.weights.cols(); ++c)
        layer.weights(r, c) = random_weight(rng, kind, widths[k - 1]);
      layer.bias(r) = random_bias(rng, kind);
    }
    net.layers.push_back(std::move(layer));
  }
  net.threshold = 0.0;
  return net;
}

Eigen::MatrixXd random_inputs(Rng& rng, int width, int cols) {
  Eigen::MatrixXd x(width, cols);
  const int kind = uniform_int(rng, 0, 2);
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    if (kind == 0) {
      x.data()[i] = uniform(rng, -3.0, 3.0);
    } else if (kind == 1) {
      x.data()[i] = uniform_int(rng, -5, 5);
    } else {
      x.data()[i] =
          uniform_int(rng, 0, 4) == 0 ? 0.0 : uniform(rng, -1.0, 1.0) * std::pow(10.0, uniform(rng, -3.0, 3.0));
    }
  }
  return x;
}

Eigen::VectorXd random_input_error(Rng& rng, int width) {
  Eigen::VectorXd e = Eigen::VectorXd::Zero(width);
  for (Eigen::Index i = 0; i < e.size(); ++i)
    if (uniform_int(rng, 0, 9) >= 3) e(i) = std::pow(10.0, uniform(rng, -12.0, -3.0));
  return e;
}

// An exact input's offset from x: within the error, mostly at its ends.
Eigen::VectorXd random_perturbation(Rng& rng, const Eigen::VectorXd& error) {
  Eigen::VectorXd d(error.size());
  for (Eigen::Index i = 0; i < d.size(); ++i) {
    const int k = uniform_int(rng, 0, 4);
    d(i) = k == 0 ? 0.0 : k == 1 ? error(i) : k == 2 ? -error(i) : error(i) * uniform(rng, -1.0, 1.0);
  }
  return d;
}

// Moves the last bias so that the first column's logit is (in double) about 0 = the threshold:
// the componentwise bound cannot decide it, so the spectral one is computed (depth > 2).
void center_on_first_column(ReluNetwork& net, const Eigen::MatrixXd& x) {
  net.layers.back().bias(0) -= net.logit(x.col(0));
}

struct Checked {
  Eigen::RowVectorXd z, error;
};

// Every column's exact logit (at x plus a perturbation within input_error) within its error.
Checked check_columns(const ReluNetwork& net, const BoundedForward& f, const Eigen::MatrixXd& x,
                      const Eigen::VectorXd& input_error, Rng& rng, const std::string& what) {
  const ExactNetwork exact(net);
  Checked out;
  out.z = f.logits(x, input_error, out.error);
  EXPECT_EQ(out.z.size(), x.cols()) << what;
  EXPECT_EQ(out.error.size(), x.cols()) << what;
  if (out.z.size() != x.cols() || out.error.size() != x.cols()) return out;
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    EXPECT_TRUE(std::isfinite(out.error(j))) << what << " column " << j;
    const Eigen::VectorXd d = random_perturbation(rng, input_error);
    EXPECT_TRUE(within(out.z(j), out.error(j), exact.logit(x.col(j), d))) << what << " column " << j;
  }
  return out;
}

std::string sci(double d) {
  std::ostringstream out;
  out << std::scientific << d;
  return out.str();
}

std::string name(const char* kind, std::uint64_t seed) { return std::string(kind) + " " + std::to_string(seed); }

// ---------------------------------------------------------------------------------------------

TEST(BoundedForward, ShallowNetworksContainTheExactLogits) {
  for (std::uint64_t seed = 0; seed < 240 && !::testing::Test::HasFailure(); ++seed) {
    Rng rng(100 + seed);
    const auto kind = static_cast<Weights>(seed % 3);
    const int in = uniform_int(rng, 1, 10);
    const ReluNetwork net = random_network(rng, {in, uniform_int(rng, 3, 30), 1}, kind);
    const BoundedForward f(net);
    const Eigen::MatrixXd x = random_inputs(rng, in, 6);
    const Eigen::VectorXd e = seed % 2 == 0 ? Eigen::VectorXd::Zero(in) : random_input_error(rng, in);
    check_columns(net, f, x, e, rng, name("network", seed));
  }
}

// 3 to 5 layers; half of them centred on a column, so that the spectral bound is computed too.
TEST(BoundedForward, MiddleDepthNetworksContainTheExactLogits) {
  for (std::uint64_t seed = 0; seed < 150 && !::testing::Test::HasFailure(); ++seed) {
    Rng rng(2000 + seed);
    const auto kind = static_cast<Weights>(seed % 3);
    std::vector<int> widths{uniform_int(rng, 1, 10)};
    const int hidden = uniform_int(rng, 2, 4);
    for (int k = 0; k < hidden; ++k) widths.push_back(uniform_int(rng, 3, 30));
    widths.push_back(1);
    ReluNetwork net = random_network(rng, widths, kind);
    const Eigen::MatrixXd x = random_inputs(rng, widths[0], 5);
    if (seed % 2 == 0) center_on_first_column(net, x);
    const BoundedForward f(net);
    const Eigen::VectorXd e = seed % 4 < 2 ? Eigen::VectorXd::Zero(widths[0]) : random_input_error(rng, widths[0]);
    check_columns(net, f, x, e, rng, name("network", seed));
  }
}

// A weight row that nearly cancels another (1e8 w, -1e8 w + small): the exact values are far
// below the rounding of the double ones.
TEST(BoundedForward, CancellingRowsContainTheExactLogits) {
  for (std::uint64_t seed = 0; seed < 60 && !::testing::Test::HasFailure(); ++seed) {
    Rng rng(3000 + seed);
    std::vector<int> widths{uniform_int(rng, 2, 8), uniform_int(rng, 3, 12), uniform_int(rng, 3, 12), 1};
    if (seed % 2 == 0) widths.insert(widths.begin() + 2, uniform_int(rng, 3, 12));
    ReluNetwork net = random_network(rng, widths, Weights::He);
    auto& w = net.layers[0].weights;
    w.row(1) = -w.row(0) * 1e8;
    w.row(0) *= 1e8;
    w(1, 0) += 0.5;
    const Eigen::MatrixXd x = random_inputs(rng, widths[0], 5);
    if (seed % 3 == 0) center_on_first_column(net, x);
    const BoundedForward f(net);
    const Eigen::VectorXd e = seed % 2 == 0 ? Eigen::VectorXd::Zero(widths[0]) : random_input_error(rng, widths[0]);
    check_columns(net, f, x, e, rng, name("network", seed));
  }
}

// 8 layers of width 100 .. 120 (or min_width .. 120) with He weights. The componentwise bound grows
// like the product of |W|'s row sums over the active inputs (about 6 per layer at width 110), the
// spectral one like the product of the bounds on the spectral norms (about 3.5; at width 60 the
// two are about even). With a column at the threshold the spectral bound is computed; it must be
// sound, and it must be what decides the error.
ReluNetwork deep_network(Rng& rng, int min_width = 100) {
  std::vector<int> widths;
  for (int k = 0; k < 8; ++k) widths.push_back(uniform_int(rng, min_width, 120));
  widths.push_back(1);
  return random_network(rng, widths, Weights::He);
}

Eigen::MatrixXd small_integers(Rng& rng, int width, int cols) {
  Eigen::MatrixXd x(width, cols);
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = uniform_int(rng, -5, 5);
  return x;
}

// The errors from the componentwise bound alone: the same network with its threshold far from
// every logit, so that the spectral bound is never needed.
Eigen::RowVectorXd componentwise_errors(const ReluNetwork& net, const Eigen::MatrixXd& x, const Eigen::RowVectorXd& z) {
  ReluNetwork far = net;
  far.threshold = 1e300;
  Eigen::RowVectorXd error;
  EXPECT_EQ(BoundedForward(far).logits(x, Eigen::VectorXd::Zero(net.input_width), error), z);
  return error;
}

// The logits' size: the largest but the first column's (which is at 0 by construction).
double logit_scale(const Eigen::RowVectorXd& z) { return z.tail(z.size() - 1).cwiseAbs().maxCoeff(); }

TEST(BoundedForward, DeepNetworksUseTheSpectralBound) {
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    Rng rng(4000 + seed);
    ReluNetwork net = deep_network(rng);
    const Eigen::MatrixXd x = small_integers(rng, net.input_width, 4);
    center_on_first_column(net, x);
    const Eigen::VectorXd none = Eigen::VectorXd::Zero(net.input_width);
    const Checked c = check_columns(net, BoundedForward(net), x, none, rng, name("network", seed));
    const Eigen::RowVectorXd componentwise = componentwise_errors(net, x, c.z);
    EXPECT_GE(componentwise(0), std::abs(c.z(0))) << "the first column is undecided componentwise";
    const double scale = logit_scale(c.z);
    ASSERT_GT(scale, 0.1);
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      EXPECT_LT(c.error(j), componentwise(j) / 2.0) << "seed " << seed << " column " << j;
      EXPECT_LT(c.error(j), 1e-6 * scale) << "seed " << seed << " column " << j;
    }
    RecordProperty("componentwise_" + std::to_string(seed), sci(componentwise(1) / scale));
    RecordProperty("error_" + std::to_string(seed), sci(c.error(1) / scale));
  }
}

// 12 square layers of width 100 .. 120, orthogonal times sqrt(2) (He's scale for ReLU; every
// singular value sqrt(2)): the componentwise bound is useless (above 1e-5 of the logits), the
// spectral one still below 1e-6 of them.
TEST(BoundedForward, VeryDeepNetworksNeedTheSpectralBound) {
  for (std::uint64_t seed = 0; seed < 2; ++seed) {
    Rng rng(4500 + seed);
    const int width = uniform_int(rng, 100, 120);
    ReluNetwork net = random_network(rng, std::vector<int>(12, width), Weights::He);
    net.layers.push_back({Eigen::MatrixXd(1, width), Eigen::VectorXd::Zero(1)});
    for (Eigen::Index c = 0; c < width; ++c) net.layers.back().weights(0, c) = random_weight(rng, Weights::He, width);
    for (std::size_t k = 0; k + 1 < net.layers.size(); ++k) {
      const Eigen::HouseholderQR<Eigen::MatrixXd> qr(net.layers[k].weights);
      net.layers[k].weights = Eigen::MatrixXd(qr.householderQ()) * std::sqrt(2.0);
    }
    const Eigen::MatrixXd x = small_integers(rng, width, 3);
    center_on_first_column(net, x);
    const Checked c =
        check_columns(net, BoundedForward(net), x, Eigen::VectorXd::Zero(width), rng, name("network", seed));
    const Eigen::RowVectorXd componentwise = componentwise_errors(net, x, c.z);
    const double scale = logit_scale(c.z);
    ASSERT_GT(scale, 0.01);
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      EXPECT_GT(componentwise(j), 1e-5 * scale) << "seed " << seed << " column " << j;
      EXPECT_LT(c.error(j), 1e-6 * scale) << "seed " << seed << " column " << j;
    }
    RecordProperty("componentwise_" + std::to_string(seed), sci(componentwise(1) / scale));
    RecordProperty("error_" + std::to_string(seed), sci(c.error(1) / scale));
  }
}

TEST(BoundedForward, DeepNetworksWithInputErrorsContainTheExactLogits) {
  Rng rng(5000);
  ReluNetwork net = deep_network(rng, 60);
  const Eigen::MatrixXd x = small_integers(rng, net.input_width, 3);
  center_on_first_column(net, x);
  const BoundedForward f(net);
  for (int rep = 0; rep < 2; ++rep) {
    Eigen::VectorXd e = Eigen::VectorXd::Constant(net.input_width, rep == 0 ? 1e-9 : 0.0);
    if (rep == 1) e(0) = 0.5;  // one input known only to within 0.5
    check_columns(net, f, x, e, rng, "rep " + std::to_string(rep));
  }
}

// Rank-one layers s u_k u_(k-1)^T with positive u_k, positive inputs: every ReLU is active and an
// input error along u_0 comes out multiplied by exactly s^depth. Here both bounds are sharp (the
// componentwise one because |W| = W, the spectral one because the only singular value is s), so
// an exact input at the far end of input_error tests them at their limit.
TEST(BoundedForward, RankOneLayersMakeBothBoundsSharp) {
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    Rng rng(5500 + seed);
    const int width = uniform_int(rng, 5, 40), depth = 3 + static_cast<int>(seed % 4);
    const double s = uniform(rng, 0.5, 2.5);
    auto positive_unit = [&] {
      Eigen::VectorXd u(width);
      for (Eigen::Index i = 0; i < width; ++i) u(i) = uniform(rng, 0.2, 1.0);
      return Eigen::VectorXd(u / u.norm());
    };
    ReluNetwork net;
    net.input_width = width;
    Eigen::VectorXd previous = positive_unit();
    const Eigen::VectorXd first = previous;
    for (int k = 0; k < depth; ++k) {
      const Eigen::VectorXd u = k + 1 == depth ? Eigen::VectorXd::Ones(1) : positive_unit();
      net.layers.push_back({Eigen::MatrixXd(s * u * previous.transpose()), Eigen::VectorXd::Zero(u.size())});
      if (k + 1 < depth) net.layers.back().bias.setConstant(seed % 2 == 0 ? 0.0 : 0.25);
      previous = u;
    }
    Eigen::MatrixXd x(width, 2);
    for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = uniform_int(rng, 1, 4);
    if (seed % 3 != 2) center_on_first_column(net, x);  // spectral bound needed (and, mostly, used)
    const Eigen::VectorXd input_error = first * std::pow(10.0, uniform(rng, -8.0, -2.0));
    const BoundedForward f(net);
    const ExactNetwork exact(net);
    Eigen::RowVectorXd error;
    const Eigen::RowVectorXd z = f.logits(x, input_error, error);
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      for (double sign : {1.0, -1.0}) {
        const Rational e = exact.logit(x.col(j), sign * input_error);
        EXPECT_TRUE(within(z(j), error(j), e)) << "seed " << seed << " column " << j << " sign " << sign;
        // Sharp: the exact logit is nearly at the bound's edge.
        EXPECT_GT((Rational::from_double(z(j)) - e).abs().to_double(), 0.99 * error(j))
            << "seed " << seed << " column " << j << " sign " << sign;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The stop flag.

TEST(BoundedForward, RaisedStopMakesErrorsThatNeedTheSpectralBoundInfinite) {
  Rng rng(6000);
  ReluNetwork net = deep_network(rng);
  const Eigen::MatrixXd x = small_integers(rng, net.input_width, 3);
  center_on_first_column(net, x);
  const Eigen::VectorXd none = Eigen::VectorXd::Zero(net.input_width);
  Eigen::RowVectorXd reference_error;
  const Eigen::RowVectorXd reference = BoundedForward(net).logits(x, none, reference_error);

  BoundedForward f(net);
  std::atomic<bool> stop{true};
  f.set_stop(&stop);
  Eigen::RowVectorXd error;
  const Eigen::RowVectorXd z = f.logits(x, none, error);
  EXPECT_EQ(z, reference);  // the logits themselves are still computed
  ASSERT_EQ(error.size(), x.cols());
  for (Eigen::Index j = 0; j < x.cols(); ++j) EXPECT_EQ(error(j), std::numeric_limits<double>::infinity());
  // Lowered again: the spectral bounds are computed after all, as by an instance never stopped.
  stop = false;
  Rng check_rng(6001);
  const Checked c = check_columns(net, f, x, none, check_rng, "after the stop");
  EXPECT_EQ(c.error, reference_error);
}

TEST(BoundedForward, RaisedStopDoesNotMatterWhenTheSpectralBoundIsNotNeeded) {
  Rng rng(7000);
  std::atomic<bool> stop{true};
  // Two layers: never spectral, even at the threshold.
  ReluNetwork shallow = random_network(rng, {5, 20, 1}, Weights::He);
  const Eigen::MatrixXd xs = random_inputs(rng, 5, 4);
  center_on_first_column(shallow, xs);
  BoundedForward fs(shallow);
  fs.set_stop(&stop);
  check_columns(shallow, fs, xs, Eigen::VectorXd::Zero(5), rng, "shallow");
  // Deep, but every logit is decided componentwise.
  ReluNetwork deep = deep_network(rng);
  deep.threshold = 1e6;
  const Eigen::MatrixXd xd = small_integers(rng, deep.input_width, 3);
  BoundedForward fd(deep);
  fd.set_stop(&stop);
  check_columns(deep, fd, xd, Eigen::VectorXd::Zero(deep.input_width), rng, "deep");
}

// A stop raised while the spectral bound of a wide layer is being computed (about half a second
// here) ends the computation within a row block of its matrix products, not at the end of the
// layer. The first layer is narrow (quick), so that the stop comes during the wide one.
TEST(BoundedForward, StopDuringTheSpectralBoundsEndsThemWithinARowBlock) {
  using Clock = std::chrono::steady_clock;
  Rng rng(8000);
  constexpr int kWide = 1200;
  ReluNetwork net = random_network(rng, {3, kWide, kWide, 1}, Weights::He);
  const Eigen::MatrixXd x = small_integers(rng, 3, 2);
  center_on_first_column(net, x);
  // How long one row block takes (the spectral bounds watch the flag between blocks of 128 rows).
  const Eigen::MatrixXd& w = net.layers[1].weights;
  const Clock::time_point block_start = Clock::now();
  const Eigen::MatrixXd block = w.topRows(128) * w.transpose();
  const double block_seconds = std::chrono::duration<double>(Clock::now() - block_start).count();
  ASSERT_TRUE(block.allFinite());

  BoundedForward f(net);
  std::atomic<bool> stop{false};
  f.set_stop(&stop);
  Clock::time_point raised;
  std::thread raise([&stop, &raised] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    raised = Clock::now();
    stop = true;
  });
  Eigen::RowVectorXd error;
  const Eigen::RowVectorXd z = f.logits(x, Eigen::VectorXd::Zero(3), error);
  const Clock::time_point returned = Clock::now();
  raise.join();
  if (returned < raised) GTEST_SKIP() << "the spectral bounds were done before the stop was raised";
  EXPECT_TRUE(std::isfinite(z(0)));
  EXPECT_EQ(error(0), std::numeric_limits<double>::infinity());
  const double late = std::chrono::duration<double>(returned - raised).count();
  EXPECT_LT(late, 5.0 * block_seconds + 0.05) << "one row block takes " << block_seconds << " s";
  RecordProperty("block_seconds", sci(block_seconds));
  RecordProperty("seconds_after_stop", sci(late));
}

}  // namespace
}  // namespace witness
