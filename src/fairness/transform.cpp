#include "fairness/transform.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/error.h"

namespace witness {
namespace {

// Whether node `n`, which reads the input directly, reads one of `inputs`.
bool reads_any(const Node& n, const std::vector<int>& inputs) {
  auto named = [&](int i) { return std::find(inputs.begin(), inputs.end(), i) != inputs.end(); };
  switch (n.op) {
    case OpKind::Select: return std::any_of(n.indices.begin(), n.indices.end(), named);
    case OpKind::TreeEnsemble:
      for (const auto& tree : n.trees->trees) {
        for (const auto& t : tree.nodes) {
          if (t.mode != TreeEnsemble::Mode::Leaf && named(t.feature)) return true;
        }
      }
      return false;
    default: return !inputs.empty();
  }
}

Model transform_columns(const Model& m, const std::vector<int>& inputs,
                        const std::function<void(Eigen::Ref<Eigen::VectorXd>)>& f) {
  for (const int i : inputs) {
    if (i < 0 || i >= m.input_width()) {
      throw InputError(m.source, "", fmt::format("model input {} is outside [0, {})", i, m.input_width()));
    }
  }
  Model out = m;
  for (Node& n : out.nodes) {
    if (std::find(n.inputs.begin(), n.inputs.end(), out.input) == n.inputs.end()) continue;
    if (n.op == OpKind::Dense) {
      for (const int i : inputs) f(n.weights.col(i));
    } else if (reads_any(n, inputs)) {
      throw UnsupportedError(m.source, fmt::format("{} ({})", node_label(n, 0), op_name(n.op)),
                             "reads the model inputs directly; only the weights of Dense layers can be changed");
    }
  }
  return out;
}

}  // namespace

Model zero_input_weights(const Model& m, const std::vector<int>& model_inputs) {
  return transform_columns(m, model_inputs, [](Eigen::Ref<Eigen::VectorXd> c) { c.setZero(); });
}

Model scale_input_weights(const Model& m, const std::vector<int>& model_inputs, double factor) {
  if (!std::isfinite(factor)) throw InputError(fmt::format("scale factor {} is not finite", factor));
  return transform_columns(m, model_inputs, [factor](Eigen::Ref<Eigen::VectorXd> c) { c *= factor; });
}

}  // namespace witness
