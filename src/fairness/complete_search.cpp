#include "fairness/complete_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "bounds/bound_propagator.h"
#include "bounds/relu_network.h"
#include "core/error.h"
#include "fairness/concolic_search.h"
#include "fairness/falsify.h"
#include "fairness/smt_search.h"
#include "solver/rational.h"

namespace witness {

SplitRule parse_split_rule(const std::string& name) {
  if (name == "score") return SplitRule::Score;
  if (name == "widest") return SplitRule::Widest;
  throw InputError(fmt::format("--split: unknown rule '{}' (known: score, widest)", name));
}

namespace {

constexpr double kUnit = 0x1p-53;

struct Region {
  Eigen::VectorXd lo, hi;  // raw bounds per schema feature (protected entries unused)
  std::vector<int> open;   // ordered pairs i * C + j (z_i > t >= z_j) not yet excluded
};

// What processing one region found, applied to the shared state under the lock.
struct Outcome {
  std::vector<Region> children;
  long double certified = 0.0L, falsified = 0.0L, undecided = 0.0L;
  std::vector<WitnessPair> witnesses;
  std::int64_t rejected = 0, checked = 0;
  std::int64_t witness_points = 0;  // non-protected points of new witnesses (each 1 / domain points)
  bool leaf = false;
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
        combos_(protected_combinations(schema, o.protected_features)),
        is_protected_(static_cast<std::size_t>(schema.size()), false) {
    for (int f : o.protected_features) is_protected_[static_cast<std::size_t>(f)] = true;
    for (int f = 0; f < schema.size(); ++f) {
      const Feature& feat = schema.feature(f);
      if (!is_protected_[static_cast<std::size_t>(f)] && feat.integral())
        domain_points_ *= static_cast<long double>(feat.max - feat.min + 1.0);
    }
    for (int f : o.protected_features)
      for (int k = 0; k < schema.feature(f).model_width; ++k)
        protected_inputs_.push_back(schema.feature(f).model_offset + k);
    for (std::size_t c = 0; c < combos_.size(); ++c) {
      Eigen::VectorXd lo, hi;
      Region whole{Eigen::VectorXd::Zero(schema.size()), Eigen::VectorXd::Zero(schema.size()), {}};
      model_box(whole, combos_[c], lo, hi);
      combo_lo_.push_back(lo);
      combo_hi_.push_back(hi);
    }
  }

  FairnessResult run() {
    Region root{Eigen::VectorXd(schema_.size()), Eigen::VectorXd(schema_.size()), {}};
    for (int f = 0; f < schema_.size(); ++f) {
      root.lo(f) = schema_.feature(f).min;
      root.hi(f) = schema_.feature(f).max;
    }
    const int nc = static_cast<int>(combos_.size());
    for (int i = 0; i < nc; ++i)
      for (int j = 0; j < nc; ++j)
        if (i != j) root.open.push_back(i * nc + j);
    stack_.push_back(std::move(root));
    unsigned threads = env_.threads();
    if (threads == 0) threads = std::max(1U, std::thread::hardware_concurrency());
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back([this, t] { work(t); });
    work(0);
    for (auto& t : pool) t.join();
    if (error_) std::rethrow_exception(error_);
    return result();
  }

 private:
  // Model-input bounds of the raw box r with the protected features set to `combo`. Inputs that a
  // normalisation computes are widened to contain their exact rational value.
  void model_box(const Region& r, const Eigen::VectorXd& combo, Eigen::VectorXd& lo, Eigen::VectorXd& hi) const {
    lo = Eigen::VectorXd::Zero(schema_.model_width());
    hi = lo;
    std::size_t p = 0;
    for (int f = 0; f < schema_.size(); ++f) {
      const Feature& feat = schema_.feature(f);
      double rlo = r.lo(f), rhi = r.hi(f);
      if (is_protected_[static_cast<std::size_t>(f)]) {
        const auto k = static_cast<Eigen::Index>(
            std::find(o_.protected_features.begin(), o_.protected_features.end(), f) - o_.protected_features.begin());
        rlo = rhi = combo(k);
        ++p;
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
        const double scale = std::abs(feat.norm.a) + std::abs(feat.norm.b) +
                             (feat.norm.form == Normalisation::Form::MeanStd && feat.norm.b != 0.0
                                  ? (std::abs(rlo) + std::abs(rhi) + std::abs(feat.norm.a)) / std::abs(feat.norm.b)
                                  : std::abs(rlo) + std::abs(rhi));
        const double err = 16.0 * kUnit * (std::abs(a) + std::abs(b) + scale) + 0x1p-1000;
        a = std::nextafter(a - err, -INFINITY);
        b = std::nextafter(b + err, INFINITY);
      }
      lo(feat.model_offset) = a;
      hi(feat.model_offset) = b;
    }
  }

  [[nodiscard]] long double volume(const Region& r) const {
    long double v = 1.0L;
    for (int f = 0; f < schema_.size(); ++f) {
      if (is_protected_[static_cast<std::size_t>(f)]) continue;
      const Feature& feat = schema_.feature(f);
      if (feat.integral()) {
        v *= static_cast<long double>(r.hi(f) - r.lo(f) + 1.0) / static_cast<long double>(feat.max - feat.min + 1.0);
      } else if (feat.max > feat.min) {
        v *= static_cast<long double>(r.hi(f) - r.lo(f)) / static_cast<long double>(feat.max - feat.min);
      }
    }
    return v;
  }

  [[nodiscard]] Eigen::VectorXd raw_with(const Eigen::VectorXd& raw, int combo) const {
    return with_protected(raw, o_.protected_features, combos_[static_cast<std::size_t>(combo)]).col(0);
  }

  // A replayed witness if raw (non-protected part) with combos i and j is one in double.
  void try_candidate(const Eigen::VectorXd& raw, int i, int j, Outcome& out) const {
    const Eigen::VectorXd xi = schema_.to_model(raw_with(raw, i)), xj = schema_.to_model(raw_with(raw, j));
    const double t = net_.threshold;
    if (!(net_.logit(xi) > t && net_.logit(xj) <= t)) return;
    if (auto w = replay_witness(model_, schema_, o_.protected_features, xi, xj)) {
      out.witnesses.push_back(*w);
    } else {
      ++out.rejected;
    }
  }

  // Exact rational logit at a raw point (model inputs computed exactly from the raw values).
  [[nodiscard]] Rational exact_logit(const Eigen::VectorXd& raw) const {
    std::call_once(exact_once_, [this] {
      for (const auto& layer : net_.layers) {
        std::vector<std::vector<Rational>> w(static_cast<std::size_t>(layer.weights.rows()));
        std::vector<Rational> b;
        for (Eigen::Index r = 0; r < layer.weights.rows(); ++r) {
          for (Eigen::Index c = 0; c < layer.weights.cols(); ++c)
            w[static_cast<std::size_t>(r)].push_back(Rational::from_double(layer.weights(r, c)));
          b.push_back(Rational::from_double(layer.bias(r)));
        }
        exact_w_.push_back(std::move(w));
        exact_b_.push_back(std::move(b));
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
      }
      a[static_cast<std::size_t>(feat.model_offset)] = x;
    }
    for (std::size_t k = 0; k < exact_w_.size(); ++k) {
      std::vector<Rational> h = exact_b_[k];
      for (std::size_t r = 0; r < h.size(); ++r)
        for (std::size_t c = 0; c < a.size(); ++c)
          if (exact_w_[k][r][c].sign() != 0 && a[c].sign() != 0) h[r] += exact_w_[k][r][c] * a[c];
      if (k + 1 < exact_w_.size())
        for (auto& v : h)
          if (v.sign() < 0) v = Rational(0);
      a = std::move(h);
    }
    return a[0];
  }

  [[nodiscard]] int split_feature(const Region& r, const std::vector<NetworkBounds>& nb,
                                  const std::vector<bool>& needed) const {
    int best = -1;
    double best_score = -1.0;
    for (int f = 0; f < schema_.size(); ++f) {
      if (is_protected_[static_cast<std::size_t>(f)] || r.lo(f) >= r.hi(f)) continue;
      const Feature& feat = schema_.feature(f);
      double score = r.hi(f) - r.lo(f);
      if (o_.split == SplitRule::Score) {
        score = 0.0;
        for (std::size_t c = 0; c < nb.size(); ++c) {
          if (!needed[c] || nb[c].upper_coef.size() == 0) continue;
          for (int k = 0; k < feat.model_width; ++k) {
            const Eigen::Index in = feat.model_offset + k;
            const double width =
                feat.one_hot ? 1.0 : std::abs(feat.norm.to_model(r.hi(f)) - feat.norm.to_model(r.lo(f)));
            score += (std::abs(nb[c].upper_coef(in)) + std::abs(nb[c].lower_coef(in))) * width;
          }
        }
      }
      if (score > best_score) best_score = score, best = f;
    }
    if (o_.split == SplitRule::Score && best_score <= 0.0) {  // no gradient: the widest feature
      for (int f = 0; f < schema_.size(); ++f)
        if (!is_protected_[static_cast<std::size_t>(f)] && r.lo(f) < r.hi(f) && r.hi(f) - r.lo(f) > best_score)
          best_score = r.hi(f) - r.lo(f), best = f;
    }
    return best;
  }

  Outcome process(const Region& r) const {
    Outcome out;
    const int nc = static_cast<int>(combos_.size());
    std::vector<bool> needed(combos_.size(), false);
    for (int p : r.open) needed[static_cast<std::size_t>(p / nc)] = needed[static_cast<std::size_t>(p % nc)] = true;
    std::vector<NetworkBounds> nb(combos_.size());
    for (std::size_t c = 0; c < combos_.size(); ++c) {
      if (!needed[c]) continue;
      Eigen::VectorXd lo, hi;
      model_box(r, combos_[c], lo, hi);
      nb[c] = bp_.bounds(lo, hi);
    }
    const double t = net_.threshold;
    std::vector<int> open;
    int everywhere = -1;  // a pair that flips at every point of the region
    for (int p : r.open) {
      const auto i = static_cast<std::size_t>(p / nc), j = static_cast<std::size_t>(p % nc);
      const Interval zi = nb[i].output(), zj = nb[j].output();
      if (zi.hi <= t || zj.lo > t) continue;
      if (zi.lo > t && zj.hi <= t) {
        everywhere = p;
        break;
      }
      const Eigen::VectorXd dlo = combo_diff(i, j, true), dhi = combo_diff(i, j, false);
      const Interval d = bp_.difference(nb[i], nb[j], dlo, dhi);  // z_i - z_j
      if (d.hi <= 0.0 || add_down(zi.lo, -d.hi) > t || add_up(zj.hi, d.hi) <= t) continue;
      open.push_back(p);
    }
    const Eigen::VectorXd center = ((r.lo + r.hi) / 2.0).array().floor().matrix();
    const long double vol = volume(r);
    if (o_.check && everywhere < 0) out.checked = recheck(r, open);
    if (everywhere >= 0) {
      out.falsified = vol;
      out.leaf = true;
      try_candidate(center, everywhere / nc, everywhere % nc, out);
      if (out.witnesses.empty()) try_candidate(r.lo, everywhere / nc, everywhere % nc, out);
      return out;
    }
    if (open.empty()) {
      out.certified = vol;
      out.leaf = true;
      return out;
    }
    for (int p : open) {
      try_candidate(center, p / nc, p % nc, out);
      if (!out.witnesses.empty()) break;
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
      try_candidate(corner, p / nc, p % nc, out);
      if (!out.witnesses.empty()) break;
    }
    // Without --quantify a witness point found here is counted (the search stops soon); with it,
    // the point is counted by the leaf that holds it, so it is not counted twice.
    if (!out.witnesses.empty() && !o_.quantify) out.witness_points = 1;
    const int f = split_feature(r, nb, needed);
    if (f < 0) {  // a single point: decide exactly
      out.leaf = true;
      bool flips = false;
      for (int p : open) {
        const Rational tr = Rational::from_double(t);
        if (exact_logit(raw_with(r.lo, p / nc)) > tr && !(exact_logit(raw_with(r.lo, p % nc)) > tr)) flips = true;
      }
      if (!flips) {
        out.certified = vol;
        if (o_.check) out.checked += recheck(Region{r.lo, r.hi, open}, {});  // closed exactly, not by bounds
      } else if (out.witnesses.empty()) {
        out.undecided = vol;  // a witness in exact arithmetic that does not replay in double
        ++exact_only_;
      } else {
        out.falsified = vol;
      }
      return out;
    }
    const Feature& feat = schema_.feature(f);
    Region a{r.lo, r.hi, open}, b{r.lo, r.hi, open};
    if (feat.integral()) {
      const double mid = std::floor((r.lo(f) + r.hi(f)) / 2.0);
      a.hi(f) = mid;
      b.lo(f) = mid + 1.0;
    } else {
      const double mid = (r.lo(f) + r.hi(f)) / 2.0;
      if (!(mid > r.lo(f) && mid < r.hi(f))) {  // a real feature split to the last bit
        out.leaf = true;
        out.undecided = vol;
        ++slivers_;
        return out;
      }
      a.hi(f) = mid;
      b.lo(f) = mid;
    }
    out.children.push_back(std::move(a));
    out.children.push_back(std::move(b));
    return out;
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

  void work(unsigned id) {
    auto last_progress = std::chrono::steady_clock::now();
    while (true) {
      Region r;
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [this] { return stop_ || !stack_.empty() || busy_ == 0; });
        if (stop_ || stack_.empty()) {
          cv_.notify_all();
          return;
        }
        r = std::move(stack_.back());
        stack_.pop_back();
        ++busy_;
      }
      Outcome out;
      try {
        out = process(r);
      } catch (...) {
        std::lock_guard lock(mutex_);
        if (!error_) error_ = std::current_exception();
        stop_ = true;
        --busy_;
        cv_.notify_all();
        return;
      }
      {
        std::lock_guard lock(mutex_);
        ++regions_;
        if (out.leaf) ++leaves_;
        certified_ += out.certified;
        falsified_ += out.falsified;
        undecided_ += out.undecided;
        rejected_ += out.rejected;
        checked_ += out.checked;
        for (auto& w : out.witnesses) {
          // Keep only what is reported (--quantify finds a witness at every flipping point).
          if (static_cast<int>(witnesses_.size()) >= std::max(1, o_.max_witnesses)) break;
          const bool seen = std::any_of(witnesses_.begin(), witnesses_.end(), [&w](const WitnessPair& o) {
            return o.raw == w.raw && o.raw_prime == w.raw_prime;
          });
          if (seen) continue;
          if (out.witness_points > 0) falsified_ += 1.0L / domain_points_;
          witnesses_.push_back(std::move(w));
        }
        for (auto& c : out.children) stack_.push_back(std::move(c));
        --busy_;
        if (!o_.quantify && static_cast<int>(witnesses_.size()) >= std::max(1, o_.max_witnesses)) stop_ = true;
        if (env_.expired() || (o_.cancel != nullptr && o_.cancel->load())) {
          stop_ = true;
          timed_out_ = !stack_.empty() || busy_ > 0;
        }
        cv_.notify_all();
      }
      if (id == 0 && o_.progress) {
        const auto now = std::chrono::steady_clock::now();
        if (now - last_progress > std::chrono::milliseconds(250)) {
          last_progress = now;
          CompleteProgress p;
          {
            std::lock_guard lock(mutex_);
            p = {static_cast<double>(certified_), static_cast<double>(falsified_), leaves_, env_.elapsed_seconds()};
          }
          o_.progress(p);
        }
      }
    }
  }

  FairnessResult result() {
    FairnessResult r;
    r.engine = "complete";
    r.stats.regions = regions_;
    r.stats.leaves = leaves_;
    r.stats.rejected = rejected_;
    r.stats.checked = checked_;
    r.stats.tests = regions_;
    r.share.measured = true;
    r.share.certified = static_cast<double>(std::min(1.0L, certified_));
    r.share.falsified = static_cast<double>(std::min(1.0L, falsified_));
    r.share.undecided = std::max(0.0, 1.0 - r.share.certified - r.share.falsified);
    const int keep = std::max(1, o_.max_witnesses);
    if (static_cast<int>(witnesses_.size()) > keep) witnesses_.resize(static_cast<std::size_t>(keep));
    r.witnesses = std::move(witnesses_);
    const bool finished = stack_.empty() && !timed_out_;
    if (!r.witnesses.empty()) {
      r.verdict = Verdict::Witness;
      r.exhaustive = finished && o_.quantify;
    } else if (finished && exact_only_ == 0 && slivers_ == 0 && undecided_ == 0.0L) {
      r.verdict = Verdict::Verified;
      r.exhaustive = true;
      r.share = {true, 1.0, 0.0, 0.0};
    } else if (finished && exact_only_ > 0) {
      r.reason = fmt::format("{} points are witnesses in exact arithmetic but not when replayed in double",
                             exact_only_.load());
    } else if (finished) {
      r.reason =
          fmt::format("{} regions of real features were split to the last bit and are still open", slivers_.load());
    } else {
      r.reason = fmt::format("time limit: {:.4g}% of the domain certified, {} regions open", 100.0 * r.share.certified,
                             stack_.size());
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
  std::vector<Eigen::VectorXd> combos_;
  std::vector<bool> is_protected_;
  std::vector<Eigen::VectorXd> combo_lo_, combo_hi_;
  std::vector<Eigen::Index> protected_inputs_;  // model inputs of the protected features
  long double domain_points_ = 1.0L;

  mutable std::once_flag exact_once_;
  mutable std::vector<std::vector<std::vector<Rational>>> exact_w_;
  mutable std::vector<std::vector<Rational>> exact_b_;
  mutable std::atomic<std::int64_t> exact_only_{0};
  mutable std::atomic<std::int64_t> slivers_{0};  // real-feature regions split to the last bit, still open

  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Region> stack_;
  int busy_ = 0;
  bool stop_ = false, timed_out_ = false;
  std::exception_ptr error_;
  std::int64_t regions_ = 0, leaves_ = 0, rejected_ = 0, checked_ = 0;
  long double certified_ = 0.0L, falsified_ = 0.0L, undecided_ = 0.0L;
  std::vector<WitnessPair> witnesses_;
};

}  // namespace

FairnessResult complete_search(const Model& model, const Schema& schema, const CompleteSearchOptions& options,
                               Env& env) {
  if (options.protected_features.empty()) throw InputError("no protected feature given");
  std::string why;
  std::optional<ReluNetwork> net = relu_network_of(model, &why);
  if (!net)
    throw UnsupportedError(fmt::format("the complete engine handles Dense/ReLU networks with one logit: {}", why));
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
  if (!relu_network_of(model, &why)) {
    if (!options.quantify) {
      std::vector<WitnessPair> found = falsify(model, schema, f, env, stats);
      if (!found.empty()) return found_by_falsification(std::move(found));
    }
    ConcolicSearchOptions d;
    d.protected_features = options.protected_features;
    d.max_witnesses = options.max_witnesses;
    d.query_time_limit = 1.0;
    FairnessResult r = dual_search(model, schema, d, env);
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

}  // namespace witness
