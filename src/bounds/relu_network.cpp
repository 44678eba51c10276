#include "bounds/relu_network.h"

#include <fmt/format.h>

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
  if (m.rule.kind != DecisionRule::Kind::Threshold)
    return fail(fmt::format("the decision rule is {}, not a threshold on one logit", m.rule.describe()));
  ReluNetwork net;
  net.threshold = m.rule.threshold;
  net.input_width = m.input_width();
  std::vector<ReluNetwork::Layer> reversed;
  int id = skip_identity(m, m.rule.node);
  bool last = true;
  while (true) {
    const Node& n = m.nodes[static_cast<std::size_t>(id)];
    if (n.op != OpKind::Dense)
      return fail(fmt::format("node '{}' is {} where a Dense layer was expected", n.name, op_name(n.op)));
    ReluNetwork::Layer layer{n.weights, n.values};
    if (last) {  // only the row the rule reads
      layer.weights = Eigen::MatrixXd(n.weights.row(m.rule.index));
      layer.bias = Eigen::VectorXd::Constant(1, n.values(m.rule.index));
      last = false;
    }
    reversed.push_back(std::move(layer));
    const int below = skip_identity(m, n.inputs[0]);
    const Node& b = m.nodes[static_cast<std::size_t>(below)];
    if (b.op == OpKind::Input) break;
    if (b.op != OpKind::Relu)
      return fail(
          fmt::format("node '{}' is {}; the complete engine handles Dense and ReLU layers", b.name, op_name(b.op)));
    id = skip_identity(m, b.inputs[0]);
  }
  net.layers.assign(reversed.rbegin(), reversed.rend());
  return net;
}

}  // namespace witness
