// Concolic execution of a Model: one concrete forward pass in double that also carries, for every
// node value, an exact affine expression over the symbolic model inputs (PyCT/PyFair section 4.2).
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   Eigen::VectorXd x = Eigen::VectorXd::Zero(model.input_width());
//   std::vector<bool> sym(model.input_width(), true);           // every input symbolic
//   witness::ConcolicRun r = witness::run_concolic(model, x, sym);
//   for (const witness::BranchCondition& b : r.path) { /* b.constraint holds at x */ }
//   // r.label == Evaluator<double>(model).run(x).labels[0]; r.path.back() is the decision predicate
//   // Terms name variable ids = model input indices; encoding.h's substitute() maps them to a solver.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <vector>

#include "model/model.h"
#include "solver/term.h"

namespace witness {

// One branch point met by the run, in execution order: a ReLU/LeakyReLU whose pre-activation
// depends on symbolic inputs (constraint: expr > 0 when taken, expr <= 0 otherwise), or a part of
// the decision predicate (is_decision: z > t / z <= t for Threshold; winner-beats-k for ArgMax,
// where index = winner * width + k and taken is always true).
struct BranchCondition {
  int node = -1;
  int index = 0;
  bool taken = false;
  bool is_decision = false;
  Constraint constraint;  // the condition that holds on this path (linear in the model inputs)
  double concrete = 0.0;  // the compared value in double (pre-activation, z - t, z_w - z_k)
};

struct ConcolicRun {
  std::vector<BranchCondition> path;
  int label = 0;                // equals Evaluator<double>'s label on x (first decision rule)
  std::vector<int> labels;      // one per decision rule, in order
  Term decision_expr;           // Threshold: z (the logit read by the rule); ArgMax: z of the winner
  double decision_value = 0.0;  // the same in double, bit-identical to the Evaluator's value
  // Some op depending on symbolic inputs was replaced by its concrete value (non-linear Mul/Div,
  // Sigmoid/Tanh/Softmax/comparisons/Where before the decision). Paths are then under-approximate:
  // an engine must not claim exhaustiveness.
  bool concretised = false;
  std::vector<int> concretised_nodes;
};

// Caches exact rational weights of a model; reuse one for many runs (not thread-safe: one per thread).
class ConcolicEvaluator {
 public:
  // `decisions`: the rules whose predicates end each path, in order (default: model.rule). The dual
  // engine passes one rule per copy, so a path ends with both copies' decision predicates.
  explicit ConcolicEvaluator(const Model& model, std::vector<DecisionRule> decisions = {});
  ~ConcolicEvaluator();
  ConcolicEvaluator(const ConcolicEvaluator&) = delete;
  ConcolicEvaluator& operator=(const ConcolicEvaluator&) = delete;

  // x: one model input vector; symbolic_inputs: one flag per model input. Lookup and
  // TreeEnsemble nodes on the way to the decision: UnsupportedError.
  ConcolicRun run(const Eigen::VectorXd& x, const std::vector<bool>& symbolic_inputs);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

ConcolicRun run_concolic(const Model& m, const Eigen::VectorXd& x, const std::vector<bool>& symbolic_inputs);

}  // namespace witness
