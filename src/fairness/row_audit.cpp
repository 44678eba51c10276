#include "fairness/row_audit.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "bounds/relu_network.h"
#include "fairness/complete/network/exact_network.h"
#include "fairness/problem.h"
#include "model/evaluator.h"

namespace witness {
namespace {

struct Decided {
  std::vector<int> labels;
  std::vector<double> scores;
};

// The model's decisions on raw rows [features][n] and the output read as the score. A ReLU
// network's labels are exact: rows whose double logit lies within its rounding bound of the
// threshold are decided in rationals.
Decided decide(const Model& model, const Schema& schema, const std::optional<ReluNetwork>& net,
               const Eigen::MatrixXd& rows, int score_output) {
  Decided d;
  const Eigen::MatrixXd x = schema.to_model_columns(rows);
  const Evaluation e = Evaluator<double>(model).run(x);
  d.labels = e.labels;
  d.scores.resize(static_cast<std::size_t>(rows.cols()));
  for (Eigen::Index i = 0; i < rows.cols(); ++i) d.scores[static_cast<std::size_t>(i)] = e.outputs(score_output, i);
  if (!net) return d;
  Eigen::VectorXd in_err = Eigen::VectorXd::Zero(schema.model_width());
  for (int f = 0; f < schema.size(); ++f) {
    const Feature& feat = schema.feature(f);
    const double lo = std::min(feat.min, rows.row(f).minCoeff()), hi = std::max(feat.max, rows.row(f).maxCoeff());
    in_err(feat.model_offset) = 2.0 * norm_error(feat, lo, hi);
  }
  const ExactNetwork exact(*net, schema);
  Eigen::RowVectorXd err;
  const Eigen::RowVectorXd z = BoundedForward(*net).logits(x, in_err, err);
  for (Eigen::Index i = 0; i < rows.cols(); ++i)
    d.labels[static_cast<std::size_t>(i)] = exact.label(rows.col(i), z(i), err(i));
  return d;
}

// The rows with the protected features set to `combo` and their proxies derived.
Eigen::MatrixXd twins(const Schema& schema, const std::vector<int>& protected_features, const Eigen::MatrixXd& raw,
                      const Eigen::VectorXd& combo) {
  Eigen::MatrixXd out = with_protected(raw, protected_features, combo);
  const Constraints& cs = schema.constraints();
  if (cs.empty()) return out;
  for (Eigen::Index i = 0; i < out.cols(); ++i) {
    Eigen::VectorXd col = out.col(i);
    cs.derive(col);
    out.col(i) = col;
  }
  return out;
}

std::string combo_name(const Schema& schema, const std::vector<int>& protected_features, const Eigen::VectorXd& c) {
  std::string out;
  for (std::size_t k = 0; k < protected_features.size(); ++k) {
    const int f = protected_features[k];
    out += fmt::format("{}{}={}", k == 0 ? "" : ", ", schema.feature(f).name,
                       schema.display_quoted(f, c(static_cast<Eigen::Index>(k))));
  }
  return out;
}

// The combination a row holds, -1 when none does.
int own_combo(const std::vector<Eigen::VectorXd>& combos, const std::vector<int>& protected_features,
              const Eigen::MatrixXd& raw, Eigen::Index i) {
  for (std::size_t c = 0; c < combos.size(); ++c) {
    bool same = true;
    for (std::size_t k = 0; k < protected_features.size() && same; ++k)
      same = raw(protected_features[k], i) == combos[c](static_cast<Eigen::Index>(k));
    if (same) return static_cast<int>(c);
  }
  return -1;
}

}  // namespace

RowAudit audit_rows(const FairnessProblem& problem, const Eigen::MatrixXd& raw, const Outcome& outcome,
                    const std::string& source) {
  const Model& model = problem.model();
  const Schema& schema = problem.schema();
  // The named features: a row's proxies are derived from them, never varied on their own.
  const std::vector<int>& protected_features = problem.named_features();
  RowAudit a;
  a.measured = true;
  a.source = source;
  a.rows = raw.cols();
  a.outcome = outcome;
  a.protected_features = protected_features;
  a.combos = problem.named_combinations();
  for (const Eigen::VectorXd& c : a.combos) a.combo_names.push_back(combo_name(schema, protected_features, c));
  const int score_output = model.output_width() > 1 ? std::min(outcome.favorable, model.output_width() - 1) : 0;
  a.score_name = model.output_width() > 1 ? fmt::format("the model's output for {}", outcome.name(score_output))
                                          : fmt::format("the model's output (towards {})", outcome.name(1));
  const std::optional<ReluNetwork> net = relu_network_of(model, nullptr);
  const Constraints& cs = schema.constraints();
  std::vector<Decided> decided;
  std::vector<std::vector<bool>> valid;  // [combo][row]: the twin is a person who can exist
  decided.reserve(a.combos.size());
  for (const Eigen::VectorXd& combo : a.combos) {
    const Eigen::MatrixXd rc = twins(schema, protected_features, raw, combo);
    decided.push_back(decide(model, schema, net, rc, score_output));
    std::vector<bool> ok(static_cast<std::size_t>(raw.cols()), true);
    if (!cs.empty())
      for (Eigen::Index i = 0; i < rc.cols(); ++i) ok[static_cast<std::size_t>(i)] = cs.satisfied(rc.col(i));
    valid.push_back(std::move(ok));
  }
  const std::size_t nc = a.combos.size();
  a.groups.resize(nc);
  std::vector<std::int64_t> to_fav(nc, 0), to_unfav(nc, 0);
  for (std::size_t c = 0; c < nc; ++c) {
    a.groups[c].combo = static_cast<int>(c);
    a.groups[c].group = a.combo_names[c];
    a.groups[c].to_favorable_with.assign(nc, 0);
    a.groups[c].to_unfavorable_with.assign(nc, 0);
  }
  for (Eigen::Index i = 0; i < raw.cols(); ++i) {
    const auto u = static_cast<std::size_t>(i);
    const int own = own_combo(a.combos, protected_features, raw, i);
    if (own < 0 || !valid[static_cast<std::size_t>(own)][u]) {
      ++a.outside;
      continue;
    }
    GroupHarm& g = a.groups[static_cast<std::size_t>(own)];
    ++g.rows;
    RowFlip flip;
    flip.row = i;
    flip.combo = own;
    flip.label = decided[static_cast<std::size_t>(own)].labels[u];
    flip.score = decided[static_cast<std::size_t>(own)].scores[u];
    bool any_favorable = false;
    for (std::size_t c = 0; c < nc; ++c) {
      if (static_cast<int>(c) == own || !valid[c][u] || decided[c].labels[u] == flip.label) continue;
      const int label = decided[c].labels[u];
      flip.others.push_back({static_cast<int>(c), label, decided[c].scores[u]});
      if (flip.label == outcome.favorable) {
        ++g.to_unfavorable_with[c];
      } else if (label == outcome.favorable) {
        any_favorable = true;
        ++g.to_favorable_with[c];
      }
    }
    if (flip.others.empty()) continue;
    if (flip.label == outcome.favorable) {
      flip.direction = FlipDirection::ToUnfavorable;
      ++to_unfav[static_cast<std::size_t>(own)];
    } else if (any_favorable) {
      flip.direction = FlipDirection::ToFavorable;
      ++to_fav[static_cast<std::size_t>(own)];
    } else {
      flip.direction = FlipDirection::Between;
    }
    a.flips.push_back(std::move(flip));
  }
  for (std::size_t c = 0; c < nc; ++c) {
    a.groups[c].to_favorable = make_rate(to_fav[c], a.groups[c].rows);
    a.groups[c].to_unfavorable = make_rate(to_unfav[c], a.groups[c].rows);
  }
  std::erase_if(a.groups, [](const GroupHarm& g) { return g.rows == 0; });
  return a;
}

DataShare data_share(const RowAudit& audit) {
  DataShare d;
  d.measured = audit.measured;
  d.rows = audit.rows;
  d.unfair = static_cast<std::int64_t>(audit.flips.size());
  d.source = audit.source;
  d.row_labels = audit.row_labels;
  return d;
}

std::vector<WitnessPair> row_witnesses(const RowAudit& audit, const FairnessProblem& problem,
                                       const Eigen::MatrixXd& raw, int max, SearchStats& stats) {
  const Model& model = problem.model();
  const Schema& schema = problem.schema();
  std::vector<WitnessPair> out;
  WitnessReplayer replayer(model, schema, audit.protected_features);
  const Constraints& cs = schema.constraints();
  stats.tests += audit.rows * static_cast<std::int64_t>(audit.combos.size());
  for (const RowFlip& flip : audit.flips) {
    if (static_cast<int>(out.size()) >= max) break;
    Eigen::VectorXd x = raw.col(flip.row);
    cs.derive(x);
    bool replayed = false;
    for (const RowFlip::Other& other : flip.others) {
      Eigen::VectorXd x_prime = with_protected(raw.col(flip.row), audit.protected_features,
                                               audit.combos[static_cast<std::size_t>(other.combo)])
                                    .col(0);
      cs.derive(x_prime);
      if (auto w = replayer.replay_raw(x, x_prime)) {
        out.push_back(std::move(*w));
        replayed = true;
        break;
      }
    }
    if (!replayed) ++stats.rejected;
  }
  return out;
}

}  // namespace witness
