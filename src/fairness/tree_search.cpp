#include "fairness/tree_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "core/error.h"
#include "fairness/falsify.h"
#include "fairness/quantify_answer.h"
#include "fairness/raw_trees.h"
#include "fairness/valid_combinations.h"
#include "model/evaluator.h"

namespace witness {

namespace {

constexpr double kEnumeratedPoints = 16.0;              // boxes this small are decided point by point
constexpr std::size_t kMaxOpen = std::size_t{1} << 20;  // about 400 MB of open boxes on 20 features

struct Box {
  Eigen::VectorXd lo, hi;  // raw bounds per schema feature (protected entries unused)
  long double measure = 0.0L;
  double key = 0.0;  // larger first
};

// What deciding one box found.
struct Outcome {
  enum class Kind : std::uint8_t { Certified, Falsified, Mixed, Split } kind = Kind::Split;
  long double certified = 0.0L, falsified = 0.0L, invalid = 0.0L;
  bool inexact = false;  // certified without knowing how many of its points are people
  bool all = false;      // every point falsified
  std::vector<Box> children;
  std::vector<WitnessPair> witnesses;
  std::vector<Eigen::VectorXd> unfair_points;  // enumerated
  std::int64_t rejected = 0;
};

class TreeSearch {
 public:
  TreeSearch(const Model& model, const Schema& schema, const CompleteSearchOptions& o, Env& env, RawTrees trees)
      : domain_points_(box_measure(schema, schema.feature_mask(o.protected_features), {}, {})),
        model_(model),
        schema_(schema),
        o_(o),
        env_(env),
        trees_(std::move(trees)),
        combos_(protected_combinations(schema, o.protected_features)),
        is_protected_(schema.feature_mask(o.protected_features)),
        valid_(schema, o.protected_features, combos_) {
    for (int f = 0; f < schema.size(); ++f)
      if (!is_protected_[static_cast<std::size_t>(f)] && !schema.feature(f).integral() &&
          schema.feature(f).max > schema.feature(f).min)
        real_domain_ = true;
    // Protected values that every split tests alike give the same outputs everywhere: one copy each.
    std::map<std::vector<char>, int> classes;
    for (std::size_t c = 0; c < combos_.size(); ++c) {
      Eigen::VectorXd point = Eigen::VectorXd::Zero(schema.size());
      set_combo(point, point, c);
      const auto [it, fresh] =
          classes.try_emplace(trees_.fingerprint(point, is_protected_), static_cast<int>(copies_.size()));
      if (fresh) copies_.push_back(static_cast<int>(c));
      copy_of_.push_back(it->second);
    }
    if (o.quantify) answer_.emplace(schema, o.protected_features, o.max_regions, domain_points_);
    trees_.watch(is_protected_);
    threads_ = env.threads() == 0 ? std::max(1U, std::thread::hardware_concurrency()) : env.threads();
  }

  FairnessResult run() {
    Box root{Eigen::VectorXd(schema_.size()), Eigen::VectorXd(schema_.size())};
    for (int f = 0; f < schema_.size(); ++f) root.lo(f) = schema_.feature(f).min, root.hi(f) = schema_.feature(f).max;
    root.measure = box_measure(schema_, is_protected_, root.lo, root.hi);
    push(std::move(root));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads_; ++t) pool.emplace_back([this] { work(false); });
    work(true);
    for (auto& t : pool) t.join();
    if (s_.error) std::rethrow_exception(s_.error);
    return result();
  }

 private:
  void set_combo(Eigen::VectorXd& lo, Eigen::VectorXd& hi, std::size_t c) const {
    for (std::size_t k = 0; k < o_.protected_features.size(); ++k)
      lo(o_.protected_features[k]) = hi(o_.protected_features[k]) = combos_[c](static_cast<Eigen::Index>(k));
  }
  [[nodiscard]] bool wants_witnesses() const {
    return witnesses_found_.load(std::memory_order_relaxed) < std::max(1, o_.max_witnesses);
  }

  // Labels of the raw points (columns) with combination c, by the original model in double.
  std::vector<int> labels(const Eigen::MatrixXd& raw, std::size_t c, Evaluator<double>& ev) const {
    const Eigen::MatrixXd rc = with_protected(raw, o_.protected_features, combos_[c]);
    std::vector<int> out;
    ev.labels(schema_.to_model_columns(rc), out);
    return out;
  }

  // A replayed witness at the raw point with combinations i and j, if it is one.
  void try_pair(const Eigen::VectorXd& raw, std::size_t i, std::size_t j, Outcome& out) const {
    const Eigen::MatrixXd ri = with_protected(raw, o_.protected_features, combos_[i]);
    const Eigen::MatrixXd rj = with_protected(raw, o_.protected_features, combos_[j]);
    Eigen::VectorXd a = ri.col(0), b = rj.col(0);
    if (valid_.constrained()) {
      schema_.constraints().derive(a);
      schema_.constraints().derive(b);
    }
    if (auto w = replay_witness(model_, schema_, o_.protected_features, schema_.to_model(a), schema_.to_model(b))) {
      out.witnesses.push_back(std::move(*w));
    } else {
      ++out.rejected;
    }
  }

  // Every point of a small box, each with the combinations valid at it.
  void enumerate(const Box& b, Outcome& out, Evaluator<double>& ev) const {
    std::vector<int> dims;
    Eigen::Index n = 1;
    for (int f = 0; f < schema_.size(); ++f)
      if (!is_protected_[static_cast<std::size_t>(f)] && b.hi(f) > b.lo(f)) {
        dims.push_back(f);
        n *= static_cast<Eigen::Index>(b.hi(f) - b.lo(f) + 1.0);
      }
    Eigen::MatrixXd raw = b.lo.replicate(1, n);
    for (Eigen::Index p = 0, rest = 0; p < n; ++p) {
      rest = p;
      for (int f : dims) {
        const auto span = static_cast<Eigen::Index>(b.hi(f) - b.lo(f) + 1.0);
        raw(f, p) = b.lo(f) + static_cast<double>(rest % span);
        rest /= span;
      }
    }
    std::vector<std::vector<int>> label(copies_.size());
    for (std::size_t k = 0; k < copies_.size(); ++k) label[k] = labels(raw, static_cast<std::size_t>(copies_[k]), ev);
    out.kind = Outcome::Kind::Mixed;
    for (Eigen::Index p = 0; p < n; ++p) {
      int seen = -1;
      std::size_t first = 0;
      bool any = false, flips = false;
      for (std::size_t c = 0; c < combos_.size() && !flips; ++c) {
        if (valid_.constrained() && !valid_.valid(raw.col(p), c)) continue;
        const int l = label[static_cast<std::size_t>(copy_of_[c])][static_cast<std::size_t>(p)];
        if (!any) {
          any = true, seen = l, first = c;
        } else if (l != seen) {
          flips = true;
          if (wants_witnesses() && out.witnesses.size() < static_cast<std::size_t>(std::max(1, o_.max_witnesses)))
            try_pair(raw.col(p), c, first, out);
        }
      }
      if (!any) {
        out.invalid += 1.0L;
      } else if (flips) {
        out.falsified += 1.0L;
        out.unfair_points.emplace_back(raw.col(p));
      } else {
        out.certified += 1.0L;
      }
    }
  }

  [[nodiscard]] int constraint_split(const Box& b) const { return valid_.widest_constrained(b.lo, b.hi); }

  // Halves of b at `cut` of feature f: (f <= cut) and (f > cut).
  void split(const Box& b, int f, double cut, Outcome& out) const {
    const Feature& feat = schema_.feature(f);
    Box lo = b, hi = b;
    lo.hi(f) = cut;
    hi.lo(f) = feat.integral() ? cut + 1.0 : std::nextafter(cut, INFINITY);
    for (Box* c : {&lo, &hi}) {
      c->measure = box_measure(schema_, is_protected_, c->lo, c->hi);
      c->key = o_.quantify ? static_cast<double>(c->measure) : static_cast<double>(sequence_++);
    }
    out.kind = Outcome::Kind::Split;
    out.children = {std::move(lo), std::move(hi)};
  }
  void halve(const Box& b, int f, Outcome& out) const {
    const double mid =
        schema_.feature(f).integral() ? std::floor((b.lo(f) + b.hi(f)) / 2.0) : (b.lo(f) + b.hi(f)) / 2.0;
    split(b, f, mid, out);
  }

  [[nodiscard]] Outcome decide(Box b, Evaluator<double>& ev) const {
    Outcome out;
    const long double measure = b.measure;
    std::vector<Truth> truth(combos_.size(), Truth::Always);
    if (valid_.constrained()) {
      if (!schema_.constraints().narrow(b.lo, b.hi, is_protected_)) {
        out.kind = Outcome::Kind::Mixed;
        out.invalid = measure;
        return out;
      }
      b.measure = box_measure(schema_, is_protected_, b.lo, b.hi);
      out.invalid = measure - b.measure;
      truth = valid_.over_box(b.lo, b.hi);
    }
    const bool nobody = std::all_of(truth.begin(), truth.end(), [](Truth t) { return t == Truth::Never; });
    const bool everyone = std::any_of(truth.begin(), truth.end(), [](Truth t) { return t == Truth::Always; });
    if (nobody) {
      out.kind = Outcome::Kind::Mixed;
      out.invalid = measure;
      return out;
    }
    const bool discrete = !real_domain_ || [&] {
      for (int f = 0; f < schema_.size(); ++f)
        if (!is_protected_[static_cast<std::size_t>(f)] && !schema_.feature(f).integral() && b.lo(f) < b.hi(f))
          return false;
      return true;
    }();
    if (discrete && b.measure <= kEnumeratedPoints) {
      enumerate(b, out, ev);
      return out;
    }
    auto certified = [&]() -> Outcome& {
      if (everyone || !o_.quantify) {
        out.kind = Outcome::Kind::Certified;
        out.certified = b.measure;
        out.inexact = !everyone;  // a verdict needs no count: how many points are valid stays unknown
        return out;
      }
      // Fair wherever valid: split where the constraints change, to count the valid points.
      if (const int f = constraint_split(b); f >= 0) {
        halve(b, f, out);
      } else {
        out.kind = Outcome::Kind::Certified;
        out.certified = b.measure;
        out.inexact = true;
      }
      return out;
    };
    // No split inside the box reads a protected feature: every copy computes the same outputs.
    RawTrees::Reach reach;
    {
      Eigen::VectorXd lo = b.lo, hi = b.hi;
      for (int f : o_.protected_features) lo(f) = schema_.feature(f).min, hi(f) = schema_.feature(f).max;
      reach = trees_.reaches_watched(lo, hi);
      if (!reach.reads) return certified();
    }
    // Each copy's label over the box, exact once every tree reaches one leaf.
    std::vector<int> label(copies_.size(), -1);
    int cut_feature = -1;
    double cut = 0.0, weight = -1.0;
    for (std::size_t k = 0; k < copies_.size(); ++k) {
      const auto c = static_cast<std::size_t>(copies_[k]);
      bool needed = false;
      for (std::size_t d = 0; d < combos_.size(); ++d)
        needed = needed || (copy_of_[d] == static_cast<int>(k) && truth[d] != Truth::Never);
      if (!needed) continue;
      Eigen::VectorXd lo = b.lo, hi = b.hi;
      set_combo(lo, hi, c);
      const BoxScores s = trees_.scores(lo, hi);
      if (s.leaves_only) {
        label[k] = labels(b.lo, c, ev)[0];
      } else {
        label[k] = trees_.label(s);
        if (s.cut_weight > weight) weight = s.cut_weight, cut_feature = s.cut_feature, cut = s.cut;
      }
    }
    // Pairs of valid combinations whose labels are known to differ everywhere, or may.
    bool unknown = false, flips_everywhere = false, flips_where_valid = false;
    std::size_t fi = 0, fj = 0;
    for (std::size_t i = 0; i < combos_.size(); ++i) {
      if (truth[i] == Truth::Never) continue;
      const int li = label[static_cast<std::size_t>(copy_of_[i])];
      for (std::size_t j = i + 1; j < combos_.size(); ++j) {
        if (truth[j] == Truth::Never) continue;
        const int lj = label[static_cast<std::size_t>(copy_of_[j])];
        if (li < 0 || lj < 0) {
          unknown = unknown || copy_of_[i] != copy_of_[j];
          continue;
        }
        if (li == lj) continue;
        if (truth[i] == Truth::Always && truth[j] == Truth::Always) {
          flips_everywhere = true;
          fi = i, fj = j;
        } else {
          flips_where_valid = true;
        }
      }
    }
    if (flips_everywhere) {
      out.kind = Outcome::Kind::Falsified;
      out.falsified = b.measure;
      out.all = true;
      if (wants_witnesses()) {
        try_pair(centre(b), fi, fj, out);
      }
      return out;
    }
    if (!unknown && !flips_where_valid) return certified();
    // A point in the middle may already be a witness (the first one sooner than by splitting).
    if (wants_witnesses()) probe_centre(b, truth, out, ev);
    if (!unknown) {  // flips only where both people exist: split on the constraints to decide it
      const int f = constraint_split(b);
      if (f >= 0) {
        halve(b, f, out);
        return out;
      }
    }
    // First separate the points that reach a protected test from those that do not (which the
    // next step certifies whole), then settle the trees.
    if (reach.cut_feature >= 0) {
      split(b, reach.cut_feature, reach.cut, out);
      return out;
    }
    if (cut_feature >= 0) {
      split(b, cut_feature, cut, out);
      return out;
    }
    // Decided trees but undecided labels (a rule the bounds cannot follow): the widest feature.
    int widest = -1;
    double most = 0.0;
    for (int f = 0; f < schema_.size(); ++f) {
      if (is_protected_[static_cast<std::size_t>(f)] || b.lo(f) >= b.hi(f)) continue;
      const Feature& feat = schema_.feature(f);
      const double n = feat.integral() ? b.hi(f) - b.lo(f) + 1.0 : (b.hi(f) - b.lo(f)) / (feat.max - feat.min) * 1e6;
      if (n > most) most = n, widest = f;
    }
    if (widest < 0 || (!schema_.feature(widest).integral() && std::nextafter(b.lo(widest), INFINITY) >= b.hi(widest))) {
      out.kind = Outcome::Kind::Split;  // nothing left to split: stays open
      return out;
    }
    halve(b, widest, out);
    return out;
  }

  [[nodiscard]] Eigen::VectorXd centre(const Box& b) const {
    Eigen::VectorXd c = (b.lo + b.hi) / 2.0;
    for (int f = 0; f < schema_.size(); ++f)
      if (schema_.feature(f).integral()) c(f) = std::floor(c(f));
    return c;
  }

  void probe_centre(const Box& b, const std::vector<Truth>& truth, Outcome& out, Evaluator<double>& ev) const {
    Eigen::VectorXd derived = centre(b);
    if (valid_.constrained()) schema_.constraints().derive(derived);
    int seen = -1;
    std::size_t first = 0;
    for (std::size_t c = 0; c < combos_.size(); ++c) {
      if (truth[c] == Truth::Never || (valid_.constrained() && !valid_.valid(derived, c))) continue;
      const int l = labels(derived, c, ev)[0];
      if (seen < 0) {
        seen = l, first = c;
      } else if (l != seen) {
        try_pair(derived, c, first, out);
        return;
      }
    }
  }

  void push(Box b) {
    std::lock_guard lock(mutex_);
    s_.heap.push_back(std::move(b));
    std::push_heap(s_.heap.begin(), s_.heap.end(), ByKey{});
  }

  void work(bool reports_progress) {
    Evaluator<double> ev(model_);
    auto last_progress = std::chrono::steady_clock::now();
    for (;;) {
      Box b;
      {
        std::unique_lock lock(mutex_);
        idle_cv_.wait(lock, [this] { return s_.stop || !s_.heap.empty() || s_.busy == 0; });
        if (s_.stop || s_.heap.empty()) {
          idle_cv_.notify_all();
          return;
        }
        std::pop_heap(s_.heap.begin(), s_.heap.end(), ByKey{});
        b = std::move(s_.heap.back());
        s_.heap.pop_back();
        ++s_.busy;
      }
      Outcome out;
      try {
        out = decide(b, ev);
      } catch (...) {
        std::lock_guard lock(mutex_);
        if (!s_.error) s_.error = std::current_exception();
        s_.stop = true;
        --s_.busy;
        idle_cv_.notify_all();
        return;
      }
      commit(std::move(b), std::move(out));
      if (reports_progress && o_.progress) {
        const auto now = std::chrono::steady_clock::now();
        if (now - last_progress > std::chrono::milliseconds(250)) {
          last_progress = now;
          CompleteProgress p;
          {
            std::lock_guard lock(mutex_);
            const long double valid = domain_points_ - s_.invalid;
            p = {static_cast<double>(s_.certified / valid), static_cast<double>(s_.falsified / valid), s_.leaves,
                 env_.elapsed_seconds()};
          }
          o_.progress(p);
        }
      }
    }
  }

  void commit(Box b, Outcome out) {
    std::lock_guard lock(mutex_);
    --s_.busy;
    ++s_.regions;
    s_.rejected += out.rejected;
    s_.invalid += out.invalid;
    for (auto& w : out.witnesses) {
      if (static_cast<int>(s_.witnesses.size()) >= std::max(1, o_.max_witnesses)) break;
      const bool seen = std::any_of(s_.witnesses.begin(), s_.witnesses.end(), [&w](const WitnessPair& x) {
        return x.raw == w.raw && x.raw_prime == w.raw_prime;
      });
      if (!seen) s_.witnesses.push_back(std::move(w));
    }
    witnesses_found_ = static_cast<int>(s_.witnesses.size());
    if (out.kind == Outcome::Kind::Split && out.children.empty()) {
      s_.stuck.push_back(std::move(b));
    } else if (out.kind == Outcome::Kind::Split) {
      for (Box& c : out.children) {
        s_.heap.push_back(std::move(c));
        std::push_heap(s_.heap.begin(), s_.heap.end(), ByKey{});
      }
      if (s_.heap.size() > kMaxOpen) {  // memory bounded: the half with the smallest keys stays undecided
        const auto half = s_.heap.begin() + static_cast<std::ptrdiff_t>(kMaxOpen / 2);
        std::nth_element(s_.heap.begin(), half, s_.heap.end(),
                         [](const Box& a, const Box& c) { return a.key > c.key; });
        // Dropped, not kept: their measure stays in the undecided share, and memory stays bounded.
        s_.evicted += static_cast<std::int64_t>(s_.heap.end() - half);
        s_.heap.erase(half, s_.heap.end());
        std::make_heap(s_.heap.begin(), s_.heap.end(), ByKey{});
      }
    } else {
      ++s_.leaves;
      s_.certified += out.certified;
      s_.falsified += out.falsified;
      s_.inexact = s_.inexact || out.inexact;
      if (answer_ && out.falsified > 0.0L) {
        if (!out.all && out.unfair_points.size() <= 4096) {
          for (const Eigen::VectorXd& p : out.unfair_points) answer_->add_falsified(p, p, 1.0L, 1.0L, true);
        } else {
          answer_->add_falsified(b.lo, b.hi, b.measure, out.falsified, out.all);
        }
      }
    }
    if (!o_.quantify && static_cast<int>(s_.witnesses.size()) >= std::max(1, o_.max_witnesses)) s_.stop = true;
    if (env_.expired() || (o_.cancel != nullptr && o_.cancel->load())) {
      s_.interrupted = true;
      s_.stop = true;
    }
    idle_cv_.notify_all();
  }

  FairnessResult result() {
    FairnessResult r;
    r.engine = "complete";
    std::vector<Box> left = std::move(s_.stuck);
    left.insert(left.end(), std::make_move_iterator(s_.heap.begin()), std::make_move_iterator(s_.heap.end()));
    s_.heap.clear();
    const bool finished = left.empty() && s_.evicted == 0 && !s_.error;
    const long double valid = domain_points_ - s_.invalid;
    if (answer_) {
      const std::size_t keep = std::min(left.size(), 4 * static_cast<std::size_t>(std::max(1, o_.max_regions)));
      std::nth_element(left.begin(), left.begin() + static_cast<std::ptrdiff_t>(keep), left.end(),
                       [](const Box& a, const Box& b) { return a.measure > b.measure; });
      for (std::size_t i = 0; i < keep; ++i)
        answer_->add_report(left[i].lo, left[i].hi, left[i].measure, 0.0L, left[i].measure, false);
      r.marginals = answer_->marginals(s_.falsified);
      r.regions = answer_->regions(valid);
    }
    r.stats.regions = s_.regions;
    r.stats.leaves = s_.leaves;
    r.stats.rejected = s_.rejected;
    r.stats.tests = s_.regions;
    env_.stats.set("complete.regions", static_cast<double>(s_.regions));
    env_.stats.set("complete.leaves", static_cast<double>(s_.leaves));
    env_.stats.set("complete.open_regions", static_cast<double>(left.size()) + static_cast<double>(s_.evicted));
    env_.stats.set("complete.evicted_regions", static_cast<double>(s_.evicted));
    env_.stats.set("trees.copies", static_cast<double>(copies_.size()));
    env_.stats.set("trees.splits", static_cast<double>(trees_.split_count()));
    r.share.measured = true;
    r.share.points = real_domain_ ? 0.0L : valid;
    if (finished) {
      r.share.falsified = valid > 0.0L ? static_cast<double>(s_.falsified / valid) : 0.0;
      r.share.certified = 1.0 - r.share.falsified;
      r.share.undecided = 0.0;
      r.share.exact = !real_domain_ && !s_.inexact;
      r.share.falsified_points = s_.falsified;
    } else {
      r.share.certified = std::clamp(static_cast<double>(s_.certified / valid), 0.0, 1.0);
      r.share.falsified = std::clamp(static_cast<double>(s_.falsified / valid), 0.0, 1.0 - r.share.certified);
      r.share.undecided = std::max(0.0, 1.0 - r.share.certified - r.share.falsified);
    }
    std::string unfinished;
    if (!finished) {
      unfinished =
          s_.evicted > 0 && !s_.interrupted
              ? fmt::format("{} open regions exceeded the queue's capacity and stay undecided", s_.evicted)
              : fmt::format("{}: {:.4g}% of the domain certified, {:.3g}% falsified, {} regions open",
                            s_.interrupted ? env_.stop_reason() : std::string("real features split to the last bit"),
                            100.0 * r.share.certified, 100.0 * r.share.falsified,
                            static_cast<std::int64_t>(left.size()) + s_.evicted);
    }
    r.witnesses = std::move(s_.witnesses);
    if (!r.witnesses.empty()) {
      r.verdict = Verdict::Witness;
      r.exhaustive = finished && o_.quantify;
      if (o_.quantify) r.reason = unfinished;
    } else if (finished && s_.falsified == 0.0L) {
      r.verdict = Verdict::Verified;
      r.exhaustive = true;
      r.share = DomainShare{true, 1.0, 0.0, 0.0, r.share.points, 0.0L, !real_domain_ && !s_.inexact};
    } else if (finished) {
      r.reason = fmt::format("{} points flip, but no pair replayed as a witness", static_cast<double>(s_.falsified));
    } else {
      r.reason = unfinished;
    }
    r.stats.seconds = env_.elapsed_seconds();
    return r;
  }

  struct ByKey {
    bool operator()(const Box& a, const Box& b) const { return a.key < b.key; }
  };

  long double domain_points_;
  std::optional<QuantifyAnswer> answer_;
  const Model& model_;
  const Schema& schema_;
  const CompleteSearchOptions& o_;
  Env& env_;
  RawTrees trees_;
  std::vector<Eigen::VectorXd> combos_;
  std::vector<bool> is_protected_;
  ValidCombinations valid_;
  std::vector<int> copies_;   // per copy, one combination it stands for
  std::vector<int> copy_of_;  // per combination, its copy
  mutable std::atomic<std::int64_t> sequence_{0};
  std::atomic<int> witnesses_found_{0};
  unsigned threads_ = 1;
  bool real_domain_ = false;

  // Guarded by mutex_.
  struct Shared {
    long double certified = 0.0L, falsified = 0.0L, invalid = 0.0L;
    std::exception_ptr error;
    std::int64_t regions = 0, leaves = 0, rejected = 0, evicted = 0;
    std::vector<Box> heap;  // a max-heap by key (ByKey)
    std::vector<Box> stuck;
    std::vector<WitnessPair> witnesses;
    int busy = 0;
    bool stop = false, interrupted = false, inexact = false;
  };
  std::mutex mutex_;
  std::condition_variable idle_cv_;
  Shared s_;
};

}  // namespace

bool is_tree_model(const Model& model) {
  return std::any_of(model.nodes.begin(), model.nodes.end(),
                     [](const Node& n) { return n.op == OpKind::TreeEnsemble; });
}

bool tree_engine_reads(const Model& model, const Schema& schema, std::string* why) {
  try {
    return is_tree_model(model) && RawTrees::compile(model, schema, why).has_value();
  } catch (const UnsupportedError& e) {
    if (why != nullptr) *why = e.what();
    return false;
  }
}

FairnessResult tree_search(const Model& model, const Schema& schema, const CompleteSearchOptions& options, Env& env) {
  if (options.protected_features.empty()) throw InputError("no protected feature given");
  std::string why;
  std::optional<RawTrees> trees = RawTrees::compile(model, schema, &why);
  if (!trees) throw UnsupportedError(fmt::format("the tree engine cannot read this model: {}", why));
  TreeSearch search(model, schema, options, env, std::move(*trees));
  return search.run();
}

}  // namespace witness
