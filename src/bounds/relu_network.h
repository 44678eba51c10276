// A feed-forward ReLU network read out of the model IR: the form the bound propagator and the
// complete verifier work on.
//
//   witness::Model m = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   std::string why;
//   std::optional<witness::ReluNetwork> net = witness::relu_network_of(m, &why);
//   if (!net) { /* why: "node 'x' is Tanh: ..." */ }
//   Eigen::VectorXd x = Eigen::VectorXd::Zero(m.input_width());   // a model input
//   double z = net->logit(x);               // label 1 iff z > net->threshold
#pragma once

#include <Eigen/Dense>
#include <atomic>
#include <mutex>
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

// Logits in double with a sound bound on each one's distance from the exact real value, so that
// labels can be decided exactly without exact arithmetic except next to the threshold. Two bounds,
// the smaller wins: componentwise (|W| times the errors; tight for shallow networks) and in the
// 2-norm with an upper bound on each layer's spectral norm (deep, wide networks, where the
// componentwise bound grows like the product of |W|'s row sums), computed once when first needed.
//
//   witness::BoundedForward f(net);
//   Eigen::RowVectorXd err;
//   Eigen::RowVectorXd z = f.logits(x, input_error, err);   // |z - exact| <= err, per column
class BoundedForward {
 public:
  explicit BoundedForward(const ReluNetwork& net);
  // The spectral bounds (seconds on wide networks) watch *stop between layers; when it is set, the
  // errors that needed them are returned as infinite.
  void set_stop(const std::atomic<bool>* stop) { stop_ = stop; }
  // input_error: per model input, how far x may be from the exact inputs.
  [[nodiscard]] Eigen::RowVectorXd logits(const Eigen::MatrixXd& x, const Eigen::VectorXd& input_error,
                                          Eigen::RowVectorXd& error) const;

 private:
  [[nodiscard]] bool spectral_bounds(std::vector<double>& out) const;  // false when stopped
  const ReluNetwork& net_;
  const std::atomic<bool>* stop_ = nullptr;
  std::vector<Eigen::MatrixXd> abs_weights_;
  std::vector<double> frobenius_;  // ||W_k||_F, rounded up
  mutable std::mutex mutex_;
  mutable std::vector<double> spectral_;  // >= the largest singular value of W_k (filled layer by layer)
};

// The network when m is Dense layers with ReLU between them (Identity nodes allowed) under a
// threshold decision rule; otherwise nullopt, and *why says what is in the way.
std::optional<ReluNetwork> relu_network_of(const Model& m, std::string* why);

}  // namespace witness
