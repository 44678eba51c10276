#include "fairness/complete/network/network_regions.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "fairness/complete/answer/search_tally.h"
#include "fairness/problem.h"
#include "fairness/smt_search.h"

namespace witness {

namespace {

constexpr long double kMaxEnumerated = 1 << 24;  // points of the largest region decided point by point

}  // namespace

NetworkRegions::NetworkRegions(const FairnessProblem& problem, const CompleteSearchOptions& o, ReluNetwork net,
                               const SearchSignals& signals)
    : problem_(problem),
      model_(problem.model()),
      schema_(problem.schema()),
      prot_(problem.protected_features()),
      o_(o),
      signals_(signals),
      net_(std::move(net)),
      bp_(net_),
      forward_(net_),
      exact_(net_, schema_),
      combos_(problem.combinations()),
      is_protected_(problem.protected_mask()),
      valid_(schema_, prot_, combos_) {
  const Schema& schema = schema_;
  for (int f = 0; f < schema.size(); ++f) {
    const Feature& feat = schema.feature(f);
    if (!is_protected_[static_cast<std::size_t>(f)] && feat.integral())
      domain_points_ *= static_cast<long double>(feat.max - feat.min + 1.0);
    if (!is_protected_[static_cast<std::size_t>(f)] && !feat.integral() && feat.max > feat.min) real_domain_ = true;
  }
  for (const int i : schema.inputs_of(prot_)) protected_inputs_.push_back(i);
  for (std::size_t c = 0; c < combos_.size(); ++c) {
    Eigen::VectorXd lo, hi;
    SearchRegion zero{Eigen::VectorXd::Zero(schema.size()), Eigen::VectorXd::Zero(schema.size()), {}, {}, 0, -1};
    model_box(zero, combos_[c], lo, hi);
    combo_lo_.push_back(lo);
    combo_hi_.push_back(hi);
  }
  // Multiply-adds of one forward pass, and roughly of one bound computation (interval pass,
  // back-substitution of every layer through the layers below it).
  std::vector<double> width{static_cast<double>(net_.input_width)};
  for (const auto& layer : net_.layers) {
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
  split_ = o.split != SplitRule::Auto ? o.split : o.quantify ? SplitRule::Gap : SplitRule::Score;
  bp_.set_stop(&signals.stop);
  forward_.set_stop(&signals.stop);
  exact_.set_stop(&signals.stop);
}

SearchRegion NetworkRegions::whole() const {
  SearchRegion root{Eigen::VectorXd(schema_.size()), Eigen::VectorXd(schema_.size()), {}, {}, 0, -1};
  for (int f = 0; f < schema_.size(); ++f) {
    root.lo(f) = schema_.feature(f).min;
    root.hi(f) = schema_.feature(f).max;
  }
  const int nc = static_cast<int>(combos_.size());
  for (int i = 0; i < nc; ++i)
    for (int j = 0; j < nc; ++j)
      if (i != j) root.open.push_back(i * nc + j);
  root.measure = measure(root);
  return root;
}

RegionOutcome NetworkRegions::begin(SearchRegion whole, RegionScratch* /*scratch*/) const {
  RegionOutcome out;
  evaluate_into(std::move(whole), out, false);
  return out;
}

RegionOutcome NetworkRegions::refine(const SearchRegion& r, RegionScratch* /*scratch*/) const {
  RegionOutcome out;
  if (r.recount) {  // the same region, counted finely
    SearchRegion again = r;
    again.fair = again.unfair = 0.0L;
    evaluate_into(std::move(again), out, true);
    return out;
  }
  SearchRegion a, b;
  if (!split(r, r.split, a, b)) {
    out.stuck = true;
    return out;
  }
  evaluate_into(std::move(a), out, false);
  evaluate_into(std::move(b), out, false);
  return out;
}

void NetworkRegions::evaluate_into(SearchRegion r, RegionOutcome& out, bool fine) const {
  RegionEvaluation ev;
  evaluate(r, ev, fine);
  out.counters += ev.counters;
  ++out.counters.regions;
  out.invalid += ev.invalid;
  for (WitnessPair& w : ev.witnesses) out.witnesses.push_back(std::move(w));
  if (!ev.closed) {
    out.open.push_back(std::move(r));
    return;
  }
  out.closed.push_back(ClosedRegion{std::move(r.lo),
                                    std::move(r.hi),
                                    r.measure,
                                    ev.certified,
                                    ev.falsified,
                                    ev.all_falsified,
                                    ev.inexact,
                                    std::move(ev.unfair_points),
                                    std::move(ev.unfair_by_value),
                                    {}});
}

std::string NetworkRegions::unreplayed(long double falsified) const {
  return fmt::format("{} points are witnesses in exact arithmetic but not when replayed in double",
                     static_cast<double>(falsified));
}

void NetworkRegions::record_stats(Env& env, const SearchTally& tally) const {
  env.stats.set("complete.enumerated_points", static_cast<double>(tally.counters.enumerated));
  env.stats.set("complete.counted_regions", static_cast<double>(tally.counters.counted));
  env.stats.set("complete.fine_counts", static_cast<double>(tally.counters.fine_counted));
  env.stats.set("complete.exact_points", static_cast<double>(exact_.exact_points()));
  long double counted = 0.0L, uncounted = 0.0L;
  for (const SearchRegion& g : tally.left)
    (g.fair + g.unfair > 0.0L ? counted : uncounted) += g.measure - g.fair - g.unfair;
  env.stats.set("complete.undecided_in_counted_regions", static_cast<double>(counted / domain_points_));
  env.stats.set("complete.undecided_in_uncounted_regions", static_cast<double>(uncounted / domain_points_));
}

void NetworkRegions::model_box(const SearchRegion& r, const Eigen::VectorXd& combo, Eigen::VectorXd& lo,
                               Eigen::VectorXd& hi, Eigen::VectorXd* error) const {
  lo = Eigen::VectorXd::Zero(schema_.model_width());
  hi = lo;
  if (error != nullptr) *error = lo;
  for (int f = 0; f < schema_.size(); ++f) {
    const Feature& feat = schema_.feature(f);
    double rlo = r.lo(f), rhi = r.hi(f);
    if (is_protected_[static_cast<std::size_t>(f)]) {
      const auto k = static_cast<Eigen::Index>(std::find(prot_.begin(), prot_.end(), f) - prot_.begin());
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

bool NetworkRegions::discrete(const SearchRegion& r) const {
  for (int f = 0; f < schema_.size(); ++f)
    if (!is_protected_[static_cast<std::size_t>(f)] && !schema_.feature(f).integral() && r.lo(f) < r.hi(f))
      return false;
  return true;
}

bool NetworkRegions::enumerable(const SearchRegion& r) const {
  if (!discrete(r)) return false;
  const long double n = measure(r);
  if (n > kMaxEnumerated) return false;
  // --check re-proves what the bounds close, so the bounds close all they can.
  return n <= 1.0L || (!o_.check && static_cast<double>(n) * point_cost_ <=
                                        std::max(point_cost_, o_.enumerate_factor * bound_cost_));
}

Eigen::VectorXd NetworkRegions::raw_with(const Eigen::VectorXd& raw, int combo) const {
  return with_protected(raw, prot_, combos_[static_cast<std::size_t>(combo)]).col(0);
}

bool NetworkRegions::try_candidate(const Eigen::VectorXd& raw, int i, int j, RegionEvaluation& ev) const {
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
  if (auto w = replay_witness_raw(model_, schema_, prot_, ri, rj)) {
    ev.witnesses.push_back(*w);
    return true;
  }
  ++ev.counters.rejected;
  return false;
}

// Soundness of one region's verdict: a pair of combinations (i, j) is closed when the bounds of the
// network's output over the region for i and for j, and of their difference, leave no point where i
// is favoured and j is not; the region is certified when every pair is closed, falsified when one
// pair flips at every point, and otherwise split (or counted, when quantifying).
void NetworkRegions::evaluate(SearchRegion& r, RegionEvaluation& ev, bool fine) const {
  const int nc = static_cast<int>(combos_.size());
  if (narrowed_to_nobody(r, ev)) return;
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
  std::vector<bool> needed = combinations_of(r.open);
  if (enumerable(r)) {
    enumerate(r, needed, ev);
    return;
  }
  // Where the constraints are undecided the region is split on them first: the regions the
  // network is bounded on are then whole groups of people, which counting can measure.
  if (!settled) {
    if (const int f = constraint_split(r); f >= 0) {
      r.split = f;
      r.key = o_.quantify ? static_cast<double>(r.measure) : signals_.next_sequence();
      return;
    }
  }
  const std::vector<NetworkBounds> nb = bounds_of(r, needed);
  const DifferenceCache diff(*this, r, nb);
  const PairTriage pairs = triage(r, nb, diff, truth);
  const Eigen::VectorXd center = ((r.lo + r.hi) / 2.0).array().floor().matrix();
  if (pairs.everywhere >= 0) {
    ev.closed = true;
    ev.falsified = r.measure;
    ev.all_falsified = true;
    witnesses_everywhere(r, pairs.everywhere, center, ev);
    return;
  }
  if (o_.check) ev.counters.checked = recheck(r, pairs.open);
  if (pairs.open.empty() && (everyone || !o_.quantify)) {
    ev.closed = true;
    ev.certified = r.measure;
    ev.inexact = !everyone;  // a verdict needs no count: how many points are valid stays unknown
    return;
  }
  if (pairs.open.empty()) {  // fair wherever valid; split where the constraints change to count them
    r.open.clear();
    r.split = constraint_split(r);
    r.key = static_cast<double>(r.measure);
    return;
  }
  r.open = pairs.open;
  needed = combinations_of(r.open);
  if (signals_.wants_witnesses()) hunt_witness(r, nb, center, ev);
  // Counts are over the box's points: sound only where every point is a person for the same
  // combinations.
  // Affine over an integer box (every neuron stable; a linear model): counted exactly at once.
  if (o_.quantify && settled && everyone && discrete(r) && lattice_count(r, nb, needed, diff, ev)) return;
  if (o_.quantify && settled && everyone && count(r, nb, needed, diff, fine))
    ++(fine ? ev.counters.fine_counted : ev.counters.counted);
  if (discrete(r)) {
    r.unfair = std::max(r.unfair, static_cast<long double>(r.known.size()));
    if (closed_by_whole_counts(r, ev)) return;
  }
  r.split = pairs.flips_where_valid ? constraint_split(r) : split_feature(r, nb, needed);
  // Hunting a witness: last in, first out (depth first, as one stack), which finds the rare
  // witnesses of near-fair models soonest; quantifying: the largest undecided measure first.
  r.key = o_.quantify ? static_cast<double>(r.measure - r.fair - r.unfair) : signals_.next_sequence();
}

bool NetworkRegions::narrowed_to_nobody(SearchRegion& r, RegionEvaluation& ev) const {
  r.measure = measure(r);
  if (!valid_.constrained()) return false;
  // Derived features narrowed to what their sources reach: the points cut off are no people.
  const long double before = r.measure;
  if (!schema_.constraints().narrow(r.lo, r.hi, is_protected_)) {
    ev.closed = true;
    ev.invalid = before;
    return true;
  }
  r.measure = measure(r);
  ev.invalid = before - r.measure;
  return false;
}

std::vector<bool> NetworkRegions::combinations_of(const std::vector<int>& pairs) const {
  const int nc = static_cast<int>(combos_.size());
  std::vector<bool> needed(combos_.size(), false);
  for (int p : pairs) needed[static_cast<std::size_t>(p / nc)] = needed[static_cast<std::size_t>(p % nc)] = true;
  return needed;
}

std::vector<NetworkBounds> NetworkRegions::bounds_of(const SearchRegion& r, const std::vector<bool>& needed) const {
  std::vector<NetworkBounds> nb(combos_.size());
  for (std::size_t c = 0; c < combos_.size(); ++c) {
    if (!needed[c]) continue;
    Eigen::VectorXd lo, hi;
    model_box(r, combos_[c], lo, hi);
    nb[c] = bp_.bounds(lo, hi);
    if (nb[c].interrupted) throw Interrupted{};
  }
  return nb;
}

NetworkRegions::PairTriage NetworkRegions::triage(const SearchRegion& r, const std::vector<NetworkBounds>& nb,
                                                  const DifferenceCache& diff, const std::vector<Truth>& truth) const {
  const int nc = static_cast<int>(combos_.size());
  auto always = [&truth](int c) { return truth[static_cast<std::size_t>(c)] == Truth::Always; };
  const double t = net_.threshold;
  PairTriage out;
  for (int p : r.open) {
    const auto i = static_cast<std::size_t>(p / nc), j = static_cast<std::size_t>(p % nc);
    const Interval zi = nb[i].output(), zj = nb[j].output();
    if (zi.hi <= t || zj.lo > t) continue;
    if (zi.lo > t && zj.hi <= t) {
      if (always(p / nc) && always(p % nc)) {
        out.everywhere = p;
        break;
      }
      out.open.push_back(p);  // flips wherever both people exist: decided once that is known
      out.flips_where_valid = true;
      continue;
    }
    const Interval d = diff.get(i, j);  // z_i - z_j
    if (d.hi <= 0.0 || add_down(zi.lo, -d.hi) > t || add_up(zj.hi, d.hi) <= t) continue;
    out.open.push_back(p);
  }
  return out;
}

void NetworkRegions::witnesses_everywhere(const SearchRegion& r, int pair, const Eigen::VectorXd& center,
                                          RegionEvaluation& ev) const {
  const int nc = static_cast<int>(combos_.size());
  // Every point flips: the first few (in enumeration order) serve as witnesses.
  Eigen::VectorXd point = r.lo;
  for (int tries = 0; signals_.wants_witnesses() && tries < 4 * std::max(1, o_.max_witnesses) &&
                      static_cast<int>(ev.witnesses.size()) < std::max(1, o_.max_witnesses);
       ++tries) {
    try_candidate(tries == 0 ? center : point, pair / nc, pair % nc, ev);
    if (tries == 0) continue;
    bool wrapped = true;
    for (int f = 0; f < schema_.size() && wrapped; ++f) {
      if (is_protected_[static_cast<std::size_t>(f)] || !schema_.feature(f).integral() || r.lo(f) == r.hi(f)) continue;
      wrapped = point(f) >= r.hi(f);
      point(f) = wrapped ? r.lo(f) : point(f) + 1.0;
    }
    if (wrapped) break;
  }
}

void NetworkRegions::hunt_witness(SearchRegion& r, const std::vector<NetworkBounds>& nb, const Eigen::VectorXd& center,
                                  RegionEvaluation& ev) const {
  const int nc = static_cast<int>(combos_.size());
  for (int p : r.open) {
    if (try_candidate(center, p / nc, p % nc, ev)) {
      r.known.push_back(center);
      return;
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
      return;
    }
  }
}

bool NetworkRegions::closed_by_whole_counts(SearchRegion& r, RegionEvaluation& ev) const {
  if (r.fair <= 0.0L && r.unfair <= 0.0L) return false;
  // The counts' own rounding (their shares are doubles) is far below a point on boxes of under
  // 1e13 points; lower bounds on whole numbers then round up.
  const long double slack = r.measure * 1e-14L + 1e-9L;
  const long double fair = std::ceil(r.fair - slack), unfair = std::ceil(r.unfair - slack);
  if (slack >= 0.5L || fair + unfair < r.measure) {
    r.fair = std::max(r.fair, fair), r.unfair = std::max(r.unfair, unfair);
    return false;
  }
  // Unfair points without a witness anywhere yet: split on, to find one.
  if (unfair > 0.0L && r.known.empty() && signals_.witnesses_found.load(std::memory_order_relaxed) == 0) return false;
  // A small box that is partly unfair is split on to enumeration, which also says where its unfair
  // points are (the marginals); a count does not.
  constexpr long double kCountedAtLeast = 65536.0L;
  if (unfair > 0.0L && unfair < r.measure && r.measure < kCountedAtLeast) return false;
  ev.closed = true;
  ev.certified = r.measure - unfair;
  ev.falsified = unfair;
  ev.all_falsified = unfair == r.measure;
  return true;
}

bool NetworkRegions::split(const SearchRegion& r, int f, SearchRegion& a, SearchRegion& b) const {
  if (f < 0) return false;
  a = SearchRegion{r.lo, r.hi, r.open, {}, 0, -1};
  b = SearchRegion{r.lo, r.hi, r.open, {}, 0, -1};
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

std::int64_t NetworkRegions::recheck(const SearchRegion& r, const std::vector<int>& open) const {
  const int nc = static_cast<int>(combos_.size());
  auto is_in = [](const std::vector<int>& v, int p) { return std::find(v.begin(), v.end(), p) != v.end(); };
  std::int64_t n = 0;
  for (int i = 0; i < nc; ++i) {
    for (int j = i + 1; j < nc; ++j) {
      const int ij = i * nc + j, ji = j * nc + i;
      if (is_in(open, ij) || is_in(open, ji) || (!is_in(r.open, ij) && !is_in(r.open, ji))) continue;
      const CheckResult c = check_region(model_, schema_, prot_, r.lo, r.hi, combos_[static_cast<std::size_t>(i)],
                                         combos_[static_cast<std::size_t>(j)], 60.0);
      if (c != CheckResult::Unsat)
        throw InternalError(fmt::format("--check: Z3 answered {} on a region the bounds closed (from {})", to_string(c),
                                        schema_.display_row(raw_with(r.lo, i))));
      ++n;
    }
  }
  return n;
}

Eigen::VectorXd NetworkRegions::combo_diff(std::size_t i, std::size_t j, bool lower) const {
  Eigen::VectorXd d = Eigen::VectorXd::Zero(schema_.model_width());
  for (const Eigen::Index k : protected_inputs_) {  // shared inputs differ by exactly 0
    const double ilo = combo_lo_[i](k), ihi = combo_hi_[i](k), jlo = combo_lo_[j](k), jhi = combo_hi_[j](k);
    if (ilo == jlo && ihi == jhi && ilo == ihi) continue;
    d(k) = lower ? add_down(ilo, -jhi) : add_up(ihi, -jlo);
  }
  return d;
}

}  // namespace witness
