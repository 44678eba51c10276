// What a branch-and-bound engine is made of: the region it refines, what refining one found, and
// the evaluator that decides regions without threads of its own. The scheduler (region_scheduler.h)
// runs one evaluator on many threads; the network and tree engines are two evaluators.
//
//   #include "fairness/complete/network/network_regions.h"
//   witness::Model model = witness::load_model("benchmarks/fairify/models/german/GC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/german.toml");
//   const witness::FairnessProblem problem(model, schema, {"age"});
//   witness::CompleteSearchOptions o;
//   witness::SearchSignals signals(o.max_witnesses);  // stop flag, witnesses found, creation order
//   witness::NetworkRegions regions(problem, o, *witness::relu_network_of(model, nullptr), signals);
//   witness::RegionOutcome first = regions.begin(regions.whole(), nullptr);  // closed parts, open children
//   for (const witness::SearchRegion& r : first.open) witness::RegionOutcome next = regions.refine(r, nullptr);
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/env.h"
#include "fairness/problem.h"
#include "fairness/verdict.h"

namespace witness {

// A box of the non-protected raw features still to be decided.
struct SearchRegion {
  Eigen::VectorXd lo, hi;              // raw bounds per schema feature (protected entries unused)
  std::vector<int> open;               // network engine: ordered pairs i * C + j (z_i > t >= z_j) not yet excluded
  std::vector<Eigen::VectorXd> known;  // raw rows inside that are replayed witnesses
  int depth = 0;
  int split = -1;                          // network engine: the feature to split next
  long double measure = 0.0L;              // integer points times the real features' length shares
  long double fair = 0.0L, unfair = 0.0L;  // lower bounds from counting (same unit)
  double key = 0.0;                        // larger keys are refined first
  bool recount = false;  // counted coarsely where the bounds are near-linear: count finely before splitting
};

// A box decided to the last point: `certified` + `falsified` of its `measure` (the rest no person).
struct ClosedRegion {
  Eigen::VectorXd lo, hi;
  long double measure = 0.0L, certified = 0.0L, falsified = 0.0L;
  bool all_falsified = false;                  // every point of it
  bool inexact = false;                        // certified without knowing how many of its points are people
  std::vector<Eigen::VectorXd> unfair_points;  // enumerated: each falsified point, when few
  // Counted exactly: per feature, the falsified points at each value lo(f), lo(f) + 1, ..., hi(f)
  // (empty when not known; the protected features' entries are empty).
  std::vector<std::vector<long double>> unfair_by_value;
  // Where non-empty for feature f, unfair_by_value[f][k] counts a run of values instead: those up
  // to unfair_run_ends[f][k] (from the previous run's end + 1; the first from lo(f)), which the
  // model cannot tell apart, so that each holds an equal share.
  std::vector<std::vector<double>> unfair_run_ends;
};

struct SearchCounters {
  std::int64_t regions = 0;  // regions evaluated
  std::int64_t rejected = 0, checked = 0, enumerated = 0, counted = 0, fine_counted = 0, exact_only = 0;
  SearchCounters& operator+=(const SearchCounters& o) {
    regions += o.regions, rejected += o.rejected, checked += o.checked, enumerated += o.enumerated;
    counted += o.counted, fine_counted += o.fine_counted, exact_only += o.exact_only;
    return *this;
  }
};

// What refining one region found.
struct RegionOutcome {
  std::vector<SearchRegion> open;    // to refine further (keys set)
  std::vector<ClosedRegion> closed;  // decided exactly
  long double invalid = 0.0L;        // the measure found to be no person (cut off, or in a closed part)
  std::vector<WitnessPair> witnesses;
  SearchCounters counters;
  bool stuck = false;  // the region cannot be split any further (real features at the last bit): open for good
};

// Thrown by an evaluation that the stop flag cut short: the region stays open (undecided).
struct Interrupted {};

// What the scheduler tells the evaluators while they run.
class SearchSignals {
 public:
  explicit SearchSignals(int max_witnesses) : max_witnesses_(std::max(1, max_witnesses)) {}
  std::atomic<bool> stop{false};  // long evaluations watch it and throw Interrupted
  std::atomic<int> witnesses_found{0};

  [[nodiscard]] int max_witnesses() const { return max_witnesses_; }
  [[nodiscard]] bool wants_witnesses() const {
    return witnesses_found.load(std::memory_order_relaxed) < max_witnesses_;
  }
  // Keys in order of creation (witness hunting refines the newest region first).
  [[nodiscard]] double next_sequence() const {
    return static_cast<double>(sequence_.fetch_add(1, std::memory_order_relaxed));
  }

 private:
  int max_witnesses_;
  mutable std::atomic<std::int64_t> sequence_{0};
};

// Per-worker mutable state of an evaluator (e.g. an Evaluator's buffers).
struct RegionScratch {
  virtual ~RegionScratch() = default;
};

struct SearchTally;

// What one point of the non-protected features is: no change of its protected values flips the
// label (Fair), some change does (Unfair), or no protected value makes it a valid person.
enum class PointVerdict : std::uint8_t { Fair, Unfair, NoPerson };

// Decides regions; const and thread-free, so that any number of workers share one.
class RegionEvaluator {
 public:
  virtual ~RegionEvaluator() = default;
  [[nodiscard]] virtual const FairnessProblem& problem() const = 0;  // the question its regions divide
  [[nodiscard]] virtual long double domain_points() const = 0;       // the whole domain's measure
  [[nodiscard]] virtual bool real_domain() const = 0;                // some non-protected feature is real
  [[nodiscard]] virtual SearchRegion whole() const = 0;              // the domain, not yet evaluated
  [[nodiscard]] virtual std::size_t max_open() const = 0;            // open regions kept at most
  // Every region closes after finitely many refinements: a full queue is then drained, not cut.
  [[nodiscard]] virtual bool closes_every_region() const { return false; }
  [[nodiscard]] virtual std::unique_ptr<RegionScratch> scratch() const { return nullptr; }
  // The whole domain evaluated: closed, or open with its key.
  [[nodiscard]] virtual RegionOutcome begin(SearchRegion whole, RegionScratch* scratch) const = 0;
  // An open region refined: its parts, each closed or open with its key.
  [[nodiscard]] virtual RegionOutcome refine(const SearchRegion& r, RegionScratch* scratch) const = 0;
  // Each point (a column of raw values; protected entries ignored) decided exactly, as
  // enumeration decides it: for estimates from points drawn in the regions left open.
  [[nodiscard]] virtual std::vector<PointVerdict> decide_points(const Eigen::MatrixXd& raw,
                                                                RegionScratch* scratch) const = 0;
  // Why a finished run with falsified points has no replayed witness.
  [[nodiscard]] virtual std::string unreplayed(long double falsified) const = 0;
  // Engine statistics (env.stats) at the end.
  virtual void record_stats(Env& env, const SearchTally& tally) const = 0;
};

}  // namespace witness
