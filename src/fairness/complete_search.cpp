#include "fairness/complete_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "bounds/bound_propagator.h"
#include "bounds/linear_count.h"
#include "bounds/relu_network.h"
#include "core/error.h"
#include "fairness/concolic_search.h"
#include "fairness/falsify.h"
#include "fairness/quantify_answer.h"
#include "fairness/smt_search.h"
#include "fairness/tree_search.h"
#include "fairness/valid_combinations.h"
#include "model/evaluator.h"
#include "solver/rational.h"

namespace witness {

SplitRule parse_split_rule(const std::string& name) { return kSplitRules.parse(name, "--split"); }

namespace {

constexpr double kUnit = 0x1p-53;
constexpr double kTiny = 0x1p-1000;
constexpr int kCountBins = 256;       // bins of a first count
constexpr int kFineBins = 16384;      // where the bounds are near-linear and binning limits the count
constexpr double kMinCounted = 0.02;  // no count where a normal approximation says it decides less
constexpr long double kMaxEnumerated = 1 << 24;
constexpr std::size_t kPointReports = 4096;  // falsified points of an enumerated region reported one by one

double gamma_n(Eigen::Index n) { return (static_cast<double>(n) + 4.0) * kUnit * 1.01; }

struct Region {
  Eigen::VectorXd lo, hi;              // raw bounds per schema feature (protected entries unused)
  std::vector<int> open;               // ordered pairs i * C + j (z_i > t >= z_j) not yet excluded
  std::vector<Eigen::VectorXd> known;  // raw rows inside that are replayed witnesses
  int depth = 0;
  int split = -1;                          // the feature to split next
  long double measure = 0.0L;              // integer points times the real features' length shares
  long double fair = 0.0L, unfair = 0.0L;  // lower bounds from counting (same unit)
  double key = 0.0;                        // larger keys are refined first
  bool recount = false;  // counted coarsely where the bounds are near-linear: count finely before splitting
};

// What evaluating one region found, applied to the shared state under the lock.
struct RegionEvaluation {
  bool closed = false;
  long double certified = 0.0L, falsified = 0.0L;  // closed regions: measures
  long double invalid = 0.0L;  // the measure of points found to be no person (cut off, or in a closed region)
  bool inexact = false;        // closed as certified without knowing how many of its points are valid
  std::vector<WitnessPair> witnesses;
  std::int64_t rejected = 0, checked = 0, enumerated = 0, counted = 0, fine_counted = 0, exact_only = 0;
  bool report = false;  // a closed region with falsified points, for the report
  bool all_falsified = false;
  std::vector<Eigen::VectorXd> unfair_points;  // enumerated: each falsified point, when few
};

// Bounds the error of a normalised model input as computed in double against its exact value,
// for raw values in [rlo, rhi].
double norm_error(const Feature& feat, double rlo, double rhi) {
  if (feat.one_hot || feat.norm.form == Normalisation::Form::None) return 0.0;
  const double a = feat.norm.to_model(rlo), b = feat.norm.to_model(rhi);
  const double centred = std::abs(rlo) + std::abs(rhi) + std::abs(feat.norm.a);
  const double scale =
      std::abs(feat.norm.a) + std::abs(feat.norm.b) +
      (feat.norm.form == Normalisation::Form::MeanStd && feat.norm.b != 0.0 ? centred / std::abs(feat.norm.b)
       : feat.norm.form == Normalisation::Form::CenterScale                 ? centred * std::abs(feat.norm.b)
                                                                            : std::abs(rlo) + std::abs(rhi));
  return 16.0 * kUnit * (std::abs(a) + std::abs(b) + scale) + 0x1p-1000;
}

// Thrown by an evaluation that the stop flag cut short: the region stays open (undecided).
struct Interrupted {};

// The network in exact rational arithmetic, with model inputs computed exactly from raw values:
// the arbiter for points whose double logit lies within its rounding bound of the threshold.
class ExactNetwork {
 public:
  ExactNetwork(const ReluNetwork& net, const Schema& schema) : net_(net), schema_(schema) {}
  // logit() throws Interrupted between layers once *stop is set (a wide layer takes seconds).
  void set_stop(const std::atomic<bool>* stop) { stop_ = stop; }

  [[nodiscard]] Rational logit(const Eigen::VectorXd& raw) const {
    std::call_once(once_, [this] {
      for (const auto& layer : net_.layers) {
        std::vector<std::vector<Rational>> w(static_cast<std::size_t>(layer.weights.rows()));
        std::vector<Rational> b;
        for (Eigen::Index r = 0; r < layer.weights.rows(); ++r) {
          for (Eigen::Index c = 0; c < layer.weights.cols(); ++c)
            w[static_cast<std::size_t>(r)].push_back(Rational::from_double(layer.weights(r, c)));
          b.push_back(Rational::from_double(layer.bias(r)));
        }
        w_.push_back(std::move(w));
        b_.push_back(std::move(b));
      }
    });
    std::vector<Rational> a(static_cast<std::size_t>(schema_.model_width()));
    for (int f = 0; f < schema_.size(); ++f) {
      const Feature& feat = schema_.feature(f);
      const Rational v = Rational::from_double(raw(f));
      if (feat.one_hot) {
        for (int k = 0; k < feat.model_width; ++k)
          a[static_cast<std::size_t>(feat.model_offset) + static_cast<std::size_t>(k)] = Rational(k == raw(f) ? 1 : 0);
        continue;
      }
      Rational x = v;
      if (feat.norm.form == Normalisation::Form::ScaleOffset) {
        x = v * Rational::from_double(feat.norm.a) + Rational::from_double(feat.norm.b);
      } else if (feat.norm.form == Normalisation::Form::MeanStd) {
        x = (v - Rational::from_double(feat.norm.a)) / Rational::from_double(feat.norm.b);
      } else if (feat.norm.form == Normalisation::Form::CenterScale) {
        x = (v - Rational::from_double(feat.norm.a)) * Rational::from_double(feat.norm.b);
      }
      a[static_cast<std::size_t>(feat.model_offset)] = x;
    }
    for (std::size_t k = 0; k < w_.size(); ++k) {
      if (stop_ != nullptr && stop_->load()) throw Interrupted{};
      std::vector<Rational> h = b_[k];
      for (std::size_t r = 0; r < h.size(); ++r)
        for (std::size_t c = 0; c < a.size(); ++c)
          if (w_[k][r][c].sign() != 0 && a[c].sign() != 0) h[r] += w_[k][r][c] * a[c];
      if (k + 1 < w_.size())
        for (auto& v : h)
          if (v.sign() < 0) v = Rational(0);
      a = std::move(h);
    }
    return a[0];
  }

  // The exact label at raw, given the double logit z and a bound on its rounding error.
  [[nodiscard]] int label(const Eigen::VectorXd& raw, double z, double error) const {
    if (z - error > net_.threshold) return 1;
    if (z + error <= net_.threshold) return 0;
    ++exact_points_;
    return logit(raw) > Rational::from_double(net_.threshold) ? 1 : 0;
  }
  [[nodiscard]] std::int64_t exact_points() const { return exact_points_.load(); }

 private:
  const ReluNetwork& net_;
  const Schema& schema_;
  const std::atomic<bool>* stop_ = nullptr;
  mutable std::atomic<std::int64_t> exact_points_{0};  // points decided in rationals
  mutable std::once_flag once_;
  mutable std::vector<std::vector<std::vector<Rational>>> w_;
  mutable std::vector<std::vector<Rational>> b_;
};

class Verifier {
 public:
  Verifier(const Model& model, const Schema& schema, const CompleteSearchOptions& o, Env& env, ReluNetwork net)
      : model_(model),
        schema_(schema),
        o_(o),
        env_(env),
        net_(std::move(net)),
        bp_(net_),
        forward_(net_),
        exact_(net_, schema),
        combos_(protected_combinations(schema, o.protected_features)),
        is_protected_(schema.feature_mask(o.protected_features)),
        valid_(schema, o.protected_features, combos_) {
    for (int f = 0; f < schema.size(); ++f) {
      const Feature& feat = schema.feature(f);
      if (!is_protected_[static_cast<std::size_t>(f)] && feat.integral())
        domain_points_ *= static_cast<long double>(feat.max - feat.min + 1.0);
      if (!is_protected_[static_cast<std::size_t>(f)] && !feat.integral() && feat.max > feat.min) real_domain_ = true;
    }
    for (const int i : schema.inputs_of(o.protected_features)) protected_inputs_.push_back(i);
    for (std::size_t c = 0; c < combos_.size(); ++c) {
      Eigen::VectorXd lo, hi;
      Region whole{Eigen::VectorXd::Zero(schema.size()), Eigen::VectorXd::Zero(schema.size()), {}, {}, 0, -1};
      model_box(whole, combos_[c], lo, hi);
      combo_lo_.push_back(lo);
      combo_hi_.push_back(hi);
    }
    // Multiply-adds of one forward pass, and roughly of one bound computation (interval pass,
    // back-substitution of every layer through the layers below it).
    std::vector<double> width{static_cast<double>(net_.input_width)};
    for (const auto& layer : net_.layers) {
      abs_weights_.emplace_back(layer.weights.cwiseAbs());
      point_cost_ += static_cast<double>(layer.weights.size());
      width.push_back(static_cast<double>(layer.weights.rows()));
    }
    if (o.hidden_bounds != CompleteSearchOptions::HiddenBounds::Auto)
      bp_.set_forward_mode(o.hidden_bounds == CompleteSearchOptions::HiddenBounds::Forward);
    bound_cost_ = 4.0 * point_cost_;
    for (std::size_t k = 1; k < net_.layers.size(); ++k) {
      if (bp_.forward_mode()) {
        bound_cost_ += 2.0 * width[k + 1] * width[k] * (width[0] + 1.0);
        continue;
      }
      for (std::size_t j = 0; j < k; ++j) bound_cost_ += width[k + 1] * width[j + 1] * width[j];
    }
    unsigned threads = env_.threads();
    if (threads == 0) threads = std::max(1U, std::thread::hardware_concurrency());
    threads_ = threads;
    for (unsigned t = 0; t < threads; ++t) queues_.push_back(std::make_unique<Queue>());
    split_ = o.split != SplitRule::Auto ? o.split : o.quantify ? SplitRule::Gap : SplitRule::Score;
    if (o.quantify) answer_.emplace(schema, o.protected_features, o.max_regions, domain_points_);
    bp_.set_stop(&stop_);
    forward_.set_stop(&stop_);
    exact_.set_stop(&stop_);
  }

  FairnessResult run() {
    Region root{Eigen::VectorXd(schema_.size()), Eigen::VectorXd(schema_.size()), {}, {}, 0, -1};
    for (int f = 0; f < schema_.size(); ++f) {
      root.lo(f) = schema_.feature(f).min;
      root.hi(f) = schema_.feature(f).max;
    }
    const int nc = static_cast<int>(combos_.size());
    for (int i = 0; i < nc; ++i)
      for (int j = 0; j < nc; ++j)
        if (i != j) root.open.push_back(i * nc + j);
    // The time limit and the cancel flag raise stop_, which long evaluations (bounds of wide
    // networks, enumeration) watch, so a limit is kept to within one layer or one batch.
    // The watchdog waits on a condition variable, so that a run of milliseconds (one box of
    // --near-data) ends without waiting out its polling interval.
    bool done = false;
    std::mutex done_mutex;
    std::condition_variable done_cv;
    std::thread watchdog([this, &done, &done_mutex, &done_cv] {
      std::unique_lock lock(done_mutex);
      while (!done) {
        if (env_.expired() || (o_.cancel != nullptr && o_.cancel->load())) {
          interrupted_ = true;
          stop_ = true;
          idle_cv_.notify_all();
          return;
        }
        done_cv.wait_for(lock, std::chrono::milliseconds(5));
      }
    });
    auto finish_watchdog = [&] {
      {
        std::lock_guard lock(done_mutex);
        done = true;
      }
      done_cv.notify_all();
      watchdog.join();
    };
    RegionEvaluation ev;
    bool root_open = false;
    if (env_.expired() || (o_.cancel != nullptr && o_.cancel->load())) {
      interrupted_ = true;
      root_open = true;
    } else {
      try {
        evaluate(root, ev);
      } catch (const Interrupted&) {
        root_open = true;
      } catch (...) {
        finish_watchdog();
        throw;
      }
    }
    if (root_open) {  // nothing decided: all undecided
      root.measure = measure(root);
      stuck_.push_back(std::move(root));
    } else {
      commit(0, nullptr, {}, {std::move(root)}, {std::move(ev)});
      // Own threads rather than TBB tasks: the anytime answer needs each worker to take the region
      // of largest undecided measure next (witness hunting: the newest), across all queues when
      // idle; TBB's scheduler runs tasks LIFO/FIFO by spawn, with no such order or global view.
      // One thread per worker for the whole run, so there is no per-task cost to save.
      std::vector<std::thread> pool;
      for (unsigned t = 1; t < threads_; ++t) pool.emplace_back([this, t] { work(t); });
      work(0);
      for (auto& t : pool) t.join();
    }
    finish_watchdog();
    if (error_) std::rethrow_exception(error_);
    return result();
  }

 private:
  struct Queue {
    std::mutex mutex;
    std::vector<Region> heap;  // max-heap on key
  };

  // Model-input bounds of the raw box r with the protected features set to `combo`. Inputs that a
  // normalisation computes are widened to contain their exact rational value.
  void model_box(const Region& r, const Eigen::VectorXd& combo, Eigen::VectorXd& lo, Eigen::VectorXd& hi,
                 Eigen::VectorXd* error = nullptr) const {
    lo = Eigen::VectorXd::Zero(schema_.model_width());
    hi = lo;
    if (error != nullptr) *error = lo;
    for (int f = 0; f < schema_.size(); ++f) {
      const Feature& feat = schema_.feature(f);
      double rlo = r.lo(f), rhi = r.hi(f);
      if (is_protected_[static_cast<std::size_t>(f)]) {
        const auto k = static_cast<Eigen::Index>(
            std::find(o_.protected_features.begin(), o_.protected_features.end(), f) - o_.protected_features.begin());
        rlo = rhi = combo(k);
      }
      if (feat.one_hot) {
        for (int k = 0; k < feat.model_width; ++k) {
          const bool inside = k >= rlo && k <= rhi;
          lo(feat.model_offset + k) = inside && rlo == rhi ? 1.0 : 0.0;
          hi(feat.model_offset + k) = inside ? 1.0 : 0.0;
        }
        continue;
      }
      double a = feat.norm.to_model(rlo), b = feat.norm.to_model(rhi);
      if (a > b) std::swap(a, b);
      if (feat.norm.form != Normalisation::Form::None) {
        const double err = norm_error(feat, rlo, rhi);
        a = std::nextafter(a - err, -INFINITY);
        b = std::nextafter(b + err, INFINITY);
        if (error != nullptr) (*error)(feat.model_offset) = 2.0 * err;
      }
      lo(feat.model_offset) = a;
      hi(feat.model_offset) = b;
    }
  }

  [[nodiscard]] long double measure(const Region& r) const { return box_measure(schema_, is_protected_, r.lo, r.hi); }

  // Every non-protected feature is integral or fixed: the region is a finite set of points.
  [[nodiscard]] bool discrete(const Region& r) const {
    for (int f = 0; f < schema_.size(); ++f)
      if (!is_protected_[static_cast<std::size_t>(f)] && !schema_.feature(f).integral() && r.lo(f) < r.hi(f))
        return false;
    return true;
  }

  [[nodiscard]] Eigen::VectorXd raw_with(const Eigen::VectorXd& raw, int combo) const {
    return with_protected(raw, o_.protected_features, combos_[static_cast<std::size_t>(combo)]).col(0);
  }

  [[nodiscard]] bool wants_witnesses() const {
    return witnesses_found_.load(std::memory_order_relaxed) < std::max(1, o_.max_witnesses);
  }

  // A replayed witness if raw (non-protected part) with combos i and j is one in double.
  bool try_candidate(const Eigen::VectorXd& raw, int i, int j, RegionEvaluation& ev) const {
    Eigen::VectorXd ri = raw_with(raw, i), rj = raw_with(raw, j);
    if (valid_.constrained()) {  // a person who cannot exist is no candidate (and no failed replay)
      const Constraints& cs = schema_.constraints();
      cs.derive(ri);
      cs.derive(rj);
      if (!cs.satisfied(ri) || !cs.satisfied(rj)) return false;
    }
    const Eigen::VectorXd xi = schema_.to_model(ri), xj = schema_.to_model(rj);
    const double t = net_.threshold;
    if (!(net_.logit(xi) > t && net_.logit(xj) <= t)) return false;
    if (auto w = replay_witness(model_, schema_, o_.protected_features, xi, xj)) {
      ev.witnesses.push_back(*w);
      return true;
    }
    ++ev.rejected;
    return false;
  }

  [[nodiscard]] int split_feature(const Region& r, const std::vector<NetworkBounds>& nb,
                                  const std::vector<bool>& needed) const {
    const std::vector<int> c = split_candidates(r, nb, needed, 1);
    return c.empty() ? -1 : c.front();
  }

  // The k features with the best split scores, best first.
  // A feature's split score under `rule` (0 when the rule sees no reason to split it).
  [[nodiscard]] double feature_score(SplitRule rule, const Region& r, int f, const std::vector<NetworkBounds>& nb,
                                     const std::vector<bool>& needed) const {
    const Feature& feat = schema_.feature(f);
    const double width = feat.one_hot ? 1.0 : std::abs(feat.norm.to_model(r.hi(f)) - feat.norm.to_model(r.lo(f)));
    double score = 0.0;
    for (std::size_t c = 0; c < nb.size(); ++c) {
      if (!needed[c]) continue;
      for (int m = 0; m < feat.model_width; ++m) {
        const Eigen::Index in = feat.model_offset + m;
        if (rule == SplitRule::Score && nb[c].upper_coef.size() > 0)
          score += (std::abs(nb[c].upper_coef(in)) + std::abs(nb[c].lower_coef(in))) * width;
        if (rule != SplitRule::Gap) continue;
        // Each unstable neuron's share of the output's gap, times the fraction of its own range
        // that this feature spans.
        for (std::size_t j = 0; j < nb[c].output_gap.size(); ++j) {
          const Eigen::VectorXd& gap = nb[c].output_gap[j];
          for (Eigen::Index i = 0; i < gap.size(); ++i)
            if (gap(i) > 0.0)
              score += gap(i) * nb[c].input_sensitivity[j](i, in) * width / (nb[c].hi[j](i) - nb[c].lo[j](i));
        }
      }
    }
    return score;
  }

  // The k features with the best split scores, best first. Gap falls back to Score where no neuron
  // is unstable, and both to the widest feature where the bounds show no gradient.
  [[nodiscard]] std::vector<int> split_candidates(const Region& r, const std::vector<NetworkBounds>& nb,
                                                  const std::vector<bool>& needed, std::size_t k) const {
    std::vector<std::pair<double, int>> scored;
    for (int f = 0; f < schema_.size(); ++f)
      if (!is_protected_[static_cast<std::size_t>(f)] && r.lo(f) < r.hi(f))
        scored.emplace_back(split_ == SplitRule::Widest ? r.hi(f) - r.lo(f) : feature_score(split_, r, f, nb, needed),
                            f);
    auto flat = [&] { return std::all_of(scored.begin(), scored.end(), [](const auto& p) { return p.first <= 0.0; }); };
    if (flat() && split_ == SplitRule::Gap)
      for (auto& [score, f] : scored) score = feature_score(SplitRule::Score, r, f, nb, needed);
    if (flat())
      for (auto& [score, f] : scored) score = r.hi(f) - r.lo(f);
    std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<int> out;
    for (std::size_t i = 0; i < scored.size() && i < k; ++i) out.push_back(scored[i].second);
    return out;
  }

  // Decides every point of a finite region exactly: a batched forward pass in double, and exact
  // rationals for the points whose logit lies within the rounding bound of the threshold.
  void enumerate(const Region& r, const std::vector<bool>& needed, RegionEvaluation& ev) const {
    const int nc = static_cast<int>(combos_.size());
    Eigen::VectorXd in_err;
    {
      Eigen::VectorXd lo, hi;
      model_box(r, combos_[0], lo, hi, &in_err);
      for (int f : o_.protected_features) {  // the protected inputs' errors for every combo
        const Feature& feat = schema_.feature(f);
        in_err(feat.model_offset) = 2.0 * norm_error(feat, feat.min, feat.max);
      }
    }
    std::vector<int> dims;
    for (int f = 0; f < schema_.size(); ++f)
      if (!is_protected_[static_cast<std::size_t>(f)] && r.lo(f) < r.hi(f)) dims.push_back(f);
    const auto total = static_cast<std::int64_t>(measure(r));
    // Batches of about 2e8 multiply-adds, so that the stop flag is seen often on wide networks.
    const auto batch = static_cast<std::int64_t>(std::clamp(2e8 / std::max(1.0, point_cost_), 1.0, 256.0));
    Eigen::VectorXd cur = r.lo;
    Eigen::MatrixXd raw(schema_.size(), batch);
    std::vector<std::vector<char>> label(combos_.size(), std::vector<char>(batch, 0));
    // Which combinations make a valid person at each point (constraints decided on the whole box
    // are not checked again point by point).
    const std::vector<Truth> truth = valid_.over_box(r.lo, r.hi);
    std::vector<std::vector<char>> ok(combos_.size(), std::vector<char>(batch, 1));
    std::int64_t unfair = 0, invalid = 0;
    for (std::int64_t done = 0; done < total;) {
      if (stop_.load(std::memory_order_relaxed)) throw Interrupted{};
      const std::int64_t b = std::min(batch, total - done);
      for (std::int64_t i = 0; i < b; ++i) {
        raw.col(i) = cur;
        for (int f : dims) {  // mixed-radix increment
          if (cur(f) < r.hi(f)) {
            cur(f) += 1.0;
            break;
          }
          cur(f) = r.lo(f);
        }
      }
      const Eigen::MatrixXd block = raw.leftCols(b);
      for (std::size_t c = 0; c < combos_.size(); ++c) {
        if (!needed[c]) continue;
        const Eigen::MatrixXd rc = with_protected(block, o_.protected_features, combos_[c]);
        Eigen::RowVectorXd err;
        const Eigen::RowVectorXd z = forward_.logits(schema_.to_model_columns(rc), in_err, err);
        if (stop_.load(std::memory_order_relaxed)) throw Interrupted{};
        for (std::int64_t i = 0; i < b; ++i) {
          label[c][static_cast<std::size_t>(i)] = static_cast<char>(exact_.label(rc.col(i), z(i), err(i)));
        }
      }
      for (std::size_t c = 0; c < combos_.size(); ++c) {
        if (truth[c] != Truth::Maybe) {
          std::fill(ok[c].begin(), ok[c].end(), truth[c] == Truth::Always ? 1 : 0);
          continue;
        }
        for (std::int64_t i = 0; i < b; ++i) ok[c][static_cast<std::size_t>(i)] = valid_.valid(block.col(i), c) ? 1 : 0;
      }
      for (std::int64_t i = 0; i < b; ++i) {
        const auto u = static_cast<std::size_t>(i);
        if (std::none_of(ok.begin(), ok.end(), [u](const std::vector<char>& v) { return v[u] != 0; })) {
          ++invalid;  // no protected value makes this point a person
          continue;
        }
        int flip = -1;
        for (int p : r.open) {
          const auto pi = static_cast<std::size_t>(p / nc), pj = static_cast<std::size_t>(p % nc);
          if (label[pi][u] == 1 && label[pj][u] == 0 && ok[pi][u] != 0 && ok[pj][u] != 0) {
            flip = p;
            break;
          }
        }
        if (flip < 0) continue;
        ++unfair;
        if (o_.quantify && ev.unfair_points.size() <= kPointReports) ev.unfair_points.emplace_back(block.col(i));
        if (wants_witnesses() && ev.witnesses.size() < static_cast<std::size_t>(std::max(1, o_.max_witnesses)) &&
            !try_candidate(block.col(i), flip / nc, flip % nc, ev))
          ++ev.exact_only;
      }
      done += b;
    }
    ev.closed = true;
    ev.enumerated = total;
    ev.falsified = static_cast<long double>(unfair);
    ev.invalid += static_cast<long double>(invalid);
    ev.certified = static_cast<long double>(total - unfair - invalid);
    ev.report = unfair > 0;
    ev.all_falsified = unfair == total;
  }

  // The contribution of each feature to the linear function coef . x (x = model inputs of the
  // region's raw values with the protected features at `combo`), exact up to each term's error.
  void linear_terms(const Region& r, int combo, const Eigen::VectorXd& coef, std::vector<LinearTerm>& terms) const {
    terms.clear();
    const Eigen::VectorXd raw = raw_with(r.lo, combo);
    for (int f = 0; f < schema_.size(); ++f) {
      const Feature& feat = schema_.feature(f);
      const double lo = is_protected_[static_cast<std::size_t>(f)] ? raw(f) : r.lo(f);
      const double hi = is_protected_[static_cast<std::size_t>(f)] ? raw(f) : r.hi(f);
      if (feat.one_hot) {
        std::vector<double> table;
        for (auto v = static_cast<Eigen::Index>(lo); v <= static_cast<Eigen::Index>(hi); ++v)
          table.push_back(coef(feat.model_offset + v));
        terms.push_back(LinearTerm::values(std::move(table)));
        continue;
      }
      const double c = coef(feat.model_offset);
      if (c == 0.0) continue;
      double slope = c, offset = 0.0, e = 0.0;
      const double vmax = std::max(std::abs(lo), std::abs(hi));
      if (feat.norm.form == Normalisation::Form::ScaleOffset) {
        slope = c * feat.norm.a;
        offset = c * feat.norm.b;
        e = 2.0 * kUnit * (std::abs(slope) * vmax + std::abs(offset));
      } else if (feat.norm.form == Normalisation::Form::MeanStd) {
        slope = c / feat.norm.b;
        offset = -(c * feat.norm.a) / feat.norm.b;
        e = 4.0 * kUnit * (std::abs(slope) * vmax + std::abs(offset));
      } else if (feat.norm.form == Normalisation::Form::CenterScale) {
        slope = c * feat.norm.b;
        offset = -(c * feat.norm.a) * feat.norm.b;
        e = 4.0 * kUnit * (std::abs(slope) * vmax + std::abs(offset));
      }
      terms.push_back(feat.integral() ? LinearTerm::integers(slope, offset, lo, hi, e + kTiny)
                                      : LinearTerm::reals(slope, offset, lo, hi, e + kTiny));
    }
  }

  // Bounds of z_i - z_j over a region, each unordered pair computed once (z_j - z_i is the negation).
  class DifferenceCache {
   public:
    DifferenceCache(const Verifier& v, const std::vector<NetworkBounds>& nb) : v_(v), nb_(nb) {}
    Interval get(std::size_t i, std::size_t j) const {
      const bool swap = i > j;
      const auto key = swap ? std::make_pair(j, i) : std::make_pair(i, j);
      auto it = cache_.find(key);
      if (it == cache_.end()) {
        const auto [a, b] = key;
        it = cache_
                 .emplace(key, v_.bp_.difference(nb_[a], nb_[b], v_.combo_diff(a, b, true), v_.combo_diff(a, b, false)))
                 .first;
      }
      return swap ? Interval{-it->second.hi, -it->second.lo} : it->second;
    }

   private:
    const Verifier& v_;
    const std::vector<NetworkBounds>& nb_;
    mutable std::map<std::pair<std::size_t, std::size_t>, Interval> cache_;
  };

  // Mean and variance of a sum of independent terms (each uniform over its values).
  static void moments(const std::vector<LinearTerm>& terms, double constant, double& mean, double& var) {
    mean = constant, var = 0.0;
    for (const LinearTerm& t : terms) {
      if (t.kind == LinearTerm::Kind::Table) {
        double m = 0.0, q = 0.0;
        for (double v : t.table) m += v, q += v * v;
        m /= static_cast<double>(t.table.size());
        mean += m;
        var += std::max(0.0, q / static_cast<double>(t.table.size()) - m * m);
        continue;
      }
      const double w = std::abs(t.slope) * (t.hi - t.lo);
      mean += t.slope * (t.lo + t.hi) / 2.0 + t.offset;
      const double n = t.kind == LinearTerm::Kind::Integers ? t.hi - t.lo + 1.0 : 0.0;
      var += t.kind == LinearTerm::Kind::Integers ? w * w * (n + 1.0) / (12.0 * std::max(1.0, n - 1.0)) : w * w / 12.0;
    }
  }

  // The share of the region that counting would decide, under a normal approximation of L and U
  // (only to decide whether counting is worth its cost; never used as a result).
  static double estimate_decided(const std::vector<LinearTerm>& lt, double lc, const std::vector<LinearTerm>& ut,
                                 double uc, double high_at, double low_at, double flip_lo, double flip_hi) {
    double lm = 0.0, lv = 0.0, um = 0.0, uv = 0.0;
    moments(lt, lc, lm, lv);
    moments(ut, uc, um, uv);
    auto cdf = [](double m, double v, double x) {
      if (v <= 0.0) return x >= m ? 1.0 : 0.0;
      return 0.5 * std::erfc((m - x) / std::sqrt(2.0 * v));
    };
    const double high = 1.0 - cdf(lm, lv, high_at), low = cdf(um, uv, low_at);
    const double flip =
        flip_lo < flip_hi ? std::max(0.0, (1.0 - cdf(lm, lv, flip_lo)) + cdf(um, uv, flip_hi) - 1.0) : 0.0;
    return high + low + flip;
  }

  // Counts, without enumerating, lower bounds on the points of the region that every protected
  // value sends to the same side of the threshold (fair) and those that some protected change
  // flips (unfair), from the reference copy's linear bounds and the copies' difference bounds.
  // False when the count was skipped (hopeless, or no linear bounds).
  bool count(Region& r, const std::vector<NetworkBounds>& nb, const std::vector<bool>& needed,
             const DifferenceCache& diff, bool fine) const {
    int ref = -1;
    for (std::size_t c = 0; c < needed.size() && ref < 0; ++c)
      if (needed[c] && nb[c].lower_coef.size() > 0) ref = static_cast<int>(c);
    if (ref < 0) return false;
    const auto ru = static_cast<std::size_t>(ref);
    const double t = net_.threshold;
    // z_c - z_ref in [dl, du] for every needed c (0 for c = ref).
    double min_dl = 0.0, max_dl = 0.0, min_du = 0.0, max_du = 0.0;
    for (std::size_t c = 0; c < needed.size(); ++c) {
      if (!needed[c] || c == ru) continue;
      const Interval d = diff.get(c, ru);
      min_dl = std::min(min_dl, d.lo), max_dl = std::max(max_dl, d.lo);
      min_du = std::min(min_du, d.hi), max_du = std::max(max_du, d.hi);
    }
    const NetworkBounds& b = nb[ru];
    std::vector<LinearTerm> lterms, uterms;
    linear_terms(r, ref, b.lower_coef, lterms);
    linear_terms(r, ref, b.upper_coef, uterms);
    // A normal approximation of L and U first: counting is skipped where it would decide little.
    const double est =
        estimate_decided(lterms, b.lower_const, uterms, b.upper_const, t - min_dl, t - max_du, t - max_dl, t - min_du);
    if (est < kMinCounted) return false;
    const double el = b.lower_err, eu = b.upper_err;
    // gap: U - L <= g over the box (then L - el <= z <= L + g + eu, and U - g - el <= z).
    Eigen::VectorXd lo, hi;
    model_box(r, combos_[ru], lo, hi);
    const Eigen::VectorXd d = b.upper_coef - b.lower_coef;
    double g = b.upper_const - b.lower_const, mag = std::abs(b.upper_const) + std::abs(b.lower_const);
    for (Eigen::Index k = 0; k < d.size(); ++k) {
      g += std::max(d(k) * lo(k), d(k) * hi(k));
      mag += (std::abs(b.upper_coef(k)) + std::abs(b.lower_coef(k))) * std::max(std::abs(lo(k)), std::abs(hi(k)));
    }
    g += gamma_n(d.size() + 4) * mag * 4.0 + el + eu;
    double fair = 0.0, flip = 0.0;
    auto count_with = [&](int bins) {
      const LinearDistribution lower(b.lower_const, 0.0, lterms, bins);  // L(x); z >= L - lower_err
      // Where every neuron is stable U is L shifted by a constant: one distribution serves both
      // (queries moved by the shift, and by its rounding in the safe direction).
      const bool shifted = b.upper_coef == b.lower_coef;
      const double shift = b.upper_const - b.lower_const;
      std::optional<LinearDistribution> own;
      if (!shifted) own.emplace(b.upper_const, 0.0, uterms, bins);  // U(x); z <= U + upper_err
      auto slack = [shift](double s) { return 4.0 * kUnit * (std::abs(s) + std::abs(shift)) + kTiny; };
      auto u_lower = [&](double s) { return own ? own->cdf_lower(s) : lower.cdf_lower(s - shift - slack(s)); };
      auto u_upper = [&](double s) { return own ? own->cdf_upper(s) : lower.cdf_upper(s - shift + slack(s)); };
      // Shares of the region where z_ref > a, and where z_ref <= bb.
      auto above = [&](double a) { return std::max(1.0 - lower.cdf_upper(a + el), 1.0 - u_upper(a + g)); };
      auto at_most = [&](double bb) { return std::max(u_lower(bb - eu), lower.cdf_lower(bb - g)); };
      const double high = above(t - min_dl);   // every copy above t
      const double low = at_most(t - max_du);  // every copy at or below t
      flip = 0.0;                              // some copy above t, some at or below
      const double a = t - max_dl, bb = t - min_du;
      if (a < bb) {
        flip = std::max({above(a) + at_most(bb) - 1.0, lower.cdf_lower(bb - g) - lower.cdf_upper(a + el),
                         u_lower(bb - eu) - u_upper(a + g), 0.0});
      }
      fair = std::min(1.0, std::max(0.0, high) + std::max(0.0, low));
      flip = std::min(flip, 1.0 - fair);
      return lower.max() - lower.min();
    };
    const double range = count_with(fine ? kFineBins : kCountBins);
    // Near-linear regions are limited by the discretisation, not by the bounds: they are counted
    // finely (a hundred times the cost) once they are the most undecided, instead of being split.
    r.recount = !fine && g < 0.01 * range && 1.0 - fair - flip > 0.002;
    r.fair = static_cast<long double>(fair) * r.measure;
    r.unfair = static_cast<long double>(flip) * r.measure;
    return true;
  }

  [[nodiscard]] bool enumerable(const Region& r) const {
    if (!discrete(r)) return false;
    const long double n = measure(r);
    if (n > kMaxEnumerated) return false;
    // --check re-proves what the bounds close, so the bounds close all they can.
    return n <= 1.0L || (!o_.check && static_cast<double>(n) * point_cost_ <=
                                          std::max(point_cost_, o_.enumerate_factor * bound_cost_));
  }

  // Bounds, closure, enumeration or counting of one region; an open region leaves with its split
  // feature, its counted shares and its key.
  void evaluate(Region& r, RegionEvaluation& ev, bool fine = false) const {
    const int nc = static_cast<int>(combos_.size());
    r.measure = measure(r);
    // Derived features narrowed to what their sources reach: the points cut off are no people.
    if (valid_.constrained()) {
      const long double before = r.measure;
      if (!schema_.constraints().narrow(r.lo, r.hi, is_protected_)) {
        ev.closed = true;
        ev.invalid = before;
        return;
      }
      r.measure = measure(r);
      ev.invalid = before - r.measure;
    }
    // Constraints: a pair with a combination that no point of the box can take is no comparison;
    // a box where none can is closed (no person in it); elsewhere the valid points are counted only
    // once each combination is valid at all of the box's points or none (`settled`).
    const std::vector<Truth> truth = valid_.over_box(r.lo, r.hi);
    auto is = [&truth](int c, Truth t) { return truth[static_cast<std::size_t>(c)] == t; };
    std::erase_if(r.open, [&](int p) { return is(p / nc, Truth::Never) || is(p % nc, Truth::Never); });
    const bool nobody = std::all_of(truth.begin(), truth.end(), [](Truth t) { return t == Truth::Never; });
    const bool everyone = std::any_of(truth.begin(), truth.end(), [](Truth t) { return t == Truth::Always; });
    const bool settled = std::none_of(truth.begin(), truth.end(), [](Truth t) { return t == Truth::Maybe; });
    if (nobody) {
      ev.closed = true;
      ev.invalid += r.measure;
      return;
    }
    std::vector<bool> needed(combos_.size(), false);
    for (int p : r.open) needed[static_cast<std::size_t>(p / nc)] = needed[static_cast<std::size_t>(p % nc)] = true;
    if (enumerable(r)) {
      enumerate(r, needed, ev);
      return;
    }
    // Where the constraints are undecided the region is split on them first: the regions the
    // network is bounded on are then whole groups of people, which counting can measure.
    if (!settled) {
      if (const int f = constraint_split(r); f >= 0) {
        r.split = f;
        r.key = o_.quantify ? static_cast<double>(r.measure)
                            : static_cast<double>(sequence_.fetch_add(1, std::memory_order_relaxed));
        return;
      }
    }
    std::vector<NetworkBounds> nb(combos_.size());
    for (std::size_t c = 0; c < combos_.size(); ++c) {
      if (!needed[c]) continue;
      Eigen::VectorXd lo, hi;
      model_box(r, combos_[c], lo, hi);
      nb[c] = bp_.bounds(lo, hi);
      if (nb[c].interrupted) throw Interrupted{};
    }
    const DifferenceCache diff(*this, nb);
    const double t = net_.threshold;
    std::vector<int> open;
    int everywhere = -1;             // a pair that flips at every point of the region
    bool flips_where_valid = false;  // ... at every point where both its people exist
    for (int p : r.open) {
      const auto i = static_cast<std::size_t>(p / nc), j = static_cast<std::size_t>(p % nc);
      const Interval zi = nb[i].output(), zj = nb[j].output();
      if (zi.hi <= t || zj.lo > t) continue;
      if (zi.lo > t && zj.hi <= t) {
        if (is(p / nc, Truth::Always) && is(p % nc, Truth::Always)) {
          everywhere = p;
          break;
        }
        open.push_back(p);  // flips wherever both people exist: decided once that is known
        flips_where_valid = true;
        continue;
      }
      const Interval d = diff.get(i, j);  // z_i - z_j
      if (d.hi <= 0.0 || add_down(zi.lo, -d.hi) > t || add_up(zj.hi, d.hi) <= t) continue;
      open.push_back(p);
    }
    const Eigen::VectorXd center = ((r.lo + r.hi) / 2.0).array().floor().matrix();
    if (everywhere >= 0) {
      ev.closed = true;
      ev.falsified = r.measure;
      ev.report = ev.all_falsified = true;
      // Every point flips: the first few (in enumeration order) serve as witnesses.
      Eigen::VectorXd point = r.lo;
      for (int tries = 0; wants_witnesses() && tries < 4 * std::max(1, o_.max_witnesses) &&
                          static_cast<int>(ev.witnesses.size()) < std::max(1, o_.max_witnesses);
           ++tries) {
        try_candidate(tries == 0 ? center : point, everywhere / nc, everywhere % nc, ev);
        if (tries == 0) continue;
        bool wrapped = true;
        for (int f = 0; f < schema_.size() && wrapped; ++f) {
          if (is_protected_[static_cast<std::size_t>(f)] || !schema_.feature(f).integral() || r.lo(f) == r.hi(f))
            continue;
          wrapped = point(f) >= r.hi(f);
          point(f) = wrapped ? r.lo(f) : point(f) + 1.0;
        }
        if (wrapped) break;
      }
      return;
    }
    if (o_.check) ev.checked = recheck(r, open);
    if (open.empty() && (everyone || !o_.quantify)) {
      ev.closed = true;
      ev.certified = r.measure;
      ev.inexact = !everyone;  // a verdict needs no count: how many points are valid stays unknown
      return;
    }
    if (open.empty()) {  // fair wherever valid; split where the constraints change to count them
      r.open.clear();
      r.split = constraint_split(r);
      r.key = static_cast<double>(r.measure);
      return;
    }
    r.open = open;
    std::fill(needed.begin(), needed.end(), false);
    for (int p : r.open) needed[static_cast<std::size_t>(p / nc)] = needed[static_cast<std::size_t>(p % nc)] = true;
    if (wants_witnesses()) {
      for (int p : open) {
        if (try_candidate(center, p / nc, p % nc, ev)) {
          r.known.push_back(center);
          break;
        }
        // The corner that pushes z_i up and z_j down along the symbolic bounds' coefficients.
        const auto i = static_cast<std::size_t>(p / nc), j = static_cast<std::size_t>(p % nc);
        if (nb[i].lower_coef.size() == 0) continue;
        const Eigen::VectorXd g = nb[i].lower_coef - nb[j].upper_coef;
        Eigen::VectorXd corner = center;
        for (int f = 0; f < schema_.size(); ++f) {
          const Feature& feat = schema_.feature(f);
          if (is_protected_[static_cast<std::size_t>(f)] || feat.one_hot) continue;
          const double up = feat.norm.to_model(1.0) - feat.norm.to_model(0.0);
          corner(f) = g(feat.model_offset) * up > 0 ? r.hi(f) : g(feat.model_offset) * up < 0 ? r.lo(f) : center(f);
        }
        if (try_candidate(corner, p / nc, p % nc, ev)) {
          r.known.push_back(corner);
          break;
        }
      }
    }
    // Counts are over the box's points: sound only where every point is a person for the same
    // combinations.
    if (o_.quantify && settled && everyone && count(r, nb, needed, diff, fine)) ++(fine ? ev.fine_counted : ev.counted);
    if (discrete(r)) r.unfair = std::max(r.unfair, static_cast<long double>(r.known.size()));
    r.split = flips_where_valid ? constraint_split(r) : split_feature(r, nb, needed);
    // Hunting a witness: last in, first out (depth first, as one stack), which finds the rare
    // witnesses of near-fair models soonest; quantifying: the largest undecided measure first.
    r.key = o_.quantify ? static_cast<double>(r.measure - r.fair - r.unfair)
                        : static_cast<double>(sequence_.fetch_add(1, std::memory_order_relaxed));
  }

  // The measure of the points that can be people, as far as known: all but those found not to be.
  [[nodiscard]] long double valid_points() const { return domain_points_ - invalid_; }

  [[nodiscard]] int constraint_split(const Region& r) const { return valid_.widest_constrained(r.lo, r.hi); }

  // The two halves of r along r.split (false when a real feature cannot be halved any more).
  bool split(const Region& r, int f, Region& a, Region& b) const {
    if (f < 0) return false;
    a = Region{r.lo, r.hi, r.open, {}, 0, -1};
    b = Region{r.lo, r.hi, r.open, {}, 0, -1};
    a.depth = b.depth = r.depth + 1;
    const Feature& feat = schema_.feature(f);
    if (feat.integral()) {
      const double mid = std::floor((r.lo(f) + r.hi(f)) / 2.0);
      a.hi(f) = mid;
      b.lo(f) = mid + 1.0;
    } else {
      const double mid = r.lo(f) / 2.0 + r.hi(f) / 2.0;
      if (!(mid > r.lo(f) && mid < r.hi(f))) return false;
      a.hi(f) = mid;
      b.lo(f) = mid;
    }
    for (const Eigen::VectorXd& k : r.known) (k(f) <= a.hi(f) ? a : b).known.push_back(k);
    return true;
  }

  // --check: every unordered pair that this region closes (both directions excluded, one of them
  // here) is re-proved by Z3 on the whole region, independently of the bounds.
  std::int64_t recheck(const Region& r, const std::vector<int>& open) const {
    const int nc = static_cast<int>(combos_.size());
    auto is_in = [](const std::vector<int>& v, int p) { return std::find(v.begin(), v.end(), p) != v.end(); };
    std::int64_t n = 0;
    for (int i = 0; i < nc; ++i) {
      for (int j = i + 1; j < nc; ++j) {
        const int ij = i * nc + j, ji = j * nc + i;
        if (is_in(open, ij) || is_in(open, ji) || (!is_in(r.open, ij) && !is_in(r.open, ji))) continue;
        const CheckResult c =
            check_region(model_, schema_, o_.protected_features, r.lo, r.hi, combos_[static_cast<std::size_t>(i)],
                         combos_[static_cast<std::size_t>(j)], 60.0);
        if (c != CheckResult::Unsat)
          throw InternalError(fmt::format("--check: Z3 answered {} on a region the bounds closed (from {})",
                                          to_string(c), schema_.display_row(raw_with(r.lo, i))));
        ++n;
      }
    }
    return n;
  }

  // Bounds of x(combo i) - x(combo j) on the model inputs (zero outside the protected ones, and
  // exactly zero where both are the same exact value).
  [[nodiscard]] Eigen::VectorXd combo_diff(std::size_t i, std::size_t j, bool lower) const {
    Eigen::VectorXd d = Eigen::VectorXd::Zero(schema_.model_width());
    for (const Eigen::Index k : protected_inputs_) {  // shared inputs differ by exactly 0
      const double ilo = combo_lo_[i](k), ihi = combo_hi_[i](k), jlo = combo_lo_[j](k), jhi = combo_hi_[j](k);
      if (ilo == jlo && ihi == jhi && ilo == ihi) continue;
      d(k) = lower ? add_down(ilo, -jhi) : add_up(ihi, -jlo);
    }
    return d;
  }

  // --- the work queues: one max-heap per worker, idle workers steal the largest key ---

  void push(unsigned id, Region r) {
    Queue& q = *queues_[id];
    std::lock_guard lock(q.mutex);
    q.heap.push_back(std::move(r));
    std::push_heap(q.heap.begin(), q.heap.end(), [](const Region& a, const Region& b) { return a.key < b.key; });
  }

  bool take_from(Queue& q, Region& r) {
    std::lock_guard lock(q.mutex);
    if (q.heap.empty()) return false;
    std::pop_heap(q.heap.begin(), q.heap.end(), [](const Region& a, const Region& b) { return a.key < b.key; });
    r = std::move(q.heap.back());
    q.heap.pop_back();
    return true;
  }

  bool pop(unsigned id, Region& r) {
    while (!stop_.load()) {
      if (take_from(*queues_[id], r)) return true;
      // Steal from the queue whose best region is largest.
      std::size_t victim = queues_.size();
      double best = -INFINITY;
      for (std::size_t v = 0; v < queues_.size(); ++v) {
        std::lock_guard lock(queues_[v]->mutex);
        if (!queues_[v]->heap.empty() && queues_[v]->heap.front().key > best)
          best = queues_[v]->heap.front().key, victim = v;
      }
      if (victim < queues_.size() && take_from(*queues_[victim], r)) return true;
      if (pending_.load() == 0) return false;
      std::unique_lock lock(idle_mutex_);
      idle_cv_.wait_for(lock, std::chrono::milliseconds(2));
    }
    return false;
  }

  // Applies what a worker found: the popped parent (its counted shares leave the open totals) is
  // replaced by its evaluated children.
  void commit(unsigned id, const Region* parent, std::vector<Region> stuck, std::vector<Region> children,
              std::vector<RegionEvaluation> evs) {
    std::vector<Region> to_push;
    {
      std::lock_guard lock(mutex_);
      if (parent != nullptr) {
        open_fair_ -= parent->fair;
        open_unfair_ -= parent->unfair;
      }
      for (Region& s : stuck) {
        open_fair_ += s.fair;
        open_unfair_ += s.unfair;
        stuck_.push_back(std::move(s));
      }
      for (std::size_t k = 0; k < children.size(); ++k) {
        Region& c = children[k];
        RegionEvaluation& ev = evs[k];
        ++regions_;
        rejected_ += ev.rejected;
        checked_ += ev.checked;
        enumerated_ += ev.enumerated;
        counted_ += ev.counted;
        fine_counted_ += ev.fine_counted;
        exact_only_ += ev.exact_only;
        invalid_ += ev.invalid;
        for (auto& w : ev.witnesses) {
          if (static_cast<int>(witnesses_.size()) >= std::max(1, o_.max_witnesses)) break;
          const bool seen = std::any_of(witnesses_.begin(), witnesses_.end(), [&w](const WitnessPair& o) {
            return o.raw == w.raw && o.raw_prime == w.raw_prime;
          });
          if (!seen) witnesses_.push_back(std::move(w));
        }
        witnesses_found_ = static_cast<int>(witnesses_.size());
        if (ev.closed) {
          ++leaves_;
          closed_certified_ += ev.certified;
          closed_falsified_ += ev.falsified;
          inexact_ = inexact_ || ev.inexact;
          if (ev.report && o_.quantify) {
            if (!ev.all_falsified && !ev.unfair_points.empty() && ev.unfair_points.size() <= kPointReports) {
              // Single points, merged into boxes at the end: crisp rules instead of a share of a box.
              for (const Eigen::VectorXd& p : ev.unfair_points) answer_->add_falsified(p, p, 1.0L, 1.0L, true);
            } else {
              answer_->add_falsified(c.lo, c.hi, c.measure, ev.falsified, ev.all_falsified);
            }
          }
          continue;
        }
        open_fair_ += c.fair;
        open_unfair_ += c.unfair;
        to_push.push_back(std::move(c));
      }
      if (!o_.quantify && static_cast<int>(witnesses_.size()) >= std::max(1, o_.max_witnesses)) stop_ = true;
      if (env_.expired() || (o_.cancel != nullptr && o_.cancel->load())) {
        interrupted_ = true;
        stop_ = true;
      }
    }
    pending_ += static_cast<long>(to_push.size());
    for (Region& c : to_push) push(id, std::move(c));
    if (parent != nullptr) --pending_;
    idle_cv_.notify_all();
    evict(id);
  }

  // Keeps the queues within max_open_regions: the regions with the least undecided measure leave
  // the queue for good (they stay undecided, with what counting showed of them).
  void evict(unsigned id) {
    const std::size_t cap = std::max<std::size_t>(64, o_.max_open_regions / queues_.size());
    Queue& q = *queues_[id];
    std::vector<Region> out;
    {
      std::lock_guard lock(q.mutex);
      if (q.heap.size() <= cap) return;
      auto by_key = [](const Region& a, const Region& b) { return a.key > b.key; };
      std::nth_element(q.heap.begin(), q.heap.begin() + static_cast<std::ptrdiff_t>(cap / 2), q.heap.end(), by_key);
      out.assign(std::make_move_iterator(q.heap.begin() + static_cast<std::ptrdiff_t>(cap / 2)),
                 std::make_move_iterator(q.heap.end()));
      q.heap.resize(cap / 2);
      std::make_heap(q.heap.begin(), q.heap.end(), [](const Region& a, const Region& b) { return a.key < b.key; });
    }
    pending_ -= static_cast<long>(out.size());
    std::lock_guard lock(mutex_);
    evicted_ += static_cast<std::int64_t>(out.size());
    for (Region& r : out) stuck_.push_back(std::move(r));
  }

  void work(unsigned id) {
    auto last_progress = std::chrono::steady_clock::now();
    Region r;
    while (pop(id, r)) {
      std::vector<Region> children, stuck;
      std::vector<RegionEvaluation> evs;
      try {
        Region a, b;
        if (r.recount) {  // the same region, counted finely
          Region again = r;
          again.fair = again.unfair = 0.0L;
          RegionEvaluation ev;
          evaluate(again, ev, true);
          children.push_back(std::move(again));
          evs.push_back(std::move(ev));
        } else if (split(r, r.split, a, b)) {
          for (Region* c : {&a, &b}) {
            RegionEvaluation ev;
            evaluate(*c, ev);
            children.push_back(std::move(*c));
            evs.push_back(std::move(ev));
          }
        }
        if (children.empty()) {
          ++slivers_;
          stuck.push_back(r);
        }
      } catch (const Interrupted&) {  // the region goes back undecided, as it was
        children.clear();
        evs.clear();
        stuck.push_back(r);
      } catch (...) {
        std::lock_guard lock(mutex_);
        if (!error_) error_ = std::current_exception();
        stop_ = true;
        --pending_;
        idle_cv_.notify_all();
        return;
      }
      commit(id, &r, std::move(stuck), std::move(children), std::move(evs));
      if (id == 0 && o_.progress) {
        const auto now = std::chrono::steady_clock::now();
        if (now - last_progress > std::chrono::milliseconds(250)) {
          last_progress = now;
          CompleteProgress p;
          {
            std::lock_guard lock(mutex_);
            p = {static_cast<double>((closed_certified_ + open_fair_) / valid_points()),
                 static_cast<double>((closed_falsified_ + open_unfair_) / valid_points()), leaves_,
                 env_.elapsed_seconds()};
          }
          o_.progress(p);
        }
      }
    }
  }

  FairnessResult result() {
    FairnessResult r;
    r.engine = "complete";
    // Whatever is still open (queued, evicted, split to the last bit) is undecided.
    std::vector<Region> left = std::move(stuck_);
    for (auto& q : queues_)
      for (Region& g : q->heap) left.push_back(std::move(g));
    const bool finished = left.empty() && !error_;
    if (o_.quantify) {
      for (const Region& g : left) answer_->add_marginal(g.lo, g.hi, g.unfair);
      r.marginals = answer_->marginals(closed_falsified_ + open_unfair_);
    }
    if (o_.quantify) {
      // Only the open regions that can make the report (millions may be open at a time limit).
      const std::size_t keep = std::min(left.size(), 4 * static_cast<std::size_t>(std::max(1, o_.max_regions)));
      auto known = [](const Region& g) { return g.measure - g.fair; };  // falsified + undecided
      std::nth_element(left.begin(), left.begin() + static_cast<std::ptrdiff_t>(keep), left.end(),
                       [&known](const Region& a, const Region& b) { return known(a) > known(b); });
      for (std::size_t i = 0; i < keep; ++i)
        answer_->add_report(left[i].lo, left[i].hi, left[i].measure, left[i].unfair,
                            left[i].measure - left[i].fair - left[i].unfair, false);
    }
    r.stats.regions = regions_;
    r.stats.leaves = leaves_;
    r.stats.rejected = rejected_;
    r.stats.checked = checked_;
    r.stats.tests = regions_;
    env_.stats.set("complete.regions", static_cast<double>(regions_));
    env_.stats.set("complete.leaves", static_cast<double>(leaves_));
    env_.stats.set("complete.enumerated_points", static_cast<double>(enumerated_));
    env_.stats.set("complete.counted_regions", static_cast<double>(counted_));
    env_.stats.set("complete.fine_counts", static_cast<double>(fine_counted_));
    env_.stats.set("complete.exact_points", static_cast<double>(exact_.exact_points()));
    env_.stats.set("complete.open_regions", static_cast<double>(left.size()));
    {
      long double counted = 0.0L, uncounted = 0.0L;
      for (const Region& g : left) (g.fair + g.unfair > 0.0L ? counted : uncounted) += g.measure - g.fair - g.unfair;
      env_.stats.set("complete.undecided_in_counted_regions", static_cast<double>(counted / domain_points_));
      env_.stats.set("complete.undecided_in_uncounted_regions", static_cast<double>(uncounted / domain_points_));
    }
    env_.stats.set("complete.evicted_regions", static_cast<double>(evicted_));
    r.share.measured = true;
    // With constraints the shares are of the valid points: those of the closed regions, and all of
    // the open ones' (at most that many), so that every share stays a sound bound until the end.
    const long double valid = valid_points();
    r.share.points = real_domain_ ? 0.0L : valid;
    const long double cert = closed_certified_ + open_fair_, fals = closed_falsified_ + open_unfair_;
    if (finished) {  // every point closed exactly: the shares are complementary
      r.share.falsified = valid > 0.0L ? static_cast<double>(closed_falsified_ / valid) : 0.0;
      r.share.certified = 1.0 - r.share.falsified;
      r.share.undecided = 0.0;
      r.share.exact = !real_domain_ && !inexact_;
      r.share.falsified_points = closed_falsified_;
    } else {
      r.share.certified = std::clamp(static_cast<double>(cert / valid), 0.0, 1.0);
      r.share.falsified = std::clamp(static_cast<double>(fals / valid), 0.0, 1.0 - r.share.certified);
      r.share.undecided = std::max(0.0, 1.0 - r.share.certified - r.share.falsified);
    }
    if (o_.quantify) r.regions = answer_->regions(valid);
    // Why the run stopped short; also kept with a witness verdict, whose shares it qualifies.
    std::string unfinished;
    if (!finished) {
      if (slivers_ > 0 && !interrupted_)
        unfinished =
            fmt::format("{} regions of real features were split to the last bit and are still open", slivers_.load());
      else if (evicted_ > 0 && !interrupted_)
        unfinished = fmt::format("{} open regions exceeded the queue's capacity and stay undecided", evicted_);
      else
        unfinished = fmt::format("{}: {:.4g}% of the domain certified, {:.3g}% falsified, {} regions open",
                                 env_.stop_reason(), 100.0 * r.share.certified, 100.0 * r.share.falsified, left.size());
    }
    r.witnesses = std::move(witnesses_);
    if (!r.witnesses.empty()) {
      r.verdict = Verdict::Witness;
      r.exhaustive = finished && o_.quantify;
      if (o_.quantify) r.reason = unfinished;
    } else if (finished && closed_falsified_ == 0.0L) {
      r.verdict = Verdict::Verified;
      r.exhaustive = true;
      r.share = DomainShare{true, 1.0, 0.0, 0.0, r.share.points, 0.0L, !real_domain_ && !inexact_};
    } else if (finished) {
      r.reason = fmt::format("{} points are witnesses in exact arithmetic but not when replayed in double",
                             static_cast<double>(closed_falsified_));
    } else {
      r.reason = unfinished;
    }
    r.stats.seconds = env_.elapsed_seconds();
    return r;
  }

  const Model& model_;
  const Schema& schema_;
  const CompleteSearchOptions& o_;
  Env& env_;
  ReluNetwork net_;
  BoundPropagator bp_;
  BoundedForward forward_;
  ExactNetwork exact_;
  std::vector<Eigen::VectorXd> combos_;
  std::vector<bool> is_protected_;
  ValidCombinations valid_;  // the schema's constraints per protected combination
  std::vector<Eigen::VectorXd> combo_lo_, combo_hi_;
  std::vector<Eigen::Index> protected_inputs_;  // model inputs of the protected features
  std::vector<Eigen::MatrixXd> abs_weights_;
  long double domain_points_ = 1.0L;  // the measure of the whole domain
  double point_cost_ = 0.0, bound_cost_ = 0.0;
  unsigned threads_ = 1;
  SplitRule split_ = SplitRule::Score;  // o_.split with Auto resolved
  bool real_domain_ = false;            // some non-protected feature is real
  std::atomic<bool> stop_{false};
  std::atomic<bool> interrupted_{false};  // stopped by the time limit or the cancel flag
  std::atomic<int> witnesses_found_{0};
  std::atomic<std::int64_t> slivers_{0};           // real-feature regions split to the last bit, still open
  mutable std::atomic<std::int64_t> sequence_{0};  // order of creation (witness hunting: LIFO)
  std::atomic<long> pending_{0};                   // regions queued or being split

  std::vector<std::unique_ptr<Queue>> queues_;
  std::mutex idle_mutex_;
  std::condition_variable idle_cv_;

  std::mutex mutex_;                                               // guards everything below
  long double closed_certified_ = 0.0L, closed_falsified_ = 0.0L;  // measures of closed regions
  long double open_fair_ = 0.0L, open_unfair_ = 0.0L;              // counted in open regions
  long double invalid_ = 0.0L;  // points found to be no person for any protected value
  bool inexact_ = false;        // some region closed without counting its valid points
  std::exception_ptr error_;
  std::int64_t regions_ = 0, leaves_ = 0, rejected_ = 0, checked_ = 0, enumerated_ = 0, counted_ = 0, fine_counted_ = 0;
  std::int64_t exact_only_ = 0, evicted_ = 0;
  std::vector<Region> stuck_;  // open for good
  std::vector<WitnessPair> witnesses_;
  std::optional<QuantifyAnswer> answer_;  // quantify: regions and marginals
};

}  // namespace

FairnessResult complete_search(const Model& model, const Schema& schema, const CompleteSearchOptions& options,
                               Env& env) {
  if (options.protected_features.empty()) throw InputError("no protected feature given");
  if (is_tree_model(model)) return tree_search(model, schema, options, env);
  std::string why;
  std::optional<ReluNetwork> net = relu_network_of(model, &why);
  if (!net)
    throw UnsupportedError(
        fmt::format("the complete engine handles Dense/ReLU networks with one logit and tree ensembles: {}", why));
  if (net->input_width != schema.model_width())
    throw InputError(schema.source(), "",
                     fmt::format("the schema describes {} model inputs, the model reads {}", schema.model_width(),
                                 net->input_width));
  Verifier v(model, schema, options, env, std::move(*net));
  return v.run();
}

FairnessResult auto_search(const Model& model, const Schema& schema, const CompleteSearchOptions& options, Env& env) {
  SearchStats stats;
  FalsifyOptions f;
  f.protected_features = options.protected_features;
  f.seconds = options.falsify_seconds;
  f.max_witnesses = options.max_witnesses;
  auto found_by_falsification = [&](std::vector<WitnessPair> found) {
    FairnessResult r;
    r.engine = "auto";
    r.phase = "falsification";
    r.verdict = Verdict::Witness;
    r.witnesses = std::move(found);
    r.stats = stats;
    r.stats.seconds = env.elapsed_seconds();
    return r;
  };
  (void)protected_combinations(schema, options.protected_features);  // input errors here, not in a thread
  std::string why;
  if (!relu_network_of(model, &why) && !tree_engine_reads(model, schema, &why)) {
    if (!options.quantify) {
      std::vector<WitnessPair> found = falsify(model, schema, f, env, stats);
      if (!found.empty()) return found_by_falsification(std::move(found));
    }
    ConcolicSearchOptions d;
    d.protected_features = options.protected_features;
    d.max_witnesses = options.max_witnesses;
    d.query_time_limit = 1.0;
    FairnessResult r;
    try {
      r = dual_search(model, schema, d, env);
    } catch (const UnsupportedError& e) {
      // No exact engine reads this model (tree ensembles, lookups): what falsification found is the answer.
      r.verdict = Verdict::Inconclusive;
      r.reason = fmt::format(
          "falsification found no witness in {} tests, and no exact engine reads this model ({}); "
          "witness test searches longer",
          stats.tests, e.what());
      r.stats = stats;
      r.stats.seconds = env.elapsed_seconds();
      r.engine = "auto";
      r.phase = "falsification";
      return r;
    }
    r.engine = "auto(dual)";
    r.phase = "dual";
    return r;
  }
  // Falsification runs beside the branch and bound from the start (a fair model is often closed at
  // the root in milliseconds, which a falsification phase first would delay); the first answer wins.
  std::atomic<bool> complete_done{false}, falsify_found{false};
  const double limit = env.options.get_real("time-limit");
  f.seconds = limit > 0 ? options.falsify_share * limit : 60.0;
  f.cancel = &complete_done;
  SearchStats side_stats;
  std::vector<WitnessPair> side_found;
  std::exception_ptr side_error;
  std::thread side;
  if (!options.quantify) {
    side = std::thread([&] {
      try {
        side_found = falsify(model, schema, f, env, side_stats);
        if (!side_found.empty()) falsify_found = true;
      } catch (...) {
        side_error = std::current_exception();
      }
    });
  }
  CompleteSearchOptions co = options;
  co.cancel = &falsify_found;
  FairnessResult r;
  try {
    r = complete_search(model, schema, co, env);
  } catch (...) {
    complete_done = true;
    if (side.joinable()) side.join();
    throw;
  }
  complete_done = true;
  if (side.joinable()) side.join();
  if (side_error) std::rethrow_exception(side_error);
  stats.tests += side_stats.tests;
  stats.rejected += side_stats.rejected;
  if (r.verdict != Verdict::Witness && !side_found.empty()) {
    FairnessResult w = found_by_falsification(std::move(side_found));
    w.stats.regions = r.stats.regions;
    w.stats.leaves = r.stats.leaves;
    return w;  // the complete engine's shares were cut short: not reported
  }
  r.engine = "auto";
  r.phase = "complete";
  r.stats.tests += stats.tests;
  r.stats.rejected += stats.rejected;
  return r;
}

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
