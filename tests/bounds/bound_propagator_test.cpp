#include "bounds/bound_propagator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bounds/relu_network.h"
#include "model/evaluator.h"
#include "model/loaders.h"
#include "model/model.h"
#include "solver/rational.h"
#include "support/paths.h"
#include "support/sanitized.h"

namespace witness {
namespace {

using test::source_path;

// ---------------------------------------------------------------------------------------------
// Exact evaluation: every weight, bias and input is the exact value of its double.

struct ExactNet {
  std::vector<std::vector<std::vector<Rational>>> w;  // [layer][out][in]
  std::vector<std::vector<Rational>> b;               // [layer][out]
};

std::vector<Rational> exact_point(const Eigen::VectorXd& x) {
  std::vector<Rational> out;
  out.reserve(static_cast<std::size_t>(x.size()));
  for (Eigen::Index i = 0; i < x.size(); ++i) out.push_back(Rational::from_double(x(i)));
  return out;
}

ExactNet exact_of(const ReluNetwork& net) {
  ExactNet e;
  for (const auto& layer : net.layers) {
    std::vector<std::vector<Rational>>& rows = e.w.emplace_back();
    for (Eigen::Index r = 0; r < layer.weights.rows(); ++r)
      rows.push_back(exact_point(layer.weights.row(r).transpose()));
    e.b.push_back(exact_point(layer.bias));
  }
  return e;
}

// Every layer's exact pre-activations h_k at the exact input a.
std::vector<std::vector<Rational>> exact_pre(const ExactNet& e, std::vector<Rational> a) {
  std::vector<std::vector<Rational>> out;
  for (std::size_t k = 0; k < e.w.size(); ++k) {
    std::vector<Rational> h = e.b[k];
    for (std::size_t r = 0; r < h.size(); ++r) {
      for (std::size_t c = 0; c < a.size(); ++c) {
        if (e.w[k][r][c].sign() != 0 && a[c].sign() != 0) h[r] += e.w[k][r][c] * a[c];
      }
    }
    out.push_back(h);
    a = std::move(h);
    for (auto& v : a) {
      if (v.sign() < 0) v = Rational(0);
    }
  }
  return out;
}

// lo <= v <= hi, exactly (an infinite bound is no bound; NaN is a failure).
::testing::AssertionResult contains(double lo, double hi, const Rational& v) {
  if (std::isnan(lo) || std::isnan(hi)) return ::testing::AssertionFailure() << "NaN bound";
  if (!std::isinf(lo) && Rational::from_double(lo) > v)
    return ::testing::AssertionFailure() << "value " << v.to_double() << " (" << v << ") below lo " << lo;
  if (!std::isinf(hi) && Rational::from_double(hi) < v)
    return ::testing::AssertionFailure() << "value " << v.to_double() << " (" << v << ") above hi " << hi;
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------------------------------------
// Random networks and boxes: mixed magnitudes, exact zeros, cancellation.

double random_weight(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> kind(0, 9);
  switch (kind(rng)) {
    case 0:
    case 1: return 0.0;                                                   // exact zeros
    case 2: return u(rng) * 1e3;                                          // large
    case 3: return u(rng) * 1e-3;                                         // small
    case 4: return std::uniform_int_distribution<int>(-8, 8)(rng) / 8.0;  // dyadic
    case 5: return (u(rng) > 0 ? 1.0 : -1.0) * (1.0 + u(rng) * 0x1p-40);  // near +-1
    default: return u(rng) * 2.0;
  }
}

ReluNetwork random_network(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  ReluNetwork net;
  const int depth = 1 + static_cast<int>(seed % 4);  // 1 .. 4 layers, the last one the logit
  net.input_width = std::uniform_int_distribution<int>(1, 6)(rng);
  int width = net.input_width;
  for (int k = 0; k < depth; ++k) {
    const int out = k + 1 == depth ? 1 : std::uniform_int_distribution<int>(1, 8)(rng);
    ReluNetwork::Layer layer{Eigen::MatrixXd(out, width), Eigen::VectorXd(out)};
    for (int r = 0; r < out; ++r) {
      for (int c = 0; c < width; ++c) layer.weights(r, c) = random_weight(rng);
      layer.bias(r) = random_weight(rng);
    }
    // Every other network has a hidden row that nearly cancels another (1e8 - 1e8 + small).
    if (seed % 2 == 0 && out >= 2 && k + 1 < depth) {
      layer.weights.row(1) = -layer.weights.row(0) * 1e8;
      layer.weights.row(0) *= 1e8;
      layer.weights(1, 0) += 0.5;
    }
    net.layers.push_back(std::move(layer));
    width = out;
  }
  net.threshold = 0.0;
  return net;
}

struct Box {
  Eigen::VectorXd lo, hi;
};

Box random_box(std::mt19937_64& rng, int n) {
  Box b{Eigen::VectorXd(n), Eigen::VectorXd(n)};
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> kind(0, 4);
  for (int i = 0; i < n; ++i) {
    const double scale = kind(rng) == 0 ? 100.0 : 1.0;
    const double a = u(rng) * scale;
    const int k = kind(rng);
    if (k == 0) {  // degenerate
      b.lo(i) = b.hi(i) = a;
    } else if (k == 1) {  // an integer point
      b.lo(i) = b.hi(i) = std::round(a * 4.0);
    } else {
      b.lo(i) = a;
      b.hi(i) = a + std::abs(u(rng)) * scale;
    }
  }
  return b;
}

// Points of the box: every corner (up to 2^6), the centre, and random points (some on faces).
std::vector<Eigen::VectorXd> sample_points(std::mt19937_64& rng, const Box& box, int random_count) {
  const auto n = static_cast<int>(box.lo.size());
  std::vector<Eigen::VectorXd> out;
  for (int mask = 0; mask < (1 << n); ++mask) {
    Eigen::VectorXd x(n);
    for (int i = 0; i < n; ++i) x(i) = ((mask >> i) & 1) != 0 ? box.hi(i) : box.lo(i);
    out.push_back(x);
  }
  out.emplace_back((box.lo + box.hi) / 2.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int s = 0; s < random_count; ++s) {
    Eigen::VectorXd x(n);
    for (int i = 0; i < n; ++i) {
      const double r = u(rng);
      x(i) = r < 0.15 ? box.lo(i) : r > 0.85 ? box.hi(i) : box.lo(i) + u(rng) * (box.hi(i) - box.lo(i));
      x(i) = std::clamp(x(i), box.lo(i), box.hi(i));
    }
    out.push_back(x);
  }
  return out;
}

constexpr int kNetworks = 50;

// body(net, rng) for each of the first `networks` random networks (seeds 700, 701, ...) under a
// trace naming it, with an rng seeded rng_seed + s; stops at the first fatal failure, as a loop would.
template <class Body>
void for_each_network(std::uint64_t rng_seed, int networks, Body&& body) {
  for (int s = 0; s < networks; ++s) {
    SCOPED_TRACE("network " + std::to_string(s));
    const ReluNetwork net = random_network(700 + static_cast<std::uint64_t>(s));
    std::mt19937_64 rng(rng_seed + static_cast<std::uint64_t>(s));
    body(net, rng);
    if (::testing::Test::HasFatalFailure()) return;
  }
}
template <class Body>
void for_each_network(std::uint64_t rng_seed, Body&& body) {
  for_each_network(rng_seed, kNetworks, std::forward<Body>(body));
}
// The heaviest exact checks (rational arithmetic at every sampled point) see 20 of them under the
// sanitizers.
const int kExactNetworks = test::sized(kNetworks, 20);

// Every layer's exact pre-activations at every point lie in the bounds.
void expect_sound(const NetworkBounds& nb, const ExactNet& e, const std::vector<Eigen::VectorXd>& points,
                  const std::string& what) {
  ASSERT_EQ(nb.lo.size(), e.w.size());
  ASSERT_EQ(nb.hi.size(), e.w.size());
  for (const Eigen::VectorXd& x : points) {
    const std::vector<std::vector<Rational>> h = exact_pre(e, exact_point(x));
    for (std::size_t k = 0; k < h.size(); ++k) {
      ASSERT_EQ(nb.lo[k].size(), static_cast<Eigen::Index>(h[k].size()));
      for (std::size_t i = 0; i < h[k].size(); ++i) {
        const auto ii = static_cast<Eigen::Index>(i);
        EXPECT_TRUE(contains(nb.lo[k](ii), nb.hi[k](ii), h[k][i]))
            << what << ": layer " << k << " neuron " << i << " at x = " << x.transpose();
      }
    }
  }
}

TEST(BoundPropagator, BoundsAndIntervalsContainTheExactValues) {
  int unstable = 0;  // ReLUs whose bounds straddle 0 (the relaxation is exercised)
  for_each_network(9000, [&](const ReluNetwork& net, std::mt19937_64& rng) {
    const ExactNet e = exact_of(net);
    const BoundPropagator bp(net);
    for (int b = 0; b < 3; ++b) {
      const Box box = random_box(rng, net.input_width);
      const NetworkBounds deep = bp.bounds(box.lo, box.hi);
      const NetworkBounds iv = bp.intervals(box.lo, box.hi);
      const std::vector<Eigen::VectorXd> points = sample_points(rng, box, 24);
      expect_sound(deep, e, points, "bounds");
      expect_sound(iv, e, points, "intervals");
      for (std::size_t k = 0; k + 1 < deep.lo.size(); ++k) {
        unstable += static_cast<int>(((deep.lo[k].array() < 0.0) && (deep.hi[k].array() > 0.0)).count());
      }
      EXPECT_EQ(deep.output().lo, deep.lo.back()(0));
      EXPECT_EQ(deep.output().hi, deep.hi.back()(0));
      ASSERT_EQ(deep.lower_coef.size(), net.input_width);
      ASSERT_EQ(deep.upper_coef.size(), net.input_width);
    }
  });
  EXPECT_GT(unstable, 50);
}

// The output's linear bounds hold at every point: L(x) - lower_err <= z(x) <= U(x) + upper_err,
// with L and U evaluated exactly.
void expect_linear_bounds(const NetworkBounds& nb, const ExactNet& e, const std::vector<Eigen::VectorXd>& points,
                          const std::string& what) {
  for (const Eigen::VectorXd& x : points) {
    const std::vector<Rational> xe = exact_point(x);
    const Rational z = exact_pre(e, xe).back()[0];
    Rational l = Rational::from_double(nb.lower_const), u = Rational::from_double(nb.upper_const);
    for (Eigen::Index k = 0; k < x.size(); ++k) {
      l += Rational::from_double(nb.lower_coef(k)) * xe[static_cast<std::size_t>(k)];
      u += Rational::from_double(nb.upper_coef(k)) * xe[static_cast<std::size_t>(k)];
    }
    EXPECT_TRUE(l - Rational::from_double(nb.lower_err) <= z) << what << ": lower bound above z at " << x.transpose();
    EXPECT_TRUE(z <= u + Rational::from_double(nb.upper_err)) << what << ": upper bound below z at " << x.transpose();
  }
}

// Both modes of the hidden layers (back-substitution, and the forward symbolic propagation chosen
// for wide deep networks) contain the exact values, and their output's linear bounds hold.
TEST(BoundPropagator, BothModesContainTheExactValuesAndLinearBoundsHold) {
  int unstable = 0;
  for_each_network(9100, kExactNetworks, [&](const ReluNetwork& net, std::mt19937_64& rng) {
    const ExactNet e = exact_of(net);
    BoundPropagator backward(net), forward(net);
    backward.set_forward_mode(false);
    forward.set_forward_mode(true);
    for (int b = 0; b < 3; ++b) {
      const Box box = random_box(rng, net.input_width);
      const std::vector<Eigen::VectorXd> points = sample_points(rng, box, 24);
      const NetworkBounds nb = backward.bounds(box.lo, box.hi), nf = forward.bounds(box.lo, box.hi);
      expect_sound(nb, e, points, "back-substitution");
      expect_sound(nf, e, points, "forward");
      expect_linear_bounds(nb, e, points, "back-substitution");
      expect_linear_bounds(nf, e, points, "forward");
      for (std::size_t k = 0; k + 1 < nf.lo.size(); ++k)
        unstable += static_cast<int>(((nf.lo[k].array() < 0.0) && (nf.hi[k].array() > 0.0)).count());
    }
  });
  EXPECT_GT(unstable, 50);
}

TEST(BoundPropagator, WideDeepNetworksUseForwardMode) {
  ReluNetwork wide;
  wide.input_width = 4;
  int in = 4;
  for (int k = 0; k < 6; ++k) {
    wide.layers.push_back({Eigen::MatrixXd::Random(400, in), Eigen::VectorXd::Random(400)});
    in = 400;
  }
  wide.layers.push_back({Eigen::MatrixXd::Random(1, in), Eigen::VectorXd::Random(1)});
  EXPECT_TRUE(BoundPropagator(wide).forward_mode());
  EXPECT_FALSE(BoundPropagator(random_network(700)).forward_mode());
}

// An affine network (no ReLU can be inactive) reaches its bounds at corners of the box, so any
// rounding error left out of the bounds would show: the exact extremes must lie inside.
TEST(BoundPropagator, AffineNetworksAreBoundedAtTheCorners) {
  for (int s = 0; s < 20; ++s) {
    SCOPED_TRACE("network " + std::to_string(s));
    std::mt19937_64 rng(300 + static_cast<std::uint64_t>(s));
    ReluNetwork net = random_network(400 + static_cast<std::uint64_t>(s) * 4);  // depth 1
    ASSERT_EQ(net.layers.size(), 1U);
    const ExactNet e = exact_of(net);
    const BoundPropagator bp(net);
    const Box box = random_box(rng, net.input_width);
    const NetworkBounds nb = bp.bounds(box.lo, box.hi);
    const std::vector<Eigen::VectorXd> corners = sample_points(rng, box, 0);
    expect_sound(nb, e, corners, "bounds");
    // Tight: within a relative 1e-9 of the exact range.
    Rational lo = exact_pre(e, exact_point(corners[0]))[0][0], hi = lo;
    for (const auto& x : corners) {
      const Rational v = exact_pre(e, exact_point(x))[0][0];
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    const Eigen::VectorXd amax = box.lo.cwiseAbs().cwiseMax(box.hi.cwiseAbs());
    const double scale = 1.0 + (net.layers[0].weights.cwiseAbs() * amax)(0) + std::abs(net.layers[0].bias(0));
    EXPECT_NEAR(nb.output().lo, lo.to_double(), 1e-9 * scale);
    EXPECT_NEAR(nb.output().hi, hi.to_double(), 1e-9 * scale);
  }
}

// Small boxes around random points: most ReLUs are stable, the network is (nearly) affine on the
// box, DeepPoly is exact up to rounding and the extremes sit at corners. Here a missing rounding
// term would make a corner's exact value fall outside.
void small_boxes_at_corners(int networks, int boxes, std::uint64_t seed0) {
  int stable_networks = 0;
  for (int s = 0; s < networks; ++s) {
    const ReluNetwork net = random_network(seed0 + static_cast<std::uint64_t>(s));
    const ExactNet e = exact_of(net);
    const BoundPropagator bp(net);
    std::mt19937_64 rng(seed0 * 7 + static_cast<std::uint64_t>(s));
    std::uniform_real_distribution<double> u(-3.0, 3.0);
    std::uniform_int_distribution<int> exponent(-40, -2);
    for (int b = 0; b < boxes; ++b) {
      Box box{Eigen::VectorXd(net.input_width), Eigen::VectorXd(net.input_width)};
      const double width = std::ldexp(1.0, exponent(rng));
      for (int i = 0; i < net.input_width; ++i) {
        box.lo(i) = u(rng);
        box.hi(i) = box.lo(i) + width * std::abs(u(rng));
      }
      const NetworkBounds nb = bp.bounds(box.lo, box.hi);
      bool stable = true;
      for (std::size_t k = 0; k + 1 < nb.lo.size(); ++k) {
        stable = stable && ((nb.lo[k].array() >= 0.0) || (nb.hi[k].array() <= 0.0)).all();
      }
      stable_networks += stable ? 1 : 0;
      std::vector<Eigen::VectorXd> corners = sample_points(rng, box, 0);
      SCOPED_TRACE("network " + std::to_string(seed0 + static_cast<std::uint64_t>(s)) + " box " + std::to_string(b));
      expect_sound(nb, e, corners, "bounds");
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_GT(stable_networks, networks / 4);
}

TEST(BoundPropagator, SmallBoxesAreBoundedAtTheCorners) { small_boxes_at_corners(kNetworks, 4, 20000); }
TEST(BoundPropagator, SmallBoxesAreBoundedAtTheCornersManyNetworksSlow) { small_boxes_at_corners(4000, 4, 100000); }

// A degenerate box is a point: the bounds are that point's values up to rounding.
TEST(BoundPropagator, PointBoxesAreTight) {
  for_each_network(55, [](const ReluNetwork& net, std::mt19937_64& rng) {
    const ExactNet e = exact_of(net);
    std::uniform_real_distribution<double> u(-3.0, 3.0);
    Eigen::VectorXd x(net.input_width);
    for (Eigen::Index i = 0; i < x.size(); ++i) x(i) = u(rng);
    const NetworkBounds nb = BoundPropagator(net).bounds(x, x);
    expect_sound(nb, e, {x}, "bounds");
    const Rational z = exact_pre(e, exact_point(x)).back()[0];
    double scale = 1.0;
    for (const auto& layer : net.layers) scale *= 1.0 + layer.weights.cwiseAbs().maxCoeff() * 10.0;
    scale *= 1.0 + x.cwiseAbs().maxCoeff();
    EXPECT_LE(nb.output().hi - nb.output().lo, 1e-9 * scale);
    EXPECT_NEAR(net.logit(x), z.to_double(), 1e-9 * scale);
  });
}

// DeepPoly starts from the interval bounds and only ever tightens them, layer by layer.
TEST(BoundPropagator, DeepPolyIsNeverLooserThanIntervals) {
  int tighter = 0;
  for_each_network(123, [&](const ReluNetwork& net, std::mt19937_64& rng) {
    const BoundPropagator bp(net);
    for (int b = 0; b < 5; ++b) {
      const Box box = random_box(rng, net.input_width);
      const NetworkBounds deep = bp.bounds(box.lo, box.hi);
      const NetworkBounds iv = bp.intervals(box.lo, box.hi);
      ASSERT_EQ(deep.lo.size(), iv.lo.size());
      for (std::size_t k = 0; k < deep.lo.size(); ++k) {
        for (Eigen::Index i = 0; i < deep.lo[k].size(); ++i) {
          EXPECT_GE(deep.lo[k](i), iv.lo[k](i)) << "layer " << k << " neuron " << i;
          EXPECT_LE(deep.hi[k](i), iv.hi[k](i)) << "layer " << k << " neuron " << i;
          EXPECT_LE(deep.lo[k](i), deep.hi[k](i)) << "layer " << k << " neuron " << i;
          tighter += deep.hi[k](i) < iv.hi[k](i) || deep.lo[k](i) > iv.lo[k](i) ? 1 : 0;
        }
      }
    }
  });
  EXPECT_GT(tighter, 20);  // and it does tighten something
}

// ---------------------------------------------------------------------------------------------
// difference(): two copies sharing every input but the "protected" ones.

struct PairBoxes {
  Box a, b;                  // the copies' boxes (equal outside the protected coordinates)
  Eigen::VectorXd dlo, dhi;  // bounds of x_a - x_b
  std::vector<bool> is_prot;
};

PairBoxes random_pair(std::mt19937_64& rng, int n) {
  PairBoxes p;
  p.a = random_box(rng, n);
  p.b = p.a;
  p.is_prot.assign(static_cast<std::size_t>(n), false);
  p.dlo = Eigen::VectorXd::Zero(n);
  p.dhi = Eigen::VectorXd::Zero(n);
  std::uniform_int_distribution<int> coin(0, 2);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  int count = 0;
  for (int i = 0; i < n; ++i) {
    if (coin(rng) != 0 && !(i + 1 == n && count == 0)) continue;  // at least one protected
    ++count;
    p.is_prot[static_cast<std::size_t>(i)] = true;
    // Protected values: a point (like one protected value) or a small range (a normalised input).
    const double va = std::round(u(rng) * 2.0) / 2.0, vb = std::round(u(rng) * 2.0) / 2.0;
    const double wa = coin(rng) == 0 ? 0.25 : 0.0, wb = coin(rng) == 0 ? 0.125 : 0.0;
    p.a.lo(i) = va;
    p.a.hi(i) = va + wa;
    p.b.lo(i) = vb;
    p.b.hi(i) = vb + wb;
    p.dlo(i) = (Rational::from_double(p.a.lo(i)) - Rational::from_double(p.b.hi(i))).to_double_down();
    p.dhi(i) = (Rational::from_double(p.a.hi(i)) - Rational::from_double(p.b.lo(i))).to_double_up();
  }
  return p;
}

TEST(BoundPropagator, DifferenceContainsTheExactDifference) {
  int nonzero = 0;
  for_each_network(4242, kExactNetworks, [&](const ReluNetwork& net, std::mt19937_64& rng) {
    const ExactNet e = exact_of(net);
    const BoundPropagator bp(net);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (int b = 0; b < 3; ++b) {
      const PairBoxes p = random_pair(rng, net.input_width);
      const NetworkBounds na = bp.bounds(p.a.lo, p.a.hi), nb = bp.bounds(p.b.lo, p.b.hi);
      const Interval d = bp.difference(na, nb, p.dlo, p.dhi);
      ASSERT_LE(d.lo, d.hi);
      nonzero += d.lo < 0.0 || d.hi > 0.0 ? 1 : 0;
      const std::vector<Eigen::VectorXd> shared = sample_points(rng, p.a, 16);
      for (const Eigen::VectorXd& x : shared) {
        for (int q = 0; q < 4; ++q) {  // the protected coordinates of both copies, at random
          Eigen::VectorXd xa = x, xb = x;
          for (Eigen::Index i = 0; i < x.size(); ++i) {
            if (!p.is_prot[static_cast<std::size_t>(i)]) continue;
            const double ra = q == 0 ? 0.0 : q == 1 ? 1.0 : u(rng), rb = q == 0 ? 1.0 : q == 1 ? 0.0 : u(rng);
            xa(i) = std::clamp(p.a.lo(i) + ra * (p.a.hi(i) - p.a.lo(i)), p.a.lo(i), p.a.hi(i));
            xb(i) = std::clamp(p.b.lo(i) + rb * (p.b.hi(i) - p.b.lo(i)), p.b.lo(i), p.b.hi(i));
          }
          const Rational za = exact_pre(e, exact_point(xa)).back()[0];
          const Rational zb = exact_pre(e, exact_point(xb)).back()[0];
          EXPECT_TRUE(contains(d.lo, d.hi, za - zb)) << "x = " << xa.transpose() << ", x' = " << xb.transpose();
          // And each copy's own bounds hold.
          EXPECT_TRUE(contains(na.output().lo, na.output().hi, za));
          EXPECT_TRUE(contains(nb.output().lo, nb.output().hi, zb));
        }
      }
    }
  });
  EXPECT_GT(nonzero, 10);
}

TEST(BoundPropagator, DifferenceIsExactlyZeroWithoutProtectedWeights) {
  for_each_network(31, [](const ReluNetwork& random, std::mt19937_64& rng) {
    ReluNetwork net = random;
    const PairBoxes p = random_pair(rng, net.input_width);
    for (Eigen::Index i = 0; i < net.input_width; ++i) {
      if (p.is_prot[static_cast<std::size_t>(i)]) net.layers[0].weights.col(i).setZero();
    }
    const BoundPropagator bp(net);
    const NetworkBounds na = bp.bounds(p.a.lo, p.a.hi), nb = bp.bounds(p.b.lo, p.b.hi);
    const Interval d = bp.difference(na, nb, p.dlo, p.dhi);
    EXPECT_EQ(d.lo, 0.0);
    EXPECT_EQ(d.hi, 0.0);
    // Also when the copies' boxes are the same and dx is zero everywhere.
    const Interval same =
        bp.difference(na, na, Eigen::VectorXd::Zero(net.input_width), Eigen::VectorXd::Zero(net.input_width));
    EXPECT_EQ(same.lo, 0.0);
    EXPECT_EQ(same.hi, 0.0);
  });
}

// ---------------------------------------------------------------------------------------------
// relu_network_of

Model chain_model(std::uint64_t seed, bool identity, int logits, int index, double threshold) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  auto draw = [&](int r, int c) {
    Eigen::MatrixXd m(r, c);
    for (int i = 0; i < r; ++i) {
      for (int j = 0; j < c; ++j) m(i, j) = u(rng);
    }
    return m;
  };
  ModelBuilder b("chain", {"x0", "x1", "x2"});
  int x = b.input();
  if (identity) x = b.unary(OpKind::Identity, x);
  x = b.relu(b.dense(x, draw(5, 3), draw(5, 1).col(0)));
  if (identity) x = b.unary(OpKind::Identity, x);
  x = b.relu(b.dense(x, draw(4, 5), draw(4, 1).col(0)));
  const int z = b.dense(x, draw(logits, 4), draw(logits, 1).col(0));
  const int rule_node = identity ? b.unary(OpKind::Identity, z) : z;
  return b.finish(b.sigmoid(z), DecisionRule::threshold_on(rule_node, threshold, index));
}

TEST(ReluNetworkOf, AcceptsDenseReluChainsAndMatchesTheEvaluator) {
  struct Case {
    bool identity;
    int logits, index;
    double threshold;
  };
  for (const Case c :
       {Case{false, 1, 0, 0.0}, Case{true, 1, 0, 0.25}, Case{false, 3, 1, -0.5}, Case{true, 2, 1, 0.0}}) {
    SCOPED_TRACE("logits " + std::to_string(c.logits) + " index " + std::to_string(c.index));
    const Model m = chain_model(17 + static_cast<std::uint64_t>(c.logits), c.identity, c.logits, c.index, c.threshold);
    std::string why = "untouched";
    const std::optional<ReluNetwork> net = relu_network_of(m, &why);
    ASSERT_TRUE(net.has_value()) << why;
    EXPECT_EQ(why, "untouched");
    EXPECT_EQ(net->input_width, 3);
    EXPECT_EQ(net->threshold, c.threshold);
    ASSERT_EQ(net->layers.size(), 3U);
    EXPECT_EQ(net->layers.back().weights.rows(), 1);
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(-4.0, 4.0);
    Eigen::MatrixXd x(3, 200);
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      for (Eigen::Index i = 0; i < 3; ++i) x(i, j) = u(rng);
    }
    const Evaluation ev = evaluate(m, x);
    const Eigen::RowVectorXd zs = net->logits(x);
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      const double want = ev.decision(c.index, j);
      EXPECT_NEAR(net->logit(x.col(j)), want, 1e-12 * (1.0 + std::abs(want)));
      EXPECT_NEAR(zs(j), net->logit(x.col(j)), 1e-12 * (1.0 + std::abs(want)));  // batched: another order
      EXPECT_EQ(ev.labels[static_cast<std::size_t>(j)], net->logit(x.col(j)) > net->threshold ? 1 : 0);
    }
  }
  // A single Dense layer (a linear model) is a network too.
  ModelBuilder b("linear", {"x0", "x1"});
  const int z = b.dense(b.input(), Eigen::MatrixXd::Ones(1, 2), Eigen::VectorXd::Constant(1, -1.0));
  const Model lin = b.finish(z, DecisionRule::threshold_on(z, 0.0));
  const std::optional<ReluNetwork> net = relu_network_of(lin, nullptr);
  ASSERT_TRUE(net.has_value());
  EXPECT_EQ(net->layers.size(), 1U);
  EXPECT_EQ(net->logit(Eigen::Vector2d(1.0, 0.5)), 0.5);
}

TEST(ReluNetwork, GradientMatchesDifferenceQuotientsAwayFromKinks) {
  int checked = 0;
  for (int s = 0; s < 60; s += 2) {  // odd seeds only: no near-cancelling rows
    const ReluNetwork net = random_network(900 + static_cast<std::uint64_t>(s) + 1);
    std::mt19937_64 rng(static_cast<std::uint64_t>(s));
    for (int round = 0; round < 20; ++round) {
      Eigen::VectorXd x(net.input_width);
      for (Eigen::Index i = 0; i < x.size(); ++i) x(i) = std::uniform_real_distribution<double>(-3, 3)(rng);
      Eigen::VectorXd g;
      const double z = net.logit(x, g);
      EXPECT_EQ(z, net.logit(x));
      ASSERT_EQ(g.size(), net.input_width);
      for (Eigen::Index i = 0; i < x.size(); ++i) {
        // The network is linear on a small enough neighbourhood unless x sits on a kink; a
        // central difference that agrees with both one-sided ones shows there is none nearby.
        const double h = 1e-3;
        Eigen::VectorXd up = x, down = x;
        up(i) += h;
        down(i) -= h;
        const double right = (net.logit(up) - z) / h;
        const double left = (z - net.logit(down)) / h;
        if (std::abs(right - left) > 1e-4 * (1 + std::abs(right))) continue;
        EXPECT_NEAR(g(i), right, 1e-4 * (1 + std::abs(right)));
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 500);
}

// Two class scores under argmax (scikit-learn's binary classifiers) are one logit z1 - z0 > 0
// when the difference is exact; ties go to class 0, as argmax breaks them.
TEST(ReluNetworkOf, TwoClassArgmaxIsOneLogitWhenTheDifferenceIsExact) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::MatrixXd w1(4, 3), w2(2, 4);
  for (Eigen::Index i = 0; i < w1.size(); ++i) w1(i) = u(rng);
  for (Eigen::Index k = 0; k < 4; ++k) w2(1, k) = u(rng), w2(0, k) = -w2(1, k);  // [-w, w], as skl2onnx writes
  ModelBuilder b("two", {"x0", "x1", "x2"});
  const int z = b.dense(b.relu(b.dense(b.input(), w1, Eigen::VectorXd::Zero(4))), w2, Eigen::Vector2d(-0.25, 0.25));
  const Model m = b.finish(b.unary(OpKind::Softmax, z), DecisionRule::argmax_of(z));
  std::string why;
  const std::optional<ReluNetwork> net = relu_network_of(m, &why);
  ASSERT_TRUE(net.has_value()) << why;
  EXPECT_EQ(net->threshold, 0.0);
  EXPECT_EQ(net->layers.back().weights.rows(), 1);
  Eigen::MatrixXd x(3, 300);
  for (Eigen::Index i = 0; i < x.size(); ++i) x(i) = 3.0 * u(rng);
  x.col(0).setZero();  // z1 - z0 = 0.5 there; and a tie below
  const Evaluation ev = evaluate(m, x);
  for (Eigen::Index j = 0; j < x.cols(); ++j)
    EXPECT_EQ(ev.labels[static_cast<std::size_t>(j)], net->logit(x.col(j)) > net->threshold ? 1 : 0) << j;
  {  // equal scores: class 0 under argmax, and z1 - z0 = 0 is not above 0
    ModelBuilder t("tie", {"x0"});
    const int s2 = t.dense(t.input(), Eigen::Vector2d(1.0, 1.0), Eigen::Vector2d(0.5, 0.5));
    const Model tie = t.finish(s2, DecisionRule::argmax_of(s2));
    const std::optional<ReluNetwork> tn = relu_network_of(tie, nullptr);
    ASSERT_TRUE(tn.has_value());
    EXPECT_EQ(evaluate(tie, Eigen::MatrixXd::Constant(1, 1, 2.0)).labels[0], 0);
    EXPECT_FALSE(tn->logit(Eigen::VectorXd::Constant(1, 2.0)) > tn->threshold);
  }
  {  // a difference that rounds in double: refused, with the reason
    ModelBuilder r("rounds", {"x0"});
    const int s2 = r.dense(r.input(), Eigen::Vector2d(0.1, 1e-17), Eigen::Vector2d::Zero());
    const Model m2 = r.finish(s2, DecisionRule::argmax_of(s2));
    EXPECT_FALSE(relu_network_of(m2, &why).has_value());
    EXPECT_NE(why.find("rounds"), std::string::npos) << why;
  }
}

TEST(ReluNetworkOf, RejectsOtherModelsWithAReason) {
  const Eigen::MatrixXd w = Eigen::MatrixXd::Ones(2, 2);
  const Eigen::VectorXd zero2 = Eigen::VectorXd::Zero(2);
  {  // Tanh between the layers
    ModelBuilder b("tanh", {"x0", "x1"});
    const int h = b.unary(OpKind::Tanh, b.dense(b.input(), w, zero2), "squash");
    const int z = b.dense(h, Eigen::MatrixXd::Ones(1, 2), Eigen::VectorXd::Zero(1));
    const Model m = b.finish(b.sigmoid(z), DecisionRule::threshold_on(z, 0.0));
    std::string why;
    EXPECT_FALSE(relu_network_of(m, &why).has_value());
    EXPECT_NE(why.find("squash"), std::string::npos) << why;
    EXPECT_NE(why.find("Tanh"), std::string::npos) << why;
    EXPECT_FALSE(relu_network_of(m, nullptr).has_value());  // no reason wanted
  }
  {  // an argmax rule over three classes
    ModelBuilder b("argmax", {"x0", "x1"});
    const int z = b.dense(b.relu(b.dense(b.input(), w, zero2)), Eigen::MatrixXd::Ones(3, 2), Eigen::VectorXd::Zero(3));
    const Model m = b.finish(b.unary(OpKind::Softmax, z), DecisionRule::argmax_of(z));
    std::string why;
    EXPECT_FALSE(relu_network_of(m, &why).has_value());
    EXPECT_NE(why.find("rule"), std::string::npos) << why;
    EXPECT_FALSE(why.empty());
  }
  {  // LeakyRelu
    ModelBuilder b("leaky", {"x0", "x1"});
    const int h = b.unary(OpKind::LeakyRelu, b.dense(b.input(), w, zero2), "leaky_relu", 0.1);
    const int z = b.dense(h, Eigen::MatrixXd::Ones(1, 2), Eigen::VectorXd::Zero(1));
    const Model m = b.finish(z, DecisionRule::threshold_on(z, 0.0));
    std::string why;
    EXPECT_FALSE(relu_network_of(m, &why).has_value());
    EXPECT_NE(why.find("leaky_relu"), std::string::npos) << why;
  }
  {  // a rule that reads a ReLU, not a Dense layer
    ModelBuilder b("relu_out", {"x0", "x1"});
    const int h = b.relu(b.dense(b.input(), w, zero2), "last_relu");
    const Model m = b.finish(h, DecisionRule::threshold_on(h, 0.0));
    std::string why;
    EXPECT_FALSE(relu_network_of(m, &why).has_value());
    EXPECT_NE(why.find("last_relu"), std::string::npos) << why;
  }
}

// ---------------------------------------------------------------------------------------------
// A Fairify network (adult's 13 raw codes in, 50 hidden ReLUs) on an integer box: the bounds hold
// exactly at random integer points. (test_bounds does not link the schema layer: a plain box.)

TEST(BoundPropagator, FairifyAC1BoundsHoldOnAnIntegerBox) {
  const Model m = load_model(source_path("benchmarks/fairify/models/adult/AC1.h5"));
  std::string why;
  const std::optional<ReluNetwork> net = relu_network_of(m, &why);
  ASSERT_TRUE(net.has_value()) << why;
  const int n = net->input_width;
  ASSERT_EQ(n, 13);
  const Eigen::VectorXd lo = Eigen::VectorXd::Zero(n);
  Eigen::VectorXd hi(n);
  for (int i = 0; i < n; ++i) hi(i) = i % 3 == 0 ? 90 : i % 3 == 1 ? 15 : 1;
  const BoundPropagator bp(*net);
  const NetworkBounds nb = bp.bounds(lo, hi);
  const NetworkBounds iv = bp.intervals(lo, hi);
  const ExactNet e = exact_of(*net);
  std::mt19937_64 rng(1);
  std::vector<Eigen::VectorXd> points;
  for (int j = 0; j < 40; ++j) {
    Eigen::VectorXd x(n);
    for (int f = 0; f < n; ++f) {
      x(f) = std::uniform_int_distribution<int>(static_cast<int>(lo(f)), static_cast<int>(hi(f)))(rng);
    }
    points.push_back(x);
    const Eigen::MatrixXd col = x;
    const double want = evaluate(m, col).decision(m.rule.index, 0);
    EXPECT_NEAR(net->logit(x), want, 1e-9 * (1.0 + std::abs(want)));
  }
  expect_sound(nb, e, points, "bounds");
  expect_sound(iv, e, points, "intervals");
  // Half the box in one input: still sound, and no looser than the whole box.
  Eigen::VectorXd hi2 = hi;
  hi2(0) = std::floor((lo(0) + hi(0)) / 2.0);
  const NetworkBounds half = bp.bounds(lo, hi2);
  EXPECT_LE(half.output().hi, nb.output().hi);
  EXPECT_GE(half.output().lo, nb.output().lo);
  std::vector<Eigen::VectorXd> inside;
  for (Eigen::VectorXd x : points) {
    x(0) = std::min(x(0), hi2(0));
    inside.push_back(x);
  }
  expect_sound(half, e, inside, "half box");
}

TEST(BoundPropagator, AddHelpersRoundOutward) {
  EXPECT_LT(add_down(0.1, 0.2), 0.1 + 0.2);
  EXPECT_GT(add_up(0.1, 0.2), 0.1 + 0.2);
  const Rational exact = Rational::from_double(0.1) + Rational::from_double(0.2);
  EXPECT_LE(Rational::from_double(add_down(0.1, 0.2)), exact);
  EXPECT_GE(Rational::from_double(add_up(0.1, 0.2)), exact);
  EXPECT_LT(add_down(1.0, 0.0), 1.0);  // one step even when exact
  EXPECT_GT(add_up(1.0, 0.0), 1.0);
}

}  // namespace
}  // namespace witness
