// Concrete, batched evaluation of a Model and its decision rule, in double (default) or float32
// (to match frameworks that run in single precision).
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   witness::Evaluator<double> ev(model);
//   Eigen::MatrixXd x = Eigen::MatrixXd::Zero(model.input_width(), 2);   // one column per row of data
//   x(0, 1) = 1.0;
//   witness::Evaluation r = ev.run(x);           // r.outputs: [output width][2], r.labels: 2 labels
//
// An Evaluator keeps scratch buffers; use one per thread.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "model/model.h"

namespace witness {

enum class Precision : std::uint8_t { Float64, Float32 };

struct Evaluation {
  Eigen::MatrixXd outputs;   // [output width][batch]
  Eigen::MatrixXd decision;  // values the decision rule reads: [rule node width][batch]
  std::vector<int> labels;   // one per column
};

template <typename T>
class Evaluator {
 public:
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;

  explicit Evaluator(const Model& model);
  // Computes only `nodes` and what they depend on, for compute() and node_values(); run() and
  // labels() need the first constructor.
  Evaluator(const Model& model, const std::vector<int>& nodes);
  // x: [input width][batch]. Throws InputError if the width is wrong.
  Evaluation run(const Eigen::MatrixXd& x);
  // Labels only (no copies of the outputs): the hot path for sampling.
  void labels(const Eigen::MatrixXd& x, std::vector<int>& out);
  // Every needed node's values, read with node_values() until the next call.
  void compute(const Eigen::MatrixXd& x);
  [[nodiscard]] const Matrix& node_values(int node) const { return values_[static_cast<std::size_t>(node)]; }
  // Labels read off a NaN decision value so far (run() and labels()): such a label means nothing
  // (NaN compares false), and a caller that counts labels should say so.
  [[nodiscard]] std::int64_t nan_labels() const { return nan_labels_; }

 private:
  [[nodiscard]] int label_of(Eigen::Index col) const;
  void check_runs_rule() const;

  const Model& model_;
  bool runs_rule_ = true;
  std::vector<Matrix> dense_weights_;  // cast once to T
  std::vector<Matrix> dense_bias_;
  std::vector<Matrix> values_;  // per node, [width][batch]
  std::vector<bool> needed_;    // nodes the output or the rule depends on
  mutable std::int64_t nan_labels_ = 0;
};

extern template class Evaluator<double>;
extern template class Evaluator<float>;

// About how many multiply-adds one input costs (weights and node widths): for sizing batches so
// that a wide network's are small enough to stop between them and hold in memory.
[[nodiscard]] double cost_per_row(const Model& model);
// Columns per batch for about 2^26 multiply-adds (tens of milliseconds), between 64 and 4096.
[[nodiscard]] Eigen::Index batch_columns(const Model& model);

// Evaluates in the requested precision.
Evaluation evaluate(const Model& model, const Eigen::MatrixXd& x, Precision precision = Precision::Float64);

}  // namespace witness
