// The complete engine's regions for Dense/ReLU networks: a region is a box of the non-protected
// features with the ordered pairs of protected values still open; evaluating it bounds every copy
// of the network (one per protected value) and their differences, closes it when the bounds, an
// exact enumeration or a count decide it, and otherwise picks the feature to split next. Const and
// thread-free: RegionScheduler runs it on many workers.
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/german/GC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/german.toml");
//   const witness::FairnessProblem problem(model, schema, {"age"});
//   witness::CompleteSearchOptions o;
//   witness::SearchSignals signals(o.max_witnesses);
//   witness::NetworkRegions regions(problem, o, *witness::relu_network_of(model, nullptr), signals);
//   witness::RegionOutcome root = regions.begin(regions.whole(), nullptr);
//   // root.closed: decided at once; root.open: the root with its split feature and key
#pragma once

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "bounds/bound_propagator.h"
#include "bounds/linear_count.h"
#include "bounds/relu_network.h"
#include "fairness/complete/answer/quantify_answer.h"
#include "fairness/complete/network/exact_network.h"
#include "fairness/complete/options.h"
#include "fairness/complete/region.h"
#include "fairness/valid_combinations.h"
#include "model/model.h"

namespace witness {

class NetworkRegions final : public RegionEvaluator {
 public:
  NetworkRegions(const FairnessProblem& problem, const CompleteSearchOptions& o, ReluNetwork net,
                 const SearchSignals& signals);

  [[nodiscard]] const FairnessProblem& problem() const override { return problem_; }

  [[nodiscard]] long double domain_points() const override { return domain_points_; }
  [[nodiscard]] bool real_domain() const override { return real_domain_; }
  [[nodiscard]] SearchRegion whole() const override;
  [[nodiscard]] std::size_t max_open() const override { return o_.max_open_regions; }
  [[nodiscard]] RegionOutcome begin(SearchRegion whole, RegionScratch* scratch) const override;
  [[nodiscard]] RegionOutcome refine(const SearchRegion& r, RegionScratch* scratch) const override;
  [[nodiscard]] std::vector<PointVerdict> decide_points(const Eigen::MatrixXd& raw,
                                                        RegionScratch* scratch) const override;
  [[nodiscard]] std::string unreplayed(long double falsified) const override;
  void record_stats(Env& env, const SearchTally& tally) const override;
  // Threads one exact count of a large linear region may take (its outer sweeps); default 1.
  void set_count_threads(unsigned threads) { count_threads_ = std::max(1U, threads); }

 private:
  // What evaluating one region found.
  struct RegionEvaluation {
    bool closed = false;
    long double certified = 0.0L, falsified = 0.0L;  // closed regions: measures
    long double invalid = 0.0L;  // the measure of points found to be no person (cut off, or in a closed region)
    bool inexact = false;        // closed as certified without knowing how many of its points are valid
    bool all_falsified = false;
    std::vector<WitnessPair> witnesses;
    SearchCounters counters;
    std::vector<Eigen::VectorXd> unfair_points;             // enumerated: each falsified point, when few
    std::vector<std::vector<long double>> unfair_by_value;  // lattice counts: ClosedRegion's
  };

  // Bounds of z_i - z_j over a region, each unordered pair computed once (z_j - z_i is the negation).
  class DifferenceCache {
   public:
    DifferenceCache(const NetworkRegions& v, const SearchRegion& r, const std::vector<NetworkBounds>& nb)
        : v_(v), r_(r), nb_(nb) {}
    [[nodiscard]] Interval get(std::size_t i, std::size_t j) const;

   private:
    const NetworkRegions& v_;
    const SearchRegion& r_;
    const std::vector<NetworkBounds>& nb_;
    mutable std::map<std::pair<std::size_t, std::size_t>, Interval> cache_;
  };

  // r evaluated, into `out` as a closed part or an open region.
  void evaluate_into(SearchRegion r, RegionOutcome& out, bool fine) const;
  // Bounds, closure, enumeration or counting of one region; an open region leaves with its split
  // feature, its counted shares and its key.
  void evaluate(SearchRegion& r, RegionEvaluation& ev, bool fine) const;
  // The steps of evaluate, in order.
  // Measures the region and narrows its derived features; true (closed, all invalid) when nobody is left.
  bool narrowed_to_nobody(SearchRegion& r, RegionEvaluation& ev) const;
  // Which combinations the open pairs (i * combinations + j) compare.
  [[nodiscard]] std::vector<bool> combinations_of(const std::vector<int>& pairs) const;
  [[nodiscard]] std::vector<NetworkBounds> bounds_of(const SearchRegion& r, const std::vector<bool>& needed) const;
  struct PairTriage {
    std::vector<int> open;           // pairs the bounds cannot close
    int everywhere = -1;             // a pair that flips at every point of the region
    bool flips_where_valid = false;  // ... at every point where both its people exist
  };
  [[nodiscard]] PairTriage triage(const SearchRegion& r, const std::vector<NetworkBounds>& nb,
                                  const DifferenceCache& diff, const std::vector<Truth>& truth) const;
  // Witnesses of a region where `pair` flips at every point: its center, then points in order.
  void witnesses_everywhere(const SearchRegion& r, int pair, const Eigen::VectorXd& center, RegionEvaluation& ev) const;
  // One witness among the open pairs: the center, then the corner the bounds' coefficients point to.
  void hunt_witness(SearchRegion& r, const std::vector<NetworkBounds>& nb, const Eigen::VectorXd& center,
                    RegionEvaluation& ev) const;
  // Model-input bounds of the raw box r with the protected features set to `combo`. Inputs that a
  // normalisation computes are widened to contain their exact rational value.
  void model_box(const SearchRegion& r, const Eigen::VectorXd& combo, Eigen::VectorXd& lo, Eigen::VectorXd& hi,
                 Eigen::VectorXd* error = nullptr) const;
  [[nodiscard]] long double measure(const SearchRegion& r) const {
    return box_measure(schema_, is_protected_, r.lo, r.hi);
  }
  // Every non-protected feature is integral or fixed: the region is a finite set of points.
  [[nodiscard]] bool discrete(const SearchRegion& r) const;
  [[nodiscard]] bool enumerable(const SearchRegion& r) const;
  [[nodiscard]] Eigen::VectorXd raw_with(const Eigen::VectorXd& raw, int combo) const;
  // A replayed witness if raw (non-protected part) with combos i and j is one in double.
  bool try_candidate(const Eigen::VectorXd& raw, int i, int j, RegionEvaluation& ev) const;

  // Split choice (network_enumeration.cpp).
  [[nodiscard]] int split_feature(const SearchRegion& r, const std::vector<NetworkBounds>& nb,
                                  const std::vector<bool>& needed) const;
  // A feature's split score under `rule` (0 when the rule sees no reason to split it).
  [[nodiscard]] double feature_score(SplitRule rule, const SearchRegion& r, int f, const std::vector<NetworkBounds>& nb,
                                     const std::vector<bool>& needed) const;
  // The k features with the best split scores, best first. Gap falls back to Score where no neuron
  // is unstable, and both to the widest feature where the bounds show no gradient.
  [[nodiscard]] std::vector<int> split_candidates(const SearchRegion& r, const std::vector<NetworkBounds>& nb,
                                                  const std::vector<bool>& needed, std::size_t k) const;
  [[nodiscard]] int constraint_split(const SearchRegion& r) const { return valid_.widest_constrained(r.lo, r.hi); }
  // The two halves of r along feature f (false when a real feature cannot be halved any more).
  bool split(const SearchRegion& r, int f, SearchRegion& a, SearchRegion& b) const;

  // Decides every point of a finite region exactly: a batched forward pass in double, and exact
  // rationals for the points whose logit lies within the rounding bound of the threshold.
  void enumerate(const SearchRegion& r, const std::vector<bool>& needed, RegionEvaluation& ev) const;
  // The rounding bounds of the model inputs over r (every protected value's included).
  [[nodiscard]] Eigen::VectorXd input_errors(const SearchRegion& r) const;
  // Each needed combination's exact label at each point (column) of block, and which combinations
  // make a valid person there (`truth`: what is already known over the whole block);
  // `interruptible`: throws Interrupted once the stop signal is up.
  void label_block(const Eigen::MatrixXd& block, const Eigen::VectorXd& in_err, const std::vector<bool>& needed,
                   const std::vector<Truth>& truth, std::vector<std::vector<char>>& label,
                   std::vector<std::vector<char>>& ok, bool interruptible) const;

  // Counting (network_count.cpp).
  // The contribution of each feature to the linear function coef . x (x = model inputs of the
  // region's raw values with the protected features at `combo`), exact up to each term's error.
  void linear_terms(const SearchRegion& r, int combo, const Eigen::VectorXd& coef,
                    std::vector<LinearTerm>& terms) const;
  // Feature f's term of that function (none when its coefficient is 0), appended to terms; `raw`
  // holds the protected features' values.
  void feature_term(const SearchRegion& r, const Eigen::VectorXd& raw, const Eigen::VectorXd& coef, int f,
                    std::vector<LinearTerm>& terms) const;
  // Where every copy is affine over an integer region: its points counted exactly by kind (sums
  // of one term per feature, met in the middle; network_lattice_count.cpp). False when the region
  // is not affine, too large, or too many points lie within rounding of a boundary.
  bool lattice_count(SearchRegion& r, const std::vector<NetworkBounds>& nb, const std::vector<bool>& needed,
                     const DifferenceCache& diff, RegionEvaluation& ev) const;
  // Bounds of z_i - z_j over r from the copies' linear bounds, L_i - U_j <= z_i - z_j <= U_i - L_j,
  // taken as one linear function of the shared inputs (their terms cancel where the copies agree).
  [[nodiscard]] Interval linear_difference(const SearchRegion& r, std::size_t i, std::size_t j, const NetworkBounds& a,
                                           const NetworkBounds& b) const;
  // A bound on U - L over r for copy `combo`'s linear bounds b, rounding and both errors included.
  [[nodiscard]] double linear_gap(const SearchRegion& r, int combo, const NetworkBounds& b) const;
  // Mean and variance of a sum of independent terms (each uniform over its values).
  static void moments(const std::vector<LinearTerm>& terms, double constant, double& mean, double& var);
  // The share of the region that counting would decide, under a normal approximation of L and U
  // (only to decide whether counting is worth its cost; never used as a result).
  static double estimate_decided(const std::vector<LinearTerm>& lt, double lc, const std::vector<LinearTerm>& ut,
                                 double uc, double high_at, double low_at, double flip_lo, double flip_hi);
  // Counts, without enumerating, lower bounds on the points of the region that every protected
  // value sends to the same side of the threshold (fair) and those that some protected change
  // flips (unfair), from the reference copy's linear bounds and the copies' difference bounds.
  // False when the count was skipped (hopeless, or no linear bounds).
  bool count(SearchRegion& r, const std::vector<NetworkBounds>& nb, const std::vector<bool>& needed,
             const DifferenceCache& diff, bool fine) const;

  // An integer region whose counted lower bounds, rounded up to whole points, add up to all its
  // points: closed with those counts (exact). Otherwise the rounded bounds are kept.
  bool closed_by_whole_counts(SearchRegion& r, RegionEvaluation& ev) const;

  // --check: every unordered pair that this region closes (both directions excluded, one of them
  // here) is re-proved by Z3 on the whole region, independently of the bounds.
  std::int64_t recheck(const SearchRegion& r, const std::vector<int>& open) const;
  // Bounds of x(combo i) - x(combo j) on the model inputs (zero outside the protected ones, and
  // exactly zero where both are the same exact value).
  [[nodiscard]] Eigen::VectorXd combo_diff(std::size_t i, std::size_t j, bool lower) const;

  const FairnessProblem& problem_;
  const Model& model_;
  const Schema& schema_;
  const std::vector<int>& prot_;  // the protected features with their proxies (problem_'s)
  const CompleteSearchOptions& o_;
  const SearchSignals& signals_;
  ReluNetwork net_;
  BoundPropagator bp_;
  BoundedForward forward_;
  ExactNetwork exact_;
  std::vector<Eigen::VectorXd> combos_;
  std::vector<bool> is_protected_;
  ValidCombinations valid_;  // the schema's constraints per protected combination
  std::vector<Eigen::VectorXd> combo_lo_, combo_hi_;
  std::vector<Eigen::Index> protected_inputs_;  // model inputs of the protected features
  long double domain_points_ = 1.0L;            // the measure of the whole domain
  double point_cost_ = 0.0, bound_cost_ = 0.0;  // multiply-adds of a forward pass, of one bound computation
  SplitRule split_ = SplitRule::Score;          // o_.split with Auto resolved
  bool real_domain_ = false;                    // some non-protected feature is real
  unsigned count_threads_ = 1;
};

}  // namespace witness
