// A feed-forward ReLU network read out of the model IR: the form the bound propagator and the
// complete verifier work on.
//
//   witness::Model m = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   std::string why;
//   std::optional<witness::ReluNetwork> net = witness::relu_network_of(m, &why);
//   if (!net) { /* why: "node 'x' is Tanh: ..." */ }
//   double z = net->logit(x);               // label 1 iff z > net->threshold
#pragma once

#include <Eigen/Dense>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"

namespace witness {

// layers[k] computes h_k = W_k a_{k-1} + b_k with a_{-1} = the model input and a_k = relu(h_k) for
// every layer but the last, whose single value is the decision logit z: label 1 iff z > threshold.
struct ReluNetwork {
  struct Layer {
    Eigen::MatrixXd weights;  // [out][in]
    Eigen::VectorXd bias;
  };
  std::vector<Layer> layers;
  double threshold = 0.0;
  int input_width = 0;

  // z in double (the same operations as the model's evaluator up to summation order).
  [[nodiscard]] double logit(const Eigen::VectorXd& x) const;
  // Logits of the columns of x ([input width][n]).
  [[nodiscard]] Eigen::RowVectorXd logits(const Eigen::MatrixXd& x) const;
  // z and its gradient with respect to x (back-propagation through the ReLU pattern at x; a ReLU
  // exactly at 0 counts as inactive).
  double logit(const Eigen::VectorXd& x, Eigen::VectorXd& gradient) const;
};

// The network when m is Dense layers with ReLU between them (Identity nodes allowed) under a
// threshold decision rule; otherwise nullopt, and *why says what is in the way.
std::optional<ReluNetwork> relu_network_of(const Model& m, std::string* why);

}  // namespace witness
