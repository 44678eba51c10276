#include "bounds/bound_propagator.h"

#include <cmath>
#include <limits>
#include <vector>

#include "bounds/roundoff.h"

namespace witness {
namespace {

using roundoff::kTiny;
using roundoff::kUnit;
double gamma(Eigen::Index n) { return roundoff::dot_error(n); }

Eigen::VectorXd abs_max(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) {
  return lo.cwiseAbs().cwiseMax(hi.cwiseAbs());
}

// A number at least one ulp above (below) x: cheaper than std::nextafter, which is a libm call on
// the hottest path, and never less safe (it may move two ulps).
double step_up(double x) {
  if (!std::isfinite(x)) return x < 0.0 ? -std::numeric_limits<double>::max() : x;  // as nextafter
  return x + (std::abs(x) * 0x1p-51 + 0x1p-1074);
}
double step_down(double x) {
  if (!std::isfinite(x)) return x > 0.0 ? std::numeric_limits<double>::max() : x;
  return x - (std::abs(x) * 0x1p-51 + 0x1p-1074);
}

// lo - err rounded down, hi + err rounded up, elementwise.
void widen(Eigen::VectorXd& lo, Eigen::VectorXd& hi, const Eigen::VectorXd& err) {
  for (Eigen::Index i = 0; i < lo.size(); ++i) {
    lo(i) = step_down(lo(i) - err(i));
    hi(i) = step_up(hi(i) + err(i));
  }
}

}  // namespace

double add_down(double a, double b) { return step_down(a + b); }
double add_up(double a, double b) { return step_up(a + b); }

BoundPropagator::BoundPropagator(const ReluNetwork& net) : net_(net) {
  // Back-substitution of every hidden layer through the layers below it, against one forward pass
  // of linear functions over the inputs (multiply-adds, every neuron assumed unstable).
  double backward = 0.0, forward = 0.0;
  std::vector<double> width{static_cast<double>(net.input_width)};
  for (const auto& layer : net.layers) width.push_back(static_cast<double>(layer.weights.rows()));
  for (std::size_t k = 0; k + 1 < net.layers.size(); ++k) {
    forward += 2.0 * width[k + 1] * width[k] * (width[0] + 1.0);
    for (std::size_t j = 0; j < k; ++j) backward += 2.0 * width[k + 1] * width[j + 1] * width[j];
  }
  forward_ = backward > 8.0 * forward;
  for (const auto& layer : net.layers) {
    abs_weights_.emplace_back(layer.weights.cwiseAbs());
    pos_weights_.emplace_back(layer.weights.cwiseMax(0.0));
    nonzero_weights_.emplace_back((layer.weights.array() != 0.0).cast<double>().matrix());
    neg_weights_.emplace_back(layer.weights.cwiseMin(0.0));
  }
}

NetworkBounds BoundPropagator::intervals(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) const {
  NetworkBounds nb;
  Eigen::VectorXd alo = lo, ahi = hi, amax = abs_max(lo, hi);
  for (std::size_t k = 0; k < net_.layers.size(); ++k) {
    const auto& layer = net_.layers[k];
    Eigen::VectorXd l = pos_weights_[k] * alo + neg_weights_[k] * ahi + layer.bias;
    Eigen::VectorXd h = pos_weights_[k] * ahi + neg_weights_[k] * alo + layer.bias;
    const Eigen::VectorXd err =
        (gamma(layer.weights.cols() + 1) * (abs_weights_[k] * amax + layer.bias.cwiseAbs())).array() + kTiny;
    widen(l, h, err);
    nb.lo.push_back(l);
    nb.hi.push_back(h);
    alo = l.cwiseMax(0.0);
    ahi = h.cwiseMax(0.0);
    amax = ahi;
  }
  return nb;
}

NetworkBounds BoundPropagator::bounds(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) const {
  NetworkBounds nb;
  std::vector<Eigen::VectorXd> amax{abs_max(lo, hi)};  // amax[k]: |a_{k-1}| bound (inputs first)
  std::vector<Eigen::VectorXd> wa;                     // wa[k] = |W_k| amax[k] + |b_k|
  Eigen::VectorXd alo = lo, ahi = hi;
  SymbolicLayer sym;  // forward mode: the activations' linear bounds over the inputs
  if (forward_) {
    const Eigen::Index n0 = lo.size();
    sym.lower = sym.upper = Eigen::MatrixXd::Identity(n0, n0 + 1);
    sym.lower_err = sym.upper_err = Eigen::VectorXd::Zero(n0);
  }
  for (std::size_t k = 0; k < net_.layers.size(); ++k) {
    if (stopped()) {
      nb.interrupted = true;
      return nb;
    }
    const auto& layer = net_.layers[k];
    Eigen::VectorXd l = pos_weights_[k] * alo + neg_weights_[k] * ahi + layer.bias;
    Eigen::VectorXd h = pos_weights_[k] * ahi + neg_weights_[k] * alo + layer.bias;
    wa.emplace_back(abs_weights_[k] * amax[k] + layer.bias.cwiseAbs());
    const Eigen::VectorXd err = (gamma(layer.weights.cols() + 1) * wa[k]).array() + kTiny;
    widen(l, h, err);
    nb.lo.push_back(l);
    nb.hi.push_back(h);
    if (k + 1 < net_.layers.size()) {
      nb.input_sensitivity.emplace_back(k == 0 ? abs_weights_[0]
                                               : Eigen::MatrixXd::Zero(layer.weights.rows(), lo.size()));
      nb.output_gap.emplace_back(Eigen::VectorXd::Zero(layer.weights.rows()));
    }
    const bool last = k + 1 == net_.layers.size();
    if (forward_ && !last) {
      forward_layer(nb, k, sym, lo, hi);
    } else if (k > 0) {
      back_substitute(nb, k, lo, hi, wa);
    } else if (net_.layers.size() == 1) {  // z = w . x + b exactly
      nb.lower_coef = nb.upper_coef = layer.weights.row(0).transpose();
      nb.lower_const = nb.upper_const = layer.bias(0);
    }
    alo = nb.lo[k].cwiseMax(0.0);
    ahi = nb.hi[k].cwiseMax(0.0);
    amax.push_back(ahi);
  }
  return nb;
}

// Forward symbolic propagation (ReluVal/Neurify style, with DeepPoly's relaxations): the
// activations of layer k-1 are bounded by linear functions of the inputs, sym.lower <= a <= sym.upper
// (coefficients, then the constant, per row; each within its error over the box). Layer k's
// pre-activations get linear bounds from them in two matrix products, which are concretised and
// intersected with the interval bounds; then the ReLU relaxes them for the next layer. A cost of
// O(n_k n_k-1 n_0) per layer instead of back-substitution's O(n_k n_j n_j-1) through every layer
// below: what makes wide, deep networks affordable.
void BoundPropagator::forward_layer(NetworkBounds& nb, std::size_t k, SymbolicLayer& sym, const Eigen::VectorXd& in_lo,
                                    const Eigen::VectorXd& in_hi) const {
  const auto& layer = net_.layers[k];
  const Eigen::Index n0 = in_lo.size(), n = layer.weights.cols();
  Eigen::VectorXd point_max(n0 + 1);  // |x| over the box, then 1 for the constant
  point_max << abs_max(in_lo, in_hi), 1.0;
  const Eigen::VectorXd mag_u = sym.upper.cwiseAbs() * point_max, mag_l = sym.lower.cwiseAbs() * point_max;
  Eigen::MatrixXd hu = pos_weights_[k] * sym.upper + neg_weights_[k] * sym.lower;
  Eigen::MatrixXd hl = pos_weights_[k] * sym.lower + neg_weights_[k] * sym.upper;
  hu.col(n0) += layer.bias;
  hl.col(n0) += layer.bias;
  const double g = gamma(2 * n + 2);
  const Eigen::VectorXd ab = layer.bias.cwiseAbs();
  Eigen::VectorXd eu = g * (pos_weights_[k] * mag_u - neg_weights_[k] * mag_l + ab) + pos_weights_[k] * sym.upper_err -
                       neg_weights_[k] * sym.lower_err;
  Eigen::VectorXd el = g * (pos_weights_[k] * mag_l - neg_weights_[k] * mag_u + ab) + pos_weights_[k] * sym.lower_err -
                       neg_weights_[k] * sym.upper_err;
  eu = (eu * 1.01).array() + kTiny;
  el = (el * 1.01).array() + kTiny;
  // Concretise over the box and tighten the interval bounds.
  const Eigen::Index rows = layer.weights.rows();
  Eigen::VectorXd hmag_u(rows), hmag_l(rows);
  for (Eigen::Index i = 0; i < rows; ++i) {
    double up = hu(i, n0), down = hl(i, n0), mu = std::abs(hu(i, n0)), ml = std::abs(hl(i, n0));
    for (Eigen::Index m = 0; m < n0; ++m) {
      up += std::max(hu(i, m) * in_lo(m), hu(i, m) * in_hi(m));
      down += std::min(hl(i, m) * in_lo(m), hl(i, m) * in_hi(m));
      mu += std::abs(hu(i, m)) * point_max(m);
      ml += std::abs(hl(i, m)) * point_max(m);
    }
    hmag_u(i) = mu, hmag_l(i) = ml;
    nb.hi[k](i) = std::min(nb.hi[k](i), add_up(up, (gamma(n0 + 2) * mu + eu(i)) * 1.01 + kTiny));
    nb.lo[k](i) = std::max(nb.lo[k](i), add_down(down, -((gamma(n0 + 2) * ml + el(i)) * 1.01 + kTiny)));
    if (nb.lo[k](i) < 0.0 && nb.hi[k](i) > 0.0)
      nb.input_sensitivity[k].row(i) = (hu.row(i).head(n0).cwiseAbs() + hl.row(i).head(n0).cwiseAbs()) / 2.0;
  }
  // ReLU: stable neurons pass or vanish; unstable ones take the chord above (slope s, through
  // (l, 0)) and DeepPoly's line below (y = x or y = 0), each applied to the matching bound.
  for (Eigen::Index i = 0; i < rows; ++i) {
    const double l = nb.lo[k](i), h = nb.hi[k](i);
    if (l >= 0.0) continue;
    if (h <= 0.0) {
      hu.row(i).setZero(), hl.row(i).setZero();
      eu(i) = el(i) = 0.0;
      continue;
    }
    const double slope = h / (h - l) * (1.0 + 4.0 * kUnit);
    hu.row(i) *= slope;
    hu(i, n0) += (-slope * l) * (1.0 + 4.0 * kUnit);
    eu(i) = (slope * eu(i) + gamma(3) * (slope * hmag_u(i) + slope * std::abs(l))) * 1.01 + kTiny;
    if (h > -l) continue;  // y = x: the lower bound as it is
    hl.row(i).setZero();
    el(i) = 0.0;
  }
  sym.upper = std::move(hu);
  sym.lower = std::move(hl);
  sym.upper_err = std::move(eu);
  sym.lower_err = std::move(el);
}

// DeepPoly for layer k: express upper and lower linear bounds of h_k through the relaxed ReLUs of
// layers k-1 .. 0 down to the inputs, then take their extremes over the box. Each step's rounding
// error is bounded and collected in eu / el, so the final bounds are sound.
void BoundPropagator::back_substitute(NetworkBounds& nb, std::size_t k, const Eigen::VectorXd& in_lo,
                                      const Eigen::VectorXd& in_hi, const std::vector<Eigen::VectorXd>& wa) const {
  const auto& top = net_.layers[k];
  // Hidden neurons that the interval pass already shows stable are relaxed exactly whatever
  // their bounds: only the unstable ones (and the output) are back-substituted.
  std::vector<Eigen::Index> rows;
  const bool output = k + 1 == net_.layers.size();
  for (Eigen::Index i = 0; i < top.weights.rows(); ++i)
    if (output || (nb.lo[k](i) < 0.0 && nb.hi[k](i) > 0.0)) rows.push_back(i);
  if (rows.empty()) return;
  Eigen::MatrixXd u = top.weights(rows, Eigen::all), l = u;
  Eigen::VectorXd cu = top.bias(rows), cl = cu;
  Eigen::VectorXd eu = Eigen::VectorXd::Zero(u.rows()), el = Eigen::VectorXd::Zero(u.rows());
  for (std::size_t j = k; j-- > 0;) {
    if (stopped()) {
      nb.interrupted = true;
      return;
    }
    const Eigen::Index n = nb.lo[j].size();
    Eigen::VectorXd up_s(n), up_c(n), lo_s(n), hmax(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      const double lj = nb.lo[j](i), hj = nb.hi[j](i);
      hmax(i) = std::max(std::abs(lj), std::abs(hj));
      if (lj >= 0.0) {
        up_s(i) = 1.0, up_c(i) = 0.0, lo_s(i) = 1.0;
      } else if (hj <= 0.0) {
        up_s(i) = 0.0, up_c(i) = 0.0, lo_s(i) = 0.0;
      } else {
        // The chord from (l, 0) to (h, h), with slope and intercept rounded up so it stays above.
        const double s = hj / (hj - lj) * (1.0 + 4.0 * kUnit);
        up_s(i) = s;
        up_c(i) = (-s * lj) * (1.0 + 4.0 * kUnit);
        lo_s(i) = hj > -lj ? 1.0 : 0.0;  // DeepPoly's choice of the lower line: y = x or y = 0
      }
    }
    const auto& layer = net_.layers[j];
    const Eigen::VectorXd& wab = wa[j];  // |W_j| amax_j + |b_j|
    // One pass per row: the relaxed coefficients (u2, l2: the upper line where the coefficient
    // pushes up, the lower where it pushes down), the intercepts they pick up, the new constants,
    // and the rounding of all of it (the same gamma bounds as matrix products, in any order).
    Eigen::MatrixXd u2(u.rows(), n), l2(l.rows(), n);
    const double gn = gamma(n), g1 = gamma(1), g3 = gamma(3);
    for (Eigen::Index r = 0; r < u.rows(); ++r) {
      double cu_add = 0.0, cl_add = 0.0, uh = 0.0, lh = 0.0, uw = 0.0, lw = 0.0, ub = 0.0, lb = 0.0;
      for (Eigen::Index i = 0; i < n; ++i) {
        const double a = u(r, i), c = l(r, i);
        const double v = a > 0.0 ? a * up_s(i) : a * lo_s(i);
        const double w = c > 0.0 ? c * lo_s(i) : c * up_s(i);
        if (a > 0.0) cu_add += a * up_c(i);
        if (c < 0.0) cl_add += c * up_c(i);
        u2(r, i) = v;
        l2(r, i) = w;
        uh += std::abs(v) * hmax(i), lh += std::abs(w) * hmax(i);
        uw += std::abs(v) * wab(i), lw += std::abs(w) * wab(i);
        ub += v * layer.bias(i), lb += w * layer.bias(i);
      }
      if (output && r == 0 && j < nb.output_gap.size()) {
        for (Eigen::Index i = 0; i < n; ++i)
          nb.output_gap[j](i) = (std::max(u(r, i), 0.0) - std::min(l(r, i), 0.0)) * up_c(i);
      }
      eu(r) += gn * cu_add + g1 * uh;
      el(r) += gn * std::abs(cl_add) + g1 * lh;
      cu(r) += cu_add + ub;
      cl(r) += cl_add + lb;
      eu(r) += gn * uw + g3 * std::abs(cu(r));
      el(r) += gn * lw + g3 * std::abs(cl(r));
    }
    u = u2 * layer.weights;
    l = l2 * layer.weights;
  }
  const Eigen::VectorXd in_max = abs_max(in_lo, in_hi);
  const Eigen::Index n0 = in_lo.size();
  Eigen::VectorXd upper = u.cwiseMax(0.0) * in_hi + u.cwiseMin(0.0) * in_lo + cu;
  Eigen::VectorXd lower = l.cwiseMax(0.0) * in_lo + l.cwiseMin(0.0) * in_hi + cl;
  const Eigen::VectorXd erru = ((gamma(n0 + 2) * (u.cwiseAbs() * in_max + cu.cwiseAbs()) + eu) * 1.01).array() + kTiny;
  const Eigen::VectorXd errl = ((gamma(n0 + 2) * (l.cwiseAbs() * in_max + cl.cwiseAbs()) + el) * 1.01).array() + kTiny;
  if (!output)
    for (Eigen::Index r = 0; r < u.rows(); ++r)
      nb.input_sensitivity[k].row(rows[static_cast<std::size_t>(r)]) =
          (u.row(r).cwiseAbs() + l.row(r).cwiseAbs()) / 2.0;
  for (Eigen::Index r = 0; r < upper.size(); ++r) {
    const Eigen::Index i = rows[static_cast<std::size_t>(r)];
    nb.hi[k](i) = std::min(nb.hi[k](i), add_up(upper(r), erru(r)));
    nb.lo[k](i) = std::max(nb.lo[k](i), add_down(lower(r), -errl(r)));
  }
  if (output) {
    nb.upper_coef = u.row(0).transpose();
    nb.lower_coef = l.row(0).transpose();
    nb.upper_const = cu(0);
    nb.lower_const = cl(0);
    nb.upper_err = eu(0) * 1.01 + kTiny;
    nb.lower_err = el(0) * 1.01 + kTiny;
  }
}

Interval BoundPropagator::difference(const NetworkBounds& a, const NetworkBounds& b, const Eigen::VectorXd& dx_lo,
                                     const Eigen::VectorXd& dx_hi) const {
  Eigen::VectorXd dlo = dx_lo, dhi = dx_hi;
  for (std::size_t k = 0; k < net_.layers.size(); ++k) {
    const Eigen::VectorXd m = abs_max(dlo, dhi);
    Eigen::VectorXd l = pos_weights_[k] * dlo + neg_weights_[k] * dhi;
    Eigen::VectorXd h = pos_weights_[k] * dhi + neg_weights_[k] * dlo;
    // 1 where row i of |W| * m has a non-zero product, so that exact zeros stay exact (a model with
    // zeroed protected weights has a difference of exactly 0, not of kTiny).
    const Eigen::VectorXd mz = (m.array() != 0.0).cast<double>().matrix();
    const Eigen::VectorXd nz = ((nonzero_weights_[k] * mz).array() > 0.0).cast<double>().matrix();
    const Eigen::VectorXd err = gamma(m.size() + 1) * (abs_weights_[k] * m) + kTiny * nz;
    for (Eigen::Index i = 0; i < l.size(); ++i) {
      if (err(i) > 0.0) {
        l(i) = step_down(l(i) - err(i));
        h(i) = step_up(h(i) + err(i));
      }
      // h - h' also lies between the copies' own bounds.
      l(i) = std::max(l(i), add_down(a.lo[k](i), -b.hi[k](i)));
      h(i) = std::min(h(i), add_up(a.hi[k](i), -b.lo[k](i)));
    }
    if (k + 1 == net_.layers.size()) return {l(0), h(0)};
    // relu(h) - relu(h'): the same sign as h - h' and no larger (ReLU is monotone, 1-Lipschitz).
    for (Eigen::Index i = 0; i < l.size(); ++i) {
      const double l1 = a.lo[k](i), u1 = a.hi[k](i), l2 = b.lo[k](i), u2 = b.hi[k](i);
      if (l1 >= 0.0 && l2 >= 0.0) continue;
      if (u1 <= 0.0 && u2 <= 0.0) {
        l(i) = h(i) = 0.0;
        continue;
      }
      l(i) = std::max(std::min(l(i), 0.0), add_down(std::max(l1, 0.0), -std::max(u2, 0.0)));
      h(i) = std::min(std::max(h(i), 0.0), add_up(std::max(u1, 0.0), -std::max(l2, 0.0)));
    }
    dlo = l;
    dhi = h;
  }
  return {0.0, 0.0};  // no layers: unreachable for a valid network
}

}  // namespace witness
