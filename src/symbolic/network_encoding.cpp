#include "symbolic/network_encoding.h"

#include <fmt/format.h>

#include <string>

#include "core/error.h"
#include "solver/term_domain.h"

namespace witness {
std::vector<Term> encode_node(const Model& m, int node, const std::vector<Term>& model_inputs) {
  if (static_cast<int>(model_inputs.size()) != m.input_width()) {
    throw InternalError(
        fmt::format("encode_node: the model has {} inputs, got {} terms", m.input_width(), model_inputs.size()));
  }
  TermDomain d;
  return ModelInterpreter<TermDomain>(m, d, {.node = node}).node_values(model_inputs);
}

int label_count(const Model& m) {
  switch (m.rule.kind) {
    case DecisionRule::Kind::Threshold: return 2;
    case DecisionRule::Kind::ArgMax: return m.nodes.at(static_cast<std::size_t>(m.rule.node)).width;
    case DecisionRule::Kind::Direct: break;
  }
  throw UnsupportedError(m.source, "",
                         "the smt engine needs a threshold or argmax decision rule; this model's output is the "
                         "label itself (" +
                             m.rule.describe() + ")");
}

Constraint label_is(const Model& m, const std::vector<Term>& decision_values, int label) {
  const int n_labels = label_count(m);  // throws for Direct rules
  if (label < 0 || label >= n_labels) return Constraint::constant(false);
  if (m.rule.kind == DecisionRule::Kind::Threshold) {
    if (m.rule.index < 0 || static_cast<std::size_t>(m.rule.index) >= decision_values.size()) {
      throw InternalError(fmt::format("label_is: the rule reads value {} of {}", m.rule.index, decision_values.size()));
    }
    const Term& z = decision_values[static_cast<std::size_t>(m.rule.index)];
    const Rational t = Rational::from_double(m.rule.threshold);
    return label == 1 ? gt(z, t) : le(z, t);
  }
  if (static_cast<int>(decision_values.size()) != n_labels) {
    throw InternalError(
        fmt::format("label_is: {} decision values for an argmax over {}", decision_values.size(), n_labels));
  }
  const auto k = static_cast<std::size_t>(label);
  std::vector<Constraint> beats;
  for (std::size_t j = 0; j < decision_values.size(); ++j) {
    if (j < k) beats.push_back(gt(decision_values[k], decision_values[j]));
    if (j > k) beats.push_back(ge(decision_values[k], decision_values[j]));
  }
  return conjunction(beats);
}

}  // namespace witness
