// Exact encoding of a piecewise-linear model into solver terms: every node value as a Term over
// the Terms given for the model inputs (ReLU as ite), and the decision rule as a Constraint.
//
//   #include "symbolic/encoding.h"
//   witness::Model model = witness::load_model("benchmarks/fairify/models/german/GC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/german.toml");
//   auto s = witness::make_solver("z3");
//   Eigen::VectorXd x0 = Eigen::VectorXd::Zero(model.input_width());   // concrete values: none used here
//   witness::DomainEncoding enc = witness::encode_domain(*s, schema, std::vector<bool>(x0.size(), true), x0);
//   std::vector<witness::Term> z = witness::encode_node(model, model.rule.node, enc.model_inputs);
//   s->assert_(witness::label_is(model, z, 1));        // some input of the domain gets label 1?
//   if (s->check() == witness::CheckResult::Sat) { /* model_input_from_solver(*s, enc, x0) */ }
#pragma once

#include <vector>

#include "model/model.h"
#include "solver/term.h"

namespace witness {

// Exact Terms (weights read with Rational::from_double) for the value vector of `node`, given one
// Term per model input, computed by the model interpreter over TermDomain (solver/term_domain.h).
// Only the nodes `node` depends on are encoded, each once. Piecewise-linear ops are exact (ReLU,
// comparisons, Where, ArgMax and trees as ite); UnsupportedError naming the node for Sigmoid,
// Tanh, Softmax, a product of two values that depend on the input, a division by such a value or
// by zero, and a Lookup (its index range is a condition terms cannot carry).
std::vector<Term> encode_node(const Model& m, int node, const std::vector<Term>& model_inputs);

// The condition on the rule node's values (`decision_values`, e.g. from encode_node(m, m.rule.node,
// ...)) under which m's decision rule gives `label`. Threshold: 1 iff value[index] > threshold, 0
// otherwise. ArgMax: label k iff value_k > value_j for j < k and value_k >= value_j for j > k (ties
// go to the lowest index). A label the rule cannot give: false. Direct rules: UnsupportedError.
Constraint label_is(const Model& m, const std::vector<Term>& decision_values, int label);

// The number of labels the rule can give: 2 for Threshold, the rule node's width for ArgMax.
// Direct rules: UnsupportedError.
int label_count(const Model& m);

}  // namespace witness
