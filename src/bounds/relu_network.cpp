#include "bounds/relu_network.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "bounds/roundoff.h"

namespace witness {

double ReluNetwork::logit(const Eigen::VectorXd& x) const { return logits(x)(0); }

Eigen::RowVectorXd ReluNetwork::logits(const Eigen::MatrixXd& x) const {
  Eigen::MatrixXd a = x;
  for (std::size_t k = 0; k < layers.size(); ++k) {
    Eigen::MatrixXd h = layers[k].weights * a;
    h.colwise() += layers[k].bias;
    a = k + 1 < layers.size() ? Eigen::MatrixXd(h.cwiseMax(0.0)) : h;
  }
  return a.row(0);
}

double ReluNetwork::logit(const Eigen::VectorXd& x, Eigen::VectorXd& gradient) const {
  std::vector<Eigen::ArrayXd> active;  // per hidden layer: 1 where the ReLU passes
  Eigen::VectorXd a = x;
  for (std::size_t k = 0; k + 1 < layers.size(); ++k) {
    const Eigen::VectorXd h = layers[k].weights * a + layers[k].bias;
    active.emplace_back((h.array() > 0).cast<double>());
    a = h.cwiseMax(0.0);
  }
  const double z = (layers.back().weights * a + layers.back().bias)(0);
  gradient = layers.back().weights.row(0).transpose();
  for (std::size_t k = layers.size() - 1; k-- > 0;)
    gradient = layers[k].weights.transpose() * gradient.cwiseProduct(active[k].matrix()).eval();
  return z;
}

namespace {

// d == a - b exactly (Knuth's TwoSum: the rounding error of a + (-b) is zero).
bool exact_difference(double a, double b, double d) {
  if (!std::isfinite(d)) return false;
  const double nb = -b, bb = d - a;
  return (a - (d - bb)) + (nb - bb) == 0.0;
}

using roundoff::kTiny;
using roundoff::kUnit;
double gamma5(Eigen::Index n) { return roundoff::dot_error(n, 5.0); }  // one more term of padding

int skip_identity(const Model& m, int id) {
  while (m.nodes[static_cast<std::size_t>(id)].op == OpKind::Identity)
    id = m.nodes[static_cast<std::size_t>(id)].inputs[0];
  return id;
}

}  // namespace

std::optional<ReluNetwork> relu_network_of(const Model& m, std::string* why) {
  auto fail = [why](std::string text) -> std::optional<ReluNetwork> {
    if (why != nullptr) *why = std::move(text);
    return std::nullopt;
  };
  // Two classes under argmax (a scikit-learn classifier's two scores) are one logit, z1 - z0 > 0,
  // when that difference is exact in double for every weight (skl2onnx writes [-w, w]: 2w).
  const int top = m.rule.node >= 0 ? skip_identity(m, m.rule.node) : -1;
  const bool two_class_argmax = m.rule.kind == DecisionRule::Kind::ArgMax && top >= 0 &&
                                m.nodes[static_cast<std::size_t>(top)].op == OpKind::Dense &&
                                m.nodes[static_cast<std::size_t>(top)].weights.rows() == 2;
  if (m.rule.kind != DecisionRule::Kind::Threshold && !two_class_argmax)
    return fail(fmt::format("the decision rule is {}, not a threshold on one logit", m.rule.describe()));
  ReluNetwork net;
  net.threshold = two_class_argmax ? 0.0 : m.rule.threshold;
  net.input_width = m.input_width();
  std::vector<ReluNetwork::Layer> reversed;
  int id = skip_identity(m, m.rule.node);
  bool last = true;
  while (true) {
    const Node& n = m.nodes[static_cast<std::size_t>(id)];
    if (n.op != OpKind::Dense)
      return fail(fmt::format("{} is {} where a Dense layer was expected", node_label(n, static_cast<std::size_t>(id)),
                              op_name(n.op)));
    ReluNetwork::Layer layer{n.weights, n.values};
    if (last && two_class_argmax) {  // class 1 wins only strictly: z1 - z0 > 0
      layer.weights = Eigen::MatrixXd(n.weights.row(1) - n.weights.row(0));
      layer.bias = Eigen::VectorXd::Constant(1, n.values(1) - n.values(0));
      for (Eigen::Index k = 0; k < n.weights.cols(); ++k)
        if (!exact_difference(n.weights(1, k), n.weights(0, k), layer.weights(0, k)))
          return fail(fmt::format("{}: the difference of its two class scores rounds in double (weight {})",
                                  node_label(n, static_cast<std::size_t>(id)), k));
      if (!exact_difference(n.values(1), n.values(0), layer.bias(0)))
        return fail(fmt::format("{}: the difference of its two class biases rounds in double",
                                node_label(n, static_cast<std::size_t>(id))));
      last = false;
    } else if (last) {  // only the row the rule reads
      layer.weights = Eigen::MatrixXd(n.weights.row(m.rule.index));
      layer.bias = Eigen::VectorXd::Constant(1, n.values(m.rule.index));
      last = false;
    }
    reversed.push_back(std::move(layer));
    const int below = skip_identity(m, n.inputs[0]);
    const Node& b = m.nodes[static_cast<std::size_t>(below)];
    if (b.op == OpKind::Input) break;
    if (b.op != OpKind::Relu)
      return fail(fmt::format("{} is {}; the complete engine handles Dense and ReLU layers",
                              node_label(b, static_cast<std::size_t>(below)), op_name(b.op)));
    id = skip_identity(m, b.inputs[0]);
  }
  net.layers.assign(reversed.rbegin(), reversed.rend());
  return net;
}

BoundedForward::BoundedForward(const ReluNetwork& net) : net_(net) {
  for (const auto& layer : net.layers) {
    abs_weights_.emplace_back(layer.weights.cwiseAbs());
    frobenius_.push_back(std::sqrt(layer.weights.squaredNorm() * (1.0 + gamma5(layer.weights.size()))) *
                         (1.0 + 4 * kUnit));
  }
}

// sigma_max(W)^8 = lambda_max(A)^4 <= sum of lambda_i(A)^4 = ||A^2||_F^2 with A = W W^T (or W^T W,
// the smaller): two matrix products per layer. The rounding of A and A^2 is bounded by
// |A~ - A| <= g |W||W|^T, |B~ - A~^2| <= g |A~||A~|, and the Frobenius norms of products of
// those (||XY||_F <= ||X||_F ||Y||_F), all second order.
bool BoundedForward::spectral_bounds(std::vector<double>& out) const {
  const std::lock_guard lock(mutex_);
  for (std::size_t k = spectral_.size(); k < net_.layers.size(); ++k) {
    if (stop_ != nullptr && stop_->load()) return false;
    const Eigen::MatrixXd& w = net_.layers[k].weights;
    if (w.rows() == 1 || w.cols() == 1) {  // a vector: its 2-norm
      spectral_.push_back(frobenius_[k]);
      continue;
    }
    const bool wide = w.cols() > w.rows();
    const Eigen::MatrixXd wt = wide ? Eigen::MatrixXd(w) : Eigen::MatrixXd(w.transpose());  // A = wt wt^T
    Eigen::MatrixXd a(wt.rows(), wt.rows()), b(wt.rows(), wt.rows());
    // Row blocks, so that the stop flag is seen every few tens of milliseconds.
    constexpr Eigen::Index kBlock = 128;
    for (Eigen::Index r = 0; r < a.rows(); r += kBlock) {
      if (stop_ != nullptr && stop_->load()) return false;
      const Eigen::Index m = std::min(kBlock, a.rows() - r);
      a.middleRows(r, m).noalias() = wt.middleRows(r, m) * wt.transpose();
    }
    for (Eigen::Index r = 0; r < b.rows(); r += kBlock) {
      if (stop_ != nullptr && stop_->load()) return false;
      const Eigen::Index m = std::min(kBlock, b.rows() - r);
      b.middleRows(r, m).noalias() = a.middleRows(r, m) * a;
    }
    const Eigen::Index n = wide ? w.cols() : w.rows();  // summation length of A
    const double fw = frobenius_[k], fa = a.norm() * (1.0 + gamma5(a.size())), fb = b.norm() * (1.0 + gamma5(b.size()));
    const double ea = gamma5(n) * fw * fw;                // ||A~ - A||_F
    const double eb = gamma5(a.rows()) * fa * fa;         // ||B~ - A~^2||_F
    const double a2 = fb + eb + 2.0 * ea * fa + ea * ea;  // >= ||A^2||_F
    spectral_.push_back(std::pow(a2 * (1.0 + 1e-12), 0.25) * (1.0 + 1e-12));
  }
  out = spectral_;
  return true;
}

Eigen::RowVectorXd BoundedForward::logits(const Eigen::MatrixXd& x, const Eigen::VectorXd& input_error,
                                          Eigen::RowVectorXd& error) const {
  // Componentwise: a dot product of n terms plus a bias, in any order, is within
  // gamma_{n+1} (|W| |a| + |b|) of exact; errors already in a are carried by |W| and pass unchanged
  // through ReLU (1-Lipschitz), and vanish behind a ReLU that is certainly inactive. In the 2-norm:
  // e_k <= sigma(W_k) e_k-1 + ||rounding_k||_2, the rounding bounded by Cauchy-Schwarz row by row.
  const auto cols = x.cols();
  Eigen::MatrixXd a = x;
  Eigen::MatrixXd err = input_error.replicate(1, cols);
  Eigen::ArrayXd err2 = Eigen::ArrayXd::Constant(cols, input_error.norm() * (1.0 + 4 * kUnit));
  bool need2 = false;
  std::vector<Eigen::ArrayXd> rounding2;  // per layer: ||rounding||_2 per column
  for (std::size_t k = 0; k < net_.layers.size(); ++k) {
    const auto& layer = net_.layers[k];
    const double g = gamma5(layer.weights.cols() + 1);
    Eigen::MatrixXd h = layer.weights * a;
    h.colwise() += layer.bias;
    Eigen::MatrixXd e = abs_weights_[k] * (g * a.cwiseAbs() + err);
    e.colwise() += g * layer.bias.cwiseAbs();
    e = (e * 1.001).array() + kTiny;  // the bound's own rounding, and underflow
    Eigen::ArrayXd r2 = (g * (frobenius_[k] * a.colwise().norm().array() + layer.bias.norm())) * 1.001 + kTiny;
    rounding2.push_back(std::move(r2));
    if (k + 1 < net_.layers.size()) {
      for (Eigen::Index j = 0; j < h.cols(); ++j)
        for (Eigen::Index i = 0; i < h.rows(); ++i)
          if (h(i, j) < -e(i, j)) e(i, j) = 0.0;  // relu(h~) = relu(h) = 0
      a = h.cwiseMax(0.0);
    } else {
      a = h;
    }
    err = std::move(e);
  }
  error = err.row(0);
  for (Eigen::Index j = 0; j < cols; ++j) need2 = need2 || error(j) >= std::abs(a(0, j) - net_.threshold);
  if (need2 && net_.layers.size() > 2) {
    std::vector<double> sigma;
    if (!spectral_bounds(sigma)) {
      error.setConstant(std::numeric_limits<double>::infinity());
      return a.row(0);
    }
    for (std::size_t k = 0; k < net_.layers.size(); ++k) err2 = (sigma[k] * err2 + rounding2[k]) * (1.0 + 8 * kUnit);
    error = error.array().min(err2.transpose());
  }
  return a.row(0);
}

}  // namespace witness
