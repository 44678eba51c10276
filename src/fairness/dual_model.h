// The dual network of PyFair (Algorithm 2): two copies of a model that share the non-protected
// inputs, with one output that is 1 exactly when the copies' labels differ.
//
//   #include "model/evaluator.h"
//   witness::Model m = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   witness::Schema s = witness::load_schema("benchmarks/fairify/adult.toml");
//   witness::DualModel d = witness::make_dual_model(m, s, {s.feature_index("sex")});
//   Eigen::MatrixXd x = witness::load_csv("benchmarks/fairify/data/adult.csv", s).model_inputs(s);
//   Eigen::MatrixXd x_prime = x;                              // then other protected values in x_prime
//   witness::Evaluation r = witness::evaluate(d.model, witness::dual_inputs(d, x, x_prime));
//   // r.labels[j] == 1: columns j of x and x_prime are a witness pair
//   witness::save_onnx(d.model, "dual_AC1.onnx");
//
// Layout. Inputs: (x, p') = all of m's model inputs in order, then the protected model inputs again
// (ascending, names suffixed "'"); copy 2 reads x with the protected coordinates replaced by p'.
// Outputs: [z (copy 1), z' (copy 2), differ], where z is the vector m's decision rule reads (the
// logits: a final Sigmoid or Softmax is not part of the dual), and the decision rule is Direct on differ.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "domain/schema.h"
#include "model/model.h"

namespace witness {

// BlockDiagonal: PyFair's form for a chain of Dense layers and elementwise activations: one Dense
// per layer over [h; h'] with weights [[W, 0], [0, W]] and one activation over both; other graphs
// are duplicated. Mathematically the same model, but Eigen sums a longer row in another order, so
// z and z' may differ from m's logits in the last bits. Duplicated: every node twice, always; z and
// z' are then bit-identical to evaluating m on x and x' in double (same shapes, same kernels).
enum class DualForm : std::uint8_t { BlockDiagonal, Duplicated };

struct DualModel {
  Model model;
  int copy1_decision_node = -1;  // node ids in `model` of z, z' and differ
  int copy2_decision_node = -1;
  int differ_node = -1;
  int decision_width = 0;             // width of z
  std::vector<int> protected_inputs;  // model-input indices of p in x, ascending
  int width_x = 0;                    // p' occupies inputs [width_x, width_x + protected_inputs.size())
  bool block_diagonal = false;        // what was built (BlockDiagonal falls back to duplication)
};

// `protected_features` are schema feature indices (a one-hot feature brings all its model inputs).
// Throws InputError when the schema does not describe m's inputs or the feature list is empty,
// names an unknown feature or names one twice.
[[nodiscard]] DualModel make_dual_model(const Model& m, const Schema& s, const std::vector<int>& protected_features,
                                        DualForm form = DualForm::BlockDiagonal);

// Columns (x, p') for the dual from model-input columns x and x' of the original model ([width][n]
// each): p' is read from x' (the rest of x' is assumed equal to x).
[[nodiscard]] Eigen::MatrixXd dual_inputs(const DualModel& d, const Eigen::MatrixXd& x, const Eigen::MatrixXd& x_prime);

}  // namespace witness
