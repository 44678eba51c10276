#include "fairness/verdict.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "model/evaluator.h"

namespace witness {

void find_nearest_rows(const Eigen::MatrixXd& raw_rows, std::vector<WitnessPair>& witnesses) {
  for (WitnessPair& w : witnesses) {
    Eigen::Index best = -1, fewest = raw_rows.rows() + 1;
    for (Eigen::Index j = 0; j < raw_rows.cols() && fewest > 0; ++j) {
      const Eigen::Index d = (raw_rows.col(j).array() != w.raw.array()).count();
      if (d < fewest) fewest = d, best = j;
    }
    w.nearest_row = best;
    w.nearest_differs.clear();
    if (best < 0) continue;
    for (Eigen::Index f = 0; f < raw_rows.rows(); ++f)
      if (raw_rows(f, best) != w.raw(f)) w.nearest_differs.push_back(static_cast<int>(f));
  }
}

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

struct WitnessReplayer::Evaluators {
  explicit Evaluators(const Model& m) : float64(m), float32(m) {}
  Evaluator<double> float64;
  Evaluator<float> float32;
};

WitnessReplayer::WitnessReplayer(const Model& model, const Schema& schema, std::vector<int> protected_features)
    : model_(model), schema_(schema), protected_features_(std::move(protected_features)) {}

WitnessReplayer::~WitnessReplayer() = default;

std::vector<bool> proxy_mask(const Schema& schema, const std::vector<int>& protected_features) {
  std::vector<bool> mask = schema.feature_mask(protected_features);
  // Derivations are ordered sources first: one pass reaches every feature derived, at any depth.
  for (const DerivedFeature& d : schema.constraints().derived()) {
    if (mask[static_cast<std::size_t>(d.source)]) mask[static_cast<std::size_t>(d.target)] = true;
  }
  return mask;
}

std::optional<WitnessPair> replay_witness(const Model& model, const Schema& schema,
                                          const std::vector<int>& protected_features, const Eigen::VectorXd& x,
                                          const Eigen::VectorXd& x_prime) {
  return WitnessReplayer(model, schema, protected_features).replay(x, x_prime);
}

std::optional<WitnessPair> replay_witness_raw(const Model& model, const Schema& schema,
                                              const std::vector<int>& protected_features, const Eigen::VectorXd& raw,
                                              const Eigen::VectorXd& raw_prime) {
  return WitnessReplayer(model, schema, protected_features).replay_raw(raw, raw_prime);
}

std::optional<WitnessPair> WitnessReplayer::replay(const Eigen::VectorXd& x, const Eigen::VectorXd& x_prime) {
  if (x.size() != schema_.model_width() || x_prime.size() != schema_.model_width()) return std::nullopt;
  return replay_raw(schema_.from_model(x), schema_.from_model(x_prime));
}

std::optional<WitnessPair> WitnessReplayer::replay_raw(Eigen::VectorXd raw, Eigen::VectorXd raw_prime) {
  const Model& model = model_;
  const Schema& schema = schema_;
  const std::vector<int>& protected_features = protected_features_;
  if (raw.size() != schema.size() || raw_prime.size() != schema.size()) return std::nullopt;
  WitnessPair w;
  w.raw = std::move(raw);
  w.raw_prime = std::move(raw_prime);
  if (!schema.contains(w.raw) || !schema.contains(w.raw_prime)) return std::nullopt;
  // Derived features follow their sources (an engine that does not know them may leave them
  // anywhere); a feature derived from a protected one is its proxy and changes with it.
  const Constraints& constraints = schema.constraints();
  constraints.derive(w.raw);
  constraints.derive(w.raw_prime);
  const std::vector<bool> is_protected = proxy_mask(schema, protected_features);
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
  // Both must be people who can exist.
  if (!constraints.satisfied(w.raw) || !constraints.satisfied(w.raw_prime)) return std::nullopt;
  w.x = schema.to_model(w.raw);
  w.x_prime = schema.to_model(w.raw_prime);
  Eigen::MatrixXd both(w.x.size(), 2);
  both.col(0) = w.x;
  both.col(1) = w.x_prime;
  if (!evaluators_) evaluators_ = std::make_unique<Evaluators>(model);  // only once a pair is in the domain
  const Evaluation e64 = evaluators_->float64.run(both);
  const Evaluation e32 = evaluators_->float32.run(both);
  if (e64.labels[0] == e64.labels[1]) return std::nullopt;
  w.float32_witness = e32.labels[0] != e32.labels[1];
  if (model.rule.kind == DecisionRule::Kind::Threshold) {
    // Both logits (threshold rules look through a final sigmoid: the rule node holds the logit).
    const double t = model.rule.threshold;
    for (Eigen::Index c = 0; c < 2; ++c) {
      const double z64 = e64.decision(model.rule.index, c), z32 = e32.decision(model.rule.index, c);
      const double resolution = 64.0 * 0x1p-24 * std::max(std::abs(z64), std::abs(t)) + std::abs(z32 - z64);
      if (std::abs(z64 - t) <= resolution) w.float32_within_rounding = true;
    }
  }
  w.label = e64.labels[0];
  w.label_prime = e64.labels[1];
  w.output = e64.outputs.col(0);
  w.output_prime = e64.outputs.col(1);
  return w;
}

namespace {

// A bound rounded outward to `digits` significant digits (down for a low end, up for a high one),
// so that the rule read by a person still covers the region.
double outward(double x, bool up, int digits = 4) {
  if (x == 0.0 || !std::isfinite(x)) return x;
  const double step = std::pow(10.0, std::floor(std::log10(std::fabs(x))) - (digits - 1));
  return (up ? std::ceil(x / step) : std::floor(x / step)) * step;
}

// Categories lo..hi as a set: the set itself when short, else what it leaves out.
std::string category_set(const Schema& schema, int f, long lo, long hi) {
  constexpr long kShown = 12;
  const auto k = static_cast<long>(schema.feature(f).categories.size());
  auto names = [&](long a, long b, std::vector<std::string>& out) {
    for (long v = a; v <= b; ++v) out.push_back(schema.display_quoted(f, static_cast<double>(v)));
  };
  std::vector<std::string> in;
  names(lo, hi, in);
  if (static_cast<long>(in.size()) <= kShown)
    return fmt::format("{} in {{{}}}", schema.feature(f).name, fmt::join(in, ", "));
  std::vector<std::string> out;
  names(0, lo - 1, out);
  names(hi + 1, k - 1, out);
  if (static_cast<long>(out.size()) <= kShown)
    return fmt::format("{} not in {{{}}}", schema.feature(f).name, fmt::join(out, ", "));
  const auto more = static_cast<long>(in.size()) - kShown;
  in.resize(static_cast<std::size_t>(kShown));
  return fmt::format("{} in {{{}, and {} more}}", schema.feature(f).name, fmt::join(in, ", "), more);
}

}  // namespace

std::string real_interval_text(const std::string& name, double lo, double hi) {
  return fmt::format("{} in [{:.4g}, {:.4g}]", name, outward(lo, false), outward(hi, true));
}

std::string region_rule(const Schema& schema, const RegionReport& region, const std::vector<int>& protected_features) {
  std::string out;
  for (int f = 0; f < schema.size(); ++f) {
    if (std::find(protected_features.begin(), protected_features.end(), f) != protected_features.end()) continue;
    const Feature& feat = schema.feature(f);
    const double lo = region.lo(f), hi = region.hi(f);
    if (lo <= feat.min && hi >= feat.max) continue;
    std::string part;
    if (lo == hi) {
      part = feat.name + "=" + schema.display_quoted(f, lo);
    } else if (feat.kind == FeatureKind::Categorical) {
      part = category_set(schema, f, static_cast<long>(lo), static_cast<long>(hi));
    } else if (feat.integral()) {
      part = fmt::format("{} {}..{}", feat.name, schema.display_quoted(f, lo), schema.display_quoted(f, hi));
    } else {
      part = real_interval_text(feat.name, lo, hi);
    }
    out += (out.empty() ? "" : ", ") + part;
  }
  return out.empty() ? "the whole domain" : out;
}

}  // namespace witness
