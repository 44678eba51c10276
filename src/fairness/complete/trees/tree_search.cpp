#include "fairness/complete/trees/tree_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "core/error.h"
#include "fairness/complete/answer/search_tally.h"
#include "fairness/complete/trees/raw_trees.h"
#include "fairness/complete/trees/tree_cell_count.h"
#include "fairness/complete/trees/tree_copies.h"
#include "fairness/problem.h"
#include "fairness/valid_combinations.h"
#include "model/evaluator.h"

namespace witness {

namespace {

constexpr double kEnumeratedPoints = 16.0;  // boxes this small are decided point by point
// Boxes with more undecided trees than this are not tried for a count by cells: such tries mostly
// fail (too many cells) and cost a pass over the trees (Adult, XGBoost 30 x 4 and 100 x 4: 16 was
// the best of 10, 16, 24, 40 and no limit).
constexpr int kCountableTrees = 16;
constexpr std::size_t kMaxOpen = std::size_t{1} << 20;  // about 400 MB of open boxes on 20 features

using BoxOutcome = TreeBoxOutcome;

// Per-worker evaluator of the original model (its buffers are not shared).
struct TreeScratch final : RegionScratch {
  explicit TreeScratch(const Model& model) : evaluator(model) {}
  Evaluator<double> evaluator;
};

class TreeRegions final : public RegionEvaluator {
 public:
  TreeRegions(const FairnessProblem& problem, const CompleteSearchOptions& o, RawTrees trees,
              const SearchSignals& signals)
      : domain_points_(box_measure(problem.schema(), problem.protected_mask(), {}, {})),
        problem_(problem),
        model_(problem.model()),
        schema_(problem.schema()),
        o_(o),
        signals_(signals),
        trees_(std::move(trees)),
        copies_(problem, o, trees_, signals),
        is_protected_(copies_.is_protected()) {
    const Schema& schema = schema_;
    for (int f = 0; f < schema.size(); ++f)
      if (!is_protected_[static_cast<std::size_t>(f)] && !schema.feature(f).integral() &&
          schema.feature(f).max > schema.feature(f).min)
        real_domain_ = true;
    trees_.watch(is_protected_);
  }

  [[nodiscard]] const FairnessProblem& problem() const override { return problem_; }
  [[nodiscard]] long double domain_points() const override { return domain_points_; }
  [[nodiscard]] bool real_domain() const override { return real_domain_; }
  [[nodiscard]] std::size_t max_open() const override { return std::min(o_.max_open_regions, kMaxOpen); }
  // Each cut is at a tree's threshold, so every box ends with one leaf per tree (exact labels).
  [[nodiscard]] bool closes_every_region() const override { return true; }
  [[nodiscard]] std::unique_ptr<RegionScratch> scratch() const override {
    return std::make_unique<TreeScratch>(model_);
  }

  [[nodiscard]] SearchRegion whole() const override {
    SearchRegion root;
    root.lo.resize(schema_.size());
    root.hi.resize(schema_.size());
    for (int f = 0; f < schema_.size(); ++f) root.lo(f) = schema_.feature(f).min, root.hi(f) = schema_.feature(f).max;
    root.measure = box_measure(schema_, is_protected_, root.lo, root.hi);
    return root;
  }

  [[nodiscard]] RegionOutcome begin(SearchRegion whole, RegionScratch* scratch) const override {
    return refine(whole, scratch);
  }

  [[nodiscard]] RegionOutcome refine(const SearchRegion& r, RegionScratch* scratch) const override {
    std::optional<TreeScratch> own;
    auto* s = dynamic_cast<TreeScratch*>(scratch);
    if (s == nullptr) s = &own.emplace(model_);
    SearchRegion b = r;
    BoxOutcome o = decide(b, s->evaluator);
    RegionOutcome out;
    out.counters.regions = 1;
    out.counters.rejected = o.rejected;
    out.invalid = o.invalid;
    out.witnesses = std::move(o.witnesses);
    if (o.kind == BoxOutcome::Kind::Split) {
      out.stuck = o.children.empty();
      out.open = std::move(o.children);
    } else {
      out.closed.push_back(ClosedRegion{std::move(b.lo), std::move(b.hi), b.measure, o.certified, o.falsified, o.all,
                                        o.inexact, std::move(o.unfair_points), std::move(o.unfair_by_value),
                                        std::move(o.unfair_run_ends)});
    }
    return out;
  }

  [[nodiscard]] std::vector<PointVerdict> decide_points(const Eigen::MatrixXd& raw,
                                                        RegionScratch* scratch) const override {
    std::optional<TreeScratch> own;
    auto* s = dynamic_cast<TreeScratch*>(scratch);
    if (s == nullptr) s = &own.emplace(model_);
    const std::vector<std::vector<int>> label = copies_.copy_labels(raw, s->evaluator);
    std::vector<PointVerdict> out(static_cast<std::size_t>(raw.cols()));
    std::size_t a = 0, b = 0;
    for (Eigen::Index p = 0; p < raw.cols(); ++p)
      out[static_cast<std::size_t>(p)] = copies_.verdict_at(raw, p, label, a, b);
    return out;
  }

  [[nodiscard]] std::string unreplayed(long double falsified) const override {
    return fmt::format("{} points flip, but no pair replayed as a witness", static_cast<double>(falsified));
  }

  void record_stats(Env& env, const SearchTally& /*tally*/) const override {
    env.stats.set("trees.copies", static_cast<double>(copies_.copies()));
    env.stats.set("trees.splits", static_cast<double>(trees_.split_count()));
  }

 private:
  [[nodiscard]] int constraint_split(const SearchRegion& b) const {
    return copies_.valid().widest_constrained(b.lo, b.hi);
  }

  // Halves of b at `cut` of feature f: (f <= cut) and (f > cut).
  void split(const SearchRegion& b, int f, double cut, BoxOutcome& out) const {
    const Feature& feat = schema_.feature(f);
    SearchRegion lo = b, hi = b;
    lo.hi(f) = cut;
    hi.lo(f) = feat.integral() ? cut + 1.0 : std::nextafter(cut, INFINITY);
    for (SearchRegion* c : {&lo, &hi}) {
      c->measure = box_measure(schema_, is_protected_, c->lo, c->hi);
      c->key = o_.quantify ? static_cast<double>(c->measure) : signals_.next_sequence();
    }
    out.kind = BoxOutcome::Kind::Split;
    out.children = {std::move(lo), std::move(hi)};
  }
  void halve(const SearchRegion& b, int f, BoxOutcome& out) const {
    const double mid =
        schema_.feature(f).integral() ? std::floor((b.lo(f) + b.hi(f)) / 2.0) : (b.lo(f) + b.hi(f)) / 2.0;
    split(b, f, mid, out);
  }

  // Each copy's label over a box (-1: not one label there), and the heaviest open cut of the trees.
  struct CopyLabels {
    std::vector<int> label;
    int cut_feature = -1, open_trees = 0;
    double cut = 0.0, weight = -1.0;
  };
  // Which pairs of valid combinations have labels known to differ everywhere, or may differ.
  struct PairFlips {
    bool unknown = false, everywhere = false, where_valid = false;
    std::size_t i = 0, j = 0;  // the pair that flips everywhere
  };

  // Soundness: a copy's label is taken as exact only where every tree reaches one leaf over the
  // box; a pair is certified only where both labels are exact and equal.
  // Decides b, narrowed in place to its people.
  [[nodiscard]] BoxOutcome decide(SearchRegion& b, Evaluator<double>& ev) const {
    BoxOutcome out;
    std::vector<Truth> truth(copies_.combinations(), Truth::Always);
    if (!narrowed(b, truth, out)) return out;
    const bool everyone = std::any_of(truth.begin(), truth.end(), [](Truth t) { return t == Truth::Always; });
    const bool discrete = !real_domain_ || [&] {
      for (int f = 0; f < schema_.size(); ++f)
        if (!is_protected_[static_cast<std::size_t>(f)] && !schema_.feature(f).integral() && b.lo(f) < b.hi(f))
          return false;
      return true;
    }();
    if (discrete && b.measure <= kEnumeratedPoints) {
      copies_.enumerate(b, out, ev);
      return out;
    }
    // No split inside the box reads a protected feature: every copy computes the same outputs.
    RawTrees::Reach reach;
    {
      Eigen::VectorXd lo = b.lo, hi = b.hi;
      for (int f : problem_.protected_features()) lo(f) = schema_.feature(f).min, hi(f) = schema_.feature(f).max;
      reach = trees_.reaches_watched(lo, hi);
      if (!reach.reads) return certified(b, everyone, out);
    }
    const CopyLabels labels = copy_labels(b, truth, ev);
    const PairFlips flips = compare(labels.label, truth);
    if (flips.everywhere) {
      out.kind = BoxOutcome::Kind::Falsified;
      out.falsified = b.measure;
      out.all = true;
      if (copies_.wants_witnesses()) copies_.try_pair(centre(b), flips.i, flips.j, out);
      return out;
    }
    if (!flips.unknown && !flips.where_valid) return certified(b, everyone, out);
    // A point in the middle may already be a witness (the first one sooner than by splitting).
    if (copies_.wants_witnesses()) copies_.probe(centre(b), truth, out, ev);
    if (o_.quantify && flips.unknown && discrete && labels.open_trees <= kCountableTrees &&
        counted_by_cells(b, truth, out, ev))
      return out;
    if (!flips.unknown) {  // flips only where both people exist: split on the constraints to decide it
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
    if (labels.cut_feature >= 0) {
      split(b, labels.cut_feature, labels.cut, out);
      return out;
    }
    split_widest(b, out);
    return out;
  }

  // Narrows b's derived features and finds which combinations are valid over it; false (out
  // then holds the invalid measure) when nobody is left.
  bool narrowed(SearchRegion& b, std::vector<Truth>& truth, BoxOutcome& out) const {
    const long double measure = b.measure;
    const ValidCombinations& valid = copies_.valid();
    if (valid.constrained()) {
      if (!schema_.constraints().narrow(b.lo, b.hi, is_protected_)) {
        out.kind = BoxOutcome::Kind::Mixed;
        out.invalid = measure;
        return false;
      }
      b.measure = box_measure(schema_, is_protected_, b.lo, b.hi);
      out.invalid = measure - b.measure;
      truth = valid.over_box(b.lo, b.hi);
    }
    if (std::all_of(truth.begin(), truth.end(), [](Truth t) { return t == Truth::Never; })) {
      out.kind = BoxOutcome::Kind::Mixed;
      out.invalid = measure;
      return false;
    }
    return true;
  }

  // b is fair wherever its people are valid.
  BoxOutcome& certified(const SearchRegion& b, bool everyone, BoxOutcome& out) const {
    if (everyone || !o_.quantify) {
      out.kind = BoxOutcome::Kind::Certified;
      out.certified = b.measure;
      out.inexact = !everyone;  // a verdict needs no count: how many points are valid stays unknown
      return out;
    }
    // Fair wherever valid: split where the constraints change, to count the valid points.
    if (const int f = constraint_split(b); f >= 0) {
      halve(b, f, out);
    } else {
      out.kind = BoxOutcome::Kind::Certified;
      out.certified = b.measure;
      out.inexact = true;
    }
    return out;
  }

  [[nodiscard]] CopyLabels copy_labels(const SearchRegion& b, const std::vector<Truth>& truth,
                                       Evaluator<double>& ev) const {
    CopyLabels out;
    out.label.assign(copies_.copies(), -1);
    for (std::size_t k = 0; k < copies_.copies(); ++k) {
      const std::size_t c = copies_.combination_of_copy(k);
      bool needed = false;
      for (std::size_t d = 0; d < copies_.combinations(); ++d)
        needed = needed || (copies_.copy_of(d) == k && truth[d] != Truth::Never);
      if (!needed) continue;
      Eigen::VectorXd lo = b.lo, hi = b.hi;
      copies_.set_combo(lo, hi, c);
      const BoxScores s = trees_.scores(lo, hi);
      if (s.leaves_only) {
        out.label[k] = copies_.labels(b.lo, c, ev)[0];
      } else {
        out.label[k] = trees_.label(s);
        out.open_trees = std::max(out.open_trees, s.open_trees);
        if (s.cut_weight > out.weight) out.weight = s.cut_weight, out.cut_feature = s.cut_feature, out.cut = s.cut;
      }
    }
    return out;
  }

  [[nodiscard]] PairFlips compare(const std::vector<int>& label, const std::vector<Truth>& truth) const {
    PairFlips out;
    for (std::size_t i = 0; i < copies_.combinations(); ++i) {
      if (truth[i] == Truth::Never) continue;
      const int li = label[copies_.copy_of(i)];
      for (std::size_t j = i + 1; j < copies_.combinations(); ++j) {
        if (truth[j] == Truth::Never) continue;
        const int lj = label[copies_.copy_of(j)];
        if (li < 0 || lj < 0) {
          out.unknown = out.unknown || copies_.copy_of(i) != copies_.copy_of(j);
          continue;
        }
        if (li == lj) continue;
        if (truth[i] == Truth::Always && truth[j] == Truth::Always) {
          out.everywhere = true;
          out.i = i, out.j = j;
        } else {
          out.where_valid = true;
        }
      }
    }
    return out;
  }

  // Decided trees but undecided labels (a rule the bounds cannot follow): the widest feature halved.
  void split_widest(const SearchRegion& b, BoxOutcome& out) const {
    int widest = -1;
    double most = 0.0;
    for (int f = 0; f < schema_.size(); ++f) {
      if (is_protected_[static_cast<std::size_t>(f)] || b.lo(f) >= b.hi(f)) continue;
      const Feature& feat = schema_.feature(f);
      const double n = feat.integral() ? b.hi(f) - b.lo(f) + 1.0 : (b.hi(f) - b.lo(f)) / (feat.max - feat.min) * 1e6;
      if (n > most) most = n, widest = f;
    }
    if (widest < 0 || (!schema_.feature(widest).integral() && std::nextafter(b.lo(widest), INFINITY) >= b.hi(widest))) {
      out.kind = BoxOutcome::Kind::Split;  // nothing left to split: stays open
      return;
    }
    halve(b, widest, out);
  }

  // Quantifying: the box counted exactly by cells where every combination is valid at all its
  // points or none (the counts are over the box's points).
  bool counted_by_cells(const SearchRegion& b, const std::vector<Truth>& truth, BoxOutcome& out,
                        Evaluator<double>& ev) const {
    std::vector<Eigen::VectorXd> lo, hi;
    for (std::size_t k = 0; k < copies_.copies(); ++k) {
      bool always = false;
      for (std::size_t c = 0; c < copies_.combinations(); ++c) {
        if (copies_.copy_of(c) != k) continue;
        if (truth[c] == Truth::Maybe) return false;
        always = always || truth[c] == Truth::Always;
      }
      if (!always) continue;
      lo.push_back(b.lo);
      hi.push_back(b.hi);
      copies_.set_combo(lo.back(), hi.back(), copies_.combination_of_copy(k));
    }
    std::optional<CellCounts> c = cells_.count(lo, hi);
    if (!c) return false;
    // An unfair point the count found, replayed: the run's witness even when every unfair point
    // lies in counted boxes (closing does not wait for one, so the regions do not depend on timing).
    if (c->unfair > 0.0L && out.witnesses.empty() && copies_.wants_witnesses())
      copies_.probe(c->unfair_point, truth, out, ev);
    out.kind = BoxOutcome::Kind::Mixed;
    out.certified = c->fair;
    out.falsified = c->unfair;
    out.all = c->unfair == b.measure;
    if (c->unfair > 0.0L && !out.all) {
      out.unfair_by_value = std::move(c->unfair_by_cell);
      out.unfair_run_ends = std::move(c->cell_ends);
    }
    return true;
  }

  [[nodiscard]] Eigen::VectorXd centre(const SearchRegion& b) const {
    Eigen::VectorXd c = (b.lo + b.hi) / 2.0;
    for (int f = 0; f < schema_.size(); ++f)
      if (schema_.feature(f).integral()) c(f) = std::floor(c(f));
    return c;
  }

  long double domain_points_;
  const FairnessProblem& problem_;
  const Model& model_;
  const Schema& schema_;
  const CompleteSearchOptions& o_;
  const SearchSignals& signals_;
  RawTrees trees_;
  TreeCopies copies_;
  const std::vector<bool>& is_protected_;
  TreeCellCount cells_{trees_, schema_};
  bool real_domain_ = false;
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

std::unique_ptr<RegionEvaluator> tree_regions(const FairnessProblem& problem, const CompleteSearchOptions& options,
                                              const SearchSignals& signals) {
  std::string why;
  std::optional<RawTrees> trees = RawTrees::compile(problem.model(), problem.schema(), &why);
  if (!trees) throw UnsupportedError(fmt::format("the tree engine cannot read this model: {}", why));
  return std::make_unique<TreeRegions>(problem, options, std::move(*trees), signals);
}

}  // namespace witness
