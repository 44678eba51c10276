#include "fairness/falsify.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "core/error.h"
#include "domain/sampler.h"
#include "model/evaluator.h"

namespace witness {

std::vector<Eigen::VectorXd> protected_combinations(const Schema& schema, const std::vector<int>& protected_features) {
  std::vector<Eigen::VectorXd> out{Eigen::VectorXd(0)};
  for (int f : protected_features) {
    const Feature& feat = schema.feature(f);
    if (!feat.integral()) throw InputError(schema.source(), feat.name, "a protected feature must not be real");
    std::vector<Eigen::VectorXd> next;
    for (const Eigen::VectorXd& prefix : out) {
      for (double v = feat.min; v <= feat.max; v += 1.0) {
        Eigen::VectorXd c(prefix.size() + 1);
        c << prefix, v;
        next.push_back(c);
        if (next.size() > 65536)
          throw InputError(schema.source(), feat.name, "more than 65536 combinations of protected values");
      }
    }
    out = std::move(next);
  }
  if (out.size() < 2) throw InputError(schema.source(), "", "the protected features take a single value in the domain");
  return out;
}

namespace {

class Hunt {
 public:
  Hunt(const Model& model, const Schema& schema, const FalsifyOptions& o, SearchStats& stats)
      : model_(model),
        schema_(schema),
        o_(o),
        stats_(stats),
        combos_(protected_combinations(schema, o.protected_features)),
        ev_(model) {}

  // Evaluates every protected combination on the raw columns; returns the gap per column (threshold
  // rules; 0 otherwise) and collects replayed witnesses.
  Eigen::VectorXd run(const Eigen::MatrixXd& raw) {
    const Eigen::Index n = raw.cols();
    const auto nc = static_cast<Eigen::Index>(combos_.size());
    Eigen::MatrixXd z(nc, n);
    std::vector<std::vector<int>> labels(combos_.size());
    for (std::size_t c = 0; c < combos_.size(); ++c) {
      Eigen::MatrixXd r = raw;
      for (std::size_t k = 0; k < o_.protected_features.size(); ++k)
        r.row(o_.protected_features[k]).setConstant(combos_[c](static_cast<Eigen::Index>(k)));
      const Evaluation e = ev_.run(schema_.to_model_columns(r));
      labels[c] = e.labels;
      if (model_.rule.kind == DecisionRule::Kind::Threshold)
        z.row(static_cast<Eigen::Index>(c)) = e.decision.row(model_.rule.index);
    }
    stats_.tests += n * nc;
    Eigen::VectorXd gap = Eigen::VectorXd::Zero(n);
    const double t = model_.rule.threshold;
    for (Eigen::Index j = 0; j < n; ++j) {
      if (model_.rule.kind == DecisionRule::Kind::Threshold)
        gap(j) = std::max(t - z.col(j).maxCoeff(), z.col(j).minCoeff() - t);
      for (std::size_t a = 0; a < combos_.size() && !done(); ++a) {
        for (std::size_t b = 0; b < combos_.size(); ++b) {
          if (labels[a][static_cast<std::size_t>(j)] == labels[b][static_cast<std::size_t>(j)]) continue;
          try_pair(raw.col(j), a, b);
          break;
        }
      }
    }
    return gap;
  }

  // The threshold rule's value for the first protected combination (the bisection's guide).
  Eigen::VectorXd logits(const Eigen::MatrixXd& raw) {
    Eigen::MatrixXd r = raw;
    for (std::size_t k = 0; k < o_.protected_features.size(); ++k)
      r.row(o_.protected_features[k]).setConstant(combos_[0](static_cast<Eigen::Index>(k)));
    stats_.tests += raw.cols();
    return ev_.run(schema_.to_model_columns(r)).decision.row(model_.rule.index).transpose();
  }

  [[nodiscard]] bool done() const { return static_cast<int>(found_.size()) >= std::max(1, o_.max_witnesses); }
  std::vector<WitnessPair>& found() { return found_; }

 private:
  void try_pair(const Eigen::VectorXd& raw, std::size_t a, std::size_t b) {
    Eigen::VectorXd ra = raw, rb = raw;
    for (std::size_t k = 0; k < o_.protected_features.size(); ++k) {
      ra(o_.protected_features[k]) = combos_[a](static_cast<Eigen::Index>(k));
      rb(o_.protected_features[k]) = combos_[b](static_cast<Eigen::Index>(k));
    }
    for (const WitnessPair& w : found_)
      if (w.raw == ra || w.raw_prime == ra) return;  // one pair per point
    if (auto w = replay_witness(model_, schema_, o_.protected_features, schema_.to_model(ra), schema_.to_model(rb))) {
      found_.push_back(*w);
    } else {
      ++stats_.rejected;
    }
  }

  const Model& model_;
  const Schema& schema_;
  const FalsifyOptions& o_;
  SearchStats& stats_;
  std::vector<Eigen::VectorXd> combos_;
  Evaluator<double> ev_;
  std::vector<WitnessPair> found_;
};

// Neighbours of a raw point: each non-protected feature moved by +-1, +-2, +-4, ... within bounds
// (every other code for small categorical features).
Eigen::MatrixXd neighbours(const Schema& s, const std::vector<bool>& is_protected, const Eigen::VectorXd& x) {
  std::vector<Eigen::VectorXd> out;
  for (int f = 0; f < s.size(); ++f) {
    if (is_protected[static_cast<std::size_t>(f)]) continue;
    const Feature& feat = s.feature(f);
    if (feat.kind == FeatureKind::Categorical && feat.max - feat.min < 16) {
      for (double v = feat.min; v <= feat.max; v += 1.0) {
        if (v == x(f)) continue;
        out.push_back(x);
        out.back()(f) = v;
      }
      continue;
    }
    const double range = feat.max - feat.min;
    double step = feat.integral() ? 1.0 : range / 1024.0;
    for (; step <= range && step > 0.0; step *= 2.0) {
      for (double dir : {-1.0, 1.0}) {
        const double v = x(f) + dir * step;
        if (v < feat.min || v > feat.max) continue;
        out.push_back(x);
        out.back()(f) = v;
      }
    }
  }
  Eigen::MatrixXd m(x.size(), static_cast<Eigen::Index>(out.size()));
  for (std::size_t i = 0; i < out.size(); ++i) m.col(static_cast<Eigen::Index>(i)) = out[i];
  return m;
}

}  // namespace

std::vector<WitnessPair> falsify(const Model& model, const Schema& schema, const FalsifyOptions& options, Env& env,
                                 SearchStats& stats) {
  Hunt hunt(model, schema, options, stats);
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  auto over = [&] {
    const double used = elapsed();
    return hunt.done() || env.expired() || used >= options.seconds ||
           (options.cancel != nullptr && options.cancel->load());
  };
  Sampler sampler(schema, env.seed());
  // A fifth of the budget on random points, keeping the ones nearest to a flip as starts.
  std::vector<std::pair<double, Eigen::VectorXd>> starts;
  const double half = options.seconds * 0.2;
  while (!over() && elapsed() < half) {
    const Eigen::MatrixXd raw = sampler.points(512);
    const Eigen::VectorXd gap = hunt.run(raw);
    for (Eigen::Index j = 0; j < raw.cols(); ++j) starts.emplace_back(gap(j), raw.col(j));
    std::sort(starts.begin(), starts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    if (starts.size() > 64) starts.resize(64);
  }
  if (model.rule.kind != DecisionRule::Kind::Threshold) return std::move(hunt.found());
  std::vector<bool> is_protected(static_cast<std::size_t>(schema.size()), false);
  for (int f : options.protected_features) is_protected[static_cast<std::size_t>(f)] = true;
  // A fifth on hill climbing from the best random points, the rest on the boundary.
  const double climb_until = options.seconds * 0.4;
  for (std::size_t s = 0; !over() && elapsed() < climb_until; ++s) {
    Eigen::VectorXd x = s < starts.size() ? starts[s].second : sampler.point();
    double g = s < starts.size() ? starts[s].first : std::numeric_limits<double>::infinity();
    for (int step = 0; step < 200 && !over(); ++step) {
      const Eigen::MatrixXd nb = neighbours(schema, is_protected, x);
      if (nb.cols() == 0) break;
      const Eigen::VectorXd gaps = hunt.run(nb);
      Eigen::Index best = 0;
      if (gaps.minCoeff(&best) >= g) break;
      g = gaps(best);
      x = nb.col(best);
    }
  }
  std::vector<int> movable;
  for (int f = 0; f < schema.size(); ++f)
    if (!is_protected[static_cast<std::size_t>(f)] && schema.feature(f).integral() &&
        schema.feature(f).max > schema.feature(f).min)
      movable.push_back(f);
  if (movable.empty()) return std::move(hunt.found());
  std::mt19937_64 rng(env.seed() + 1);
  const Eigen::Index lines = 256;
  while (!over()) {
    // Each line moves one integer feature of a random point; bisect to adjacent values a, b where the
    // first combination's logit crosses the threshold. hunt.run checks every point it sees.
    Eigen::MatrixXd base = sampler.points(lines);
    std::vector<int> feature(static_cast<std::size_t>(lines));
    Eigen::VectorXd a(lines), b(lines);
    for (Eigen::Index l = 0; l < lines; ++l) {
      const int f = movable[std::uniform_int_distribution<std::size_t>(0, movable.size() - 1)(rng)];
      feature[static_cast<std::size_t>(l)] = f;
      a(l) = schema.feature(f).min;
      b(l) = schema.feature(f).max;
    }
    auto at = [&](const Eigen::VectorXd& v) {
      Eigen::MatrixXd m = base;
      for (Eigen::Index l = 0; l < lines; ++l) m(feature[static_cast<std::size_t>(l)], l) = v(l);
      return m;
    };
    const Eigen::VectorXd za = hunt.logits(at(a)), zb = hunt.logits(at(b));
    const double t = model.rule.threshold;
    std::vector<bool> live(static_cast<std::size_t>(lines));
    for (Eigen::Index l = 0; l < lines; ++l) live[static_cast<std::size_t>(l)] = (za(l) > t) != (zb(l) > t);
    const Eigen::VectorXd za_above = (za.array() > t).cast<double>().matrix();
    while (!over() && ((b - a).array() > 1.0).any()) {
      const Eigen::VectorXd m = ((a + b) / 2.0).array().floor().matrix();
      const Eigen::VectorXd zm = hunt.logits(at(m));
      for (Eigen::Index l = 0; l < lines; ++l) {
        if (!live[static_cast<std::size_t>(l)] || b(l) - a(l) <= 1.0) continue;
        if ((zm(l) > t) == (za_above(l) > 0.0)) {
          a(l) = m(l);
        } else {
          b(l) = m(l);
        }
      }
    }
    if (over()) break;
    hunt.run(at(a));
    hunt.run(at(b));
  }
  return std::move(hunt.found());
}

}  // namespace witness
