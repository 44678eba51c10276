#include "fairness/verdict.h"

#include "model/evaluator.h"

namespace witness {

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::Verified: return "verified";
    case Verdict::Witness: return "witness";
    case Verdict::Inconclusive: return "inconclusive";
  }
  return "inconclusive";
}

int exit_code(Verdict v) {
  switch (v) {
    case Verdict::Verified: return 0;
    case Verdict::Witness: return 10;
    case Verdict::Inconclusive: return 20;
  }
  return 20;
}

std::optional<WitnessPair> replay_witness(const Model& model, const Schema& schema,
                                          const std::vector<int>& protected_features, const Eigen::VectorXd& x,
                                          const Eigen::VectorXd& x_prime) {
  if (x.size() != schema.model_width() || x_prime.size() != schema.model_width()) return std::nullopt;
  WitnessPair w;
  w.raw = schema.from_model(x);
  w.raw_prime = schema.from_model(x_prime);
  if (!schema.contains(w.raw) || !schema.contains(w.raw_prime)) return std::nullopt;
  std::vector<bool> is_protected(static_cast<std::size_t>(schema.size()), false);
  for (int f : protected_features) is_protected[static_cast<std::size_t>(f)] = true;
  bool protected_differs = false;
  for (int f = 0; f < schema.size(); ++f) {
    const bool same = w.raw[f] == w.raw_prime[f];
    if (is_protected[static_cast<std::size_t>(f)]) {
      protected_differs = protected_differs || !same;
    } else if (!same) {
      return std::nullopt;
    }
  }
  if (!protected_differs) return std::nullopt;
  w.x = schema.to_model(w.raw);
  w.x_prime = schema.to_model(w.raw_prime);
  Eigen::MatrixXd both(w.x.size(), 2);
  both.col(0) = w.x;
  both.col(1) = w.x_prime;
  const Evaluation e64 = evaluate(model, both, Precision::Float64);
  const Evaluation e32 = evaluate(model, both, Precision::Float32);
  if (e64.labels[0] == e64.labels[1]) return std::nullopt;
  w.float32_differs = e32.labels[0] != e32.labels[1];
  w.label = e64.labels[0];
  w.label_prime = e64.labels[1];
  w.output = e64.outputs.col(0);
  w.output_prime = e64.outputs.col(1);
  return w;
}

}  // namespace witness
