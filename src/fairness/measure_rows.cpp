#include <optional>

#include "bounds/relu_network.h"
#include "fairness/complete_search.h"
#include "fairness/exact_network.h"
#include "fairness/falsify.h"
#include "fairness/valid_combinations.h"
#include "model/evaluator.h"

namespace witness {

DataShare measure_rows(const Model& model, const Schema& schema, const std::vector<int>& protected_features,
                       const Eigen::MatrixXd& raw, const std::string& source) {
  DataShare d;
  d.measured = true;
  d.source = source;
  d.rows = raw.cols();
  const std::vector<Eigen::VectorXd> combos = protected_combinations(schema, protected_features);
  std::vector<std::vector<int>> labels(combos.size());
  std::string why;
  const std::optional<ReluNetwork> net = relu_network_of(model, &why);
  for (std::size_t c = 0; c < combos.size(); ++c) {
    const Eigen::MatrixXd rc = with_protected(raw, protected_features, combos[c]);
    const Eigen::MatrixXd x = schema.to_model_columns(rc);
    if (!net) {
      labels[c] = evaluate(model, x, Precision::Float64).labels;
      continue;
    }
    // The double logits with their rounding bounds; rows within the bound of the threshold are
    // evaluated in exact rationals.
    Eigen::VectorXd in_err = Eigen::VectorXd::Zero(schema.model_width());
    for (int f = 0; f < schema.size(); ++f) {
      const Feature& feat = schema.feature(f);
      const double lo = std::min(feat.min, rc.row(f).minCoeff()), hi = std::max(feat.max, rc.row(f).maxCoeff());
      in_err(feat.model_offset) = 2.0 * norm_error(feat, lo, hi);
    }
    const ExactNetwork exact(*net, schema);
    Eigen::RowVectorXd err;
    const Eigen::RowVectorXd z = BoundedForward(*net).logits(x, in_err, err);
    labels[c].resize(static_cast<std::size_t>(rc.cols()));
    for (Eigen::Index i = 0; i < rc.cols(); ++i)
      labels[c][static_cast<std::size_t>(i)] = exact.label(rc.col(i), z(i), err(i));
  }
  // A row counts when two protected values that each make a person who can exist (proxies
  // derived) get different labels.
  const ValidCombinations valid(schema, protected_features, combos);
  for (Eigen::Index i = 0; i < raw.cols(); ++i) {
    const auto u = static_cast<std::size_t>(i);
    int seen = -1;
    for (std::size_t c = 0; c < combos.size(); ++c) {
      if (valid.constrained() && !valid.valid(raw.col(i), c)) continue;
      if (seen < 0) seen = labels[c][u];
      if (labels[c][u] != seen) {
        ++d.unfair;
        break;
      }
    }
  }
  return d;
}

}  // namespace witness
