#include "bounds/bound_propagator.h"

#include <cmath>
#include <limits>
#include <vector>

namespace witness {
namespace {

constexpr double kUnit = 0x1p-53;    // unit roundoff of double
constexpr double kTiny = 0x1p-1000;  // covers underflow of any number of products (each < 2^-1074)
constexpr double kInf = std::numeric_limits<double>::infinity();

// Higham's gamma_n, padded: a bound on the relative error of an n-term dot product in any order.
double gamma(Eigen::Index n) { return (static_cast<double>(n) + 4.0) * kUnit * 1.01; }

Eigen::VectorXd abs_max(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) {
  return lo.cwiseAbs().cwiseMax(hi.cwiseAbs());
}

// lo - err rounded down, hi + err rounded up, elementwise.
void widen(Eigen::VectorXd& lo, Eigen::VectorXd& hi, const Eigen::VectorXd& err) {
  for (Eigen::Index i = 0; i < lo.size(); ++i) {
    lo(i) = std::nextafter(lo(i) - err(i), -kInf);
    hi(i) = std::nextafter(hi(i) + err(i), kInf);
  }
}

// 1 where row r of |W| * m has a non-zero product, so that exact zeros stay exact (a model with
// zeroed protected weights has a difference of exactly 0, not of kTiny).
Eigen::VectorXd nonzero_rows(const Eigen::MatrixXd& w, const Eigen::VectorXd& m) {
  const Eigen::MatrixXd wz = (w.array() != 0.0).cast<double>().matrix();
  const Eigen::VectorXd mz = (m.array() != 0.0).cast<double>().matrix();
  return ((wz * mz).array() > 0.0).cast<double>().matrix();
}

}  // namespace

double add_down(double a, double b) { return std::nextafter(a + b, -kInf); }
double add_up(double a, double b) { return std::nextafter(a + b, kInf); }

BoundPropagator::BoundPropagator(const ReluNetwork& net) : net_(net) {
  for (const auto& layer : net.layers) {
    abs_weights_.emplace_back(layer.weights.cwiseAbs());
    pos_weights_.emplace_back(layer.weights.cwiseMax(0.0));
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
  Eigen::VectorXd alo = lo, ahi = hi;
  for (std::size_t k = 0; k < net_.layers.size(); ++k) {
    if (stopped()) {
      nb.interrupted = true;
      return nb;
    }
    const auto& layer = net_.layers[k];
    Eigen::VectorXd l = pos_weights_[k] * alo + neg_weights_[k] * ahi + layer.bias;
    Eigen::VectorXd h = pos_weights_[k] * ahi + neg_weights_[k] * alo + layer.bias;
    const Eigen::VectorXd err =
        (gamma(layer.weights.cols() + 1) * (abs_weights_[k] * amax[k] + layer.bias.cwiseAbs())).array() + kTiny;
    widen(l, h, err);
    nb.lo.push_back(l);
    nb.hi.push_back(h);
    if (k + 1 < net_.layers.size()) {
      nb.input_sensitivity.emplace_back(k == 0 ? abs_weights_[0]
                                               : Eigen::MatrixXd::Zero(layer.weights.rows(), lo.size()));
      nb.output_gap.emplace_back(Eigen::VectorXd::Zero(layer.weights.rows()));
    }
    if (k > 0) {
      back_substitute(nb, k, lo, hi, amax);
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

// DeepPoly for layer k: express upper and lower linear bounds of h_k through the relaxed ReLUs of
// layers k-1 .. 0 down to the inputs, then take their extremes over the box. Each step's rounding
// error is bounded and collected in eu / el, so the final bounds are sound.
void BoundPropagator::back_substitute(NetworkBounds& nb, std::size_t k, const Eigen::VectorXd& in_lo,
                                      const Eigen::VectorXd& in_hi, const std::vector<Eigen::VectorXd>& amax) const {
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
    const Eigen::MatrixXd upos = u.cwiseMax(0.0), uneg = u.cwiseMin(0.0);
    const Eigen::MatrixXd u2 = upos * up_s.asDiagonal() + uneg * lo_s.asDiagonal();
    const Eigen::VectorXd cu_add = upos * up_c;
    const Eigen::MatrixXd lpos = l.cwiseMax(0.0), lneg = l.cwiseMin(0.0);
    const Eigen::MatrixXd l2 = lpos * lo_s.asDiagonal() + lneg * up_s.asDiagonal();
    const Eigen::VectorXd cl_add = lneg * up_c;
    if (output) nb.output_gap[j] = (upos.row(0).transpose() - lneg.row(0).transpose()).cwiseProduct(up_c);
    const Eigen::MatrixXd au2 = u2.cwiseAbs(), al2 = l2.cwiseAbs();
    eu += gamma(n) * cu_add + gamma(1) * (au2 * hmax);
    el += gamma(n) * cl_add.cwiseAbs() + gamma(1) * (al2 * hmax);
    const auto& layer = net_.layers[j];
    const Eigen::VectorXd wa = abs_weights_[j] * amax[j];
    const Eigen::VectorXd ab = layer.bias.cwiseAbs();
    cu += cu_add + u2 * layer.bias;
    cl += cl_add + l2 * layer.bias;
    eu += gamma(n) * (au2 * (wa + ab)) + gamma(3) * cu.cwiseAbs();
    el += gamma(n) * (al2 * (wa + ab)) + gamma(3) * cl.cwiseAbs();
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
    const Eigen::VectorXd nz = nonzero_rows(net_.layers[k].weights, m);
    const Eigen::VectorXd err = gamma(m.size() + 1) * (abs_weights_[k] * m) + kTiny * nz;
    for (Eigen::Index i = 0; i < l.size(); ++i) {
      if (err(i) > 0.0) {
        l(i) = std::nextafter(l(i) - err(i), -kInf);
        h(i) = std::nextafter(h(i) + err(i), kInf);
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
