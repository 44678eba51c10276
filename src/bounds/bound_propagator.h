// Sound bounds on a ReLU network over a box of inputs: interval arithmetic and DeepPoly/CROWN-style
// symbolic linear bounds (each unstable ReLU relaxed by a line above and one below, back-substituted
// to the inputs), and ReluDiff-style bounds on the difference between two copies of the network
// that share every input but a few (the two sides of a fairness pair).
//
//   witness::Model m = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   witness::ReluNetwork net = witness::relu_network_of(m, nullptr).value();   // Dense/ReLU layers only
//   witness::BoundPropagator bp(net);
//   Eigen::VectorXd lo = Eigen::VectorXd::Zero(net.input_width), hi = Eigen::VectorXd::Ones(net.input_width);
//   witness::NetworkBounds b = bp.bounds(lo, hi);        // b.lo[k], b.hi[k]: bounds of layer k's h_k
//   witness::Interval z = b.output();                    // z.lo <= z(x) <= z.hi for every x in [lo, hi]
//   witness::Interval d = bp.difference(b, b, lo - hi, hi - lo);   // z(x) - z(x') for x, x' both in the box
//
// Soundness: every bound holds for the exact real-number semantics of the network (weights taken
// as the exact values of their doubles). Floating-point rounding is accounted for with Higham's
// gamma_n = n u / (1 - n u) error bounds on every sum and product, added outward.
#pragma once

#include <Eigen/Dense>
#include <atomic>
#include <vector>

#include "bounds/relu_network.h"

namespace witness {

struct Interval {
  double lo = 0.0, hi = 0.0;
};

struct NetworkBounds {
  std::vector<Eigen::VectorXd> lo, hi;  // per layer k: bounds of the pre-activations h_k
  // The output's linear bounds at the inputs: for every x in the box (exact arithmetic),
  //   lower_coef . x + lower_const - lower_err <= z(x) <= upper_coef . x + upper_const + upper_err.
  // Used to rank input features for splitting and to count the points the bounds decide.
  Eigen::VectorXd lower_coef, upper_coef;
  double lower_const = 0.0, upper_const = 0.0, lower_err = 0.0, upper_err = 0.0;
  bool interrupted = false;  // the stop flag was raised before the bounds were complete: not usable
  // Where the looseness comes from, to choose what to split: per hidden layer j, each neuron's
  // share of the output bounds' gap (its relaxation's intercept weighted by the output's
  // coefficients; 0 when stable), and |coefficients| of its own linear bounds over the inputs.
  std::vector<Eigen::VectorXd> output_gap;
  std::vector<Eigen::MatrixXd> input_sensitivity;
  [[nodiscard]] Interval output() const { return {lo.back()(0), hi.back()(0)}; }
};

class BoundPropagator {
 public:
  explicit BoundPropagator(const ReluNetwork& net);
  // bounds() looks at *stop between layers (wide networks take long) and gives up when it is set.
  // Hidden layers are bounded by back-substitution (DeepPoly) or, where that would cost more than
  // eight times as much, by forward symbolic propagation; the output always by back-substitution.
  [[nodiscard]] bool forward_mode() const { return forward_; }
  void set_forward_mode(bool forward) { forward_ = forward; }
  void set_stop(const std::atomic<bool>* stop) { stop_ = stop; }

  // Bounds over the box lo <= x <= hi (the box must already contain the exact inputs).
  [[nodiscard]] NetworkBounds bounds(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) const;
  // Interval arithmetic only (cheaper, looser), same result type without coefficients.
  [[nodiscard]] NetworkBounds intervals(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) const;

  // Bounds of z(x) - z(x') where a, b are the bounds of the two copies over their boxes and
  // x - x' lies in [dx_lo, dx_hi] (zero on the shared inputs).
  [[nodiscard]] Interval difference(const NetworkBounds& a, const NetworkBounds& b, const Eigen::VectorXd& dx_lo,
                                    const Eigen::VectorXd& dx_hi) const;

 private:
  struct SymbolicLayer {                   // linear bounds of one layer's activations over the inputs (forward mode)
    Eigen::MatrixXd lower, upper;          // [neuron][input..., constant]
    Eigen::VectorXd lower_err, upper_err;  // per neuron, over the box
  };
  void forward_layer(NetworkBounds& nb, std::size_t k, SymbolicLayer& sym, const Eigen::VectorXd& in_lo,
                     const Eigen::VectorXd& in_hi) const;
  void back_substitute(NetworkBounds& nb, std::size_t k, const Eigen::VectorXd& in_lo, const Eigen::VectorXd& in_hi,
                       const std::vector<Eigen::VectorXd>& wa) const;

  [[nodiscard]] bool stopped() const { return stop_ != nullptr && stop_->load(std::memory_order_relaxed); }
  const ReluNetwork& net_;
  const std::atomic<bool>* stop_ = nullptr;
  bool forward_ = false;                      // hidden layers by forward symbolic propagation (wide, deep networks)
  std::vector<Eigen::MatrixXd> abs_weights_;  // |W_k|
  std::vector<Eigen::MatrixXd> pos_weights_, neg_weights_;
  std::vector<Eigen::MatrixXd> nonzero_weights_;  // 1 where W_k is not 0
};

// Helpers with directed rounding, for callers that combine bounds.
[[nodiscard]] double add_down(double a, double b);
[[nodiscard]] double add_up(double a, double b);

}  // namespace witness
