// Runs one RegionEvaluator on worker threads: a max-heap of open regions per worker (largest key
// first), idle workers steal the best region of the others (witness hunting instead goes in
// rounds and reports the witnesses that come first depth first, so that its answer depends neither
// on thread timing nor on the number of threads), a watchdog turns the time limit and the cancel
// flag into the stop signal, the queues are kept within the evaluator's cap, and the closed parts
// are tallied into the answer.
//
//   #include "fairness/complete/network/network_regions.h"
//   witness::Model model = witness::load_model("benchmarks/fairify/models/german/GC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/german.toml");
//   const witness::FairnessProblem problem(model, schema, {"age"});
//   witness::CompleteSearchOptions o;
//   witness::SearchSignals signals(o.max_witnesses);
//   witness::NetworkRegions regions(problem, o, *witness::relu_network_of(model, nullptr), signals);
//   witness::Env env;
//   env.start();
//   witness::FairnessResult r = witness::RegionScheduler(regions, signals, o, env).run();
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <shared_mutex>
#include <vector>

#include "core/env.h"
#include "domain/schema.h"
#include "fairness/complete/answer/quantify_answer.h"
#include "fairness/complete/answer/search_tally.h"
#include "fairness/complete/options.h"
#include "fairness/complete/region.h"
#include "fairness/complete/search/search_state.h"
#include "model/model.h"

namespace witness {

class RegionScheduler {
 public:
  // The schema and protected features are the evaluator's problem's.
  RegionScheduler(const RegionEvaluator& regions, SearchSignals& signals, const CompleteSearchOptions& o, Env& env);
  // Searches the whole domain (or goes on from `start`: a checkpoint, a sub-problem) until every
  // region is closed, a witness ends a verdict search, or the time runs out; the state it ends in.
  SearchState search(std::optional<SearchState> start = std::nullopt);
  // During search(), a consistent snapshot goes to `save` every `seconds`, and once at the end.
  void save_every(double seconds, std::function<void(const SearchState&)> save);
  FairnessResult run() { return answer(search()); }
  // search() stops (not interrupted) once this many regions are open: a frontier to split.
  void stop_when_open(std::size_t regions) { stop_open_ = regions; }
  // search() stops (interrupted) once Env's clock reads this many seconds: a slice of the time limit.
  void stop_at(double elapsed_seconds) {
    search_deadline_ = search_deadline_ > 0.0 ? std::min(search_deadline_, elapsed_seconds) : elapsed_seconds;
  }
  // The verdict, shares and regions of a state (one search's, or sub-problems' joined).
  FairnessResult answer(SearchState state) const;

 private:
  struct Queue {
    std::mutex mutex;
    std::vector<SearchRegion> heap;  // max-heap on key (min-heap while draining)
    bool draining = false;
    std::size_t drained = 0;  // draining ends at this many regions
  };

  void push(unsigned id, SearchRegion r);
  bool take_from(Queue& q, SearchRegion& r);
  bool pop(unsigned id, SearchRegion& r);
  // Applies what a worker found: the popped parent (its counted shares leave the open totals) is
  // replaced by its parts; `stuck_parent`: the parent stays open for good instead.
  void commit(unsigned id, const SearchRegion* parent, RegionOutcome out, bool stuck_parent, RegionScratch* scratch);
  void evict(unsigned id, RegionScratch* scratch);
  void work(unsigned id, RegionScratch* scratch);
  // Witness hunting on several threads: rounds of one region per thread, the largest keys of all
  // queues (the first in depth-first order), refined in parallel and committed in the order taken
  // (children keyed anew, so that keys stay that order). A witness found ahead of that order waits
  // until no open region comes before it, so the answer is the one a single thread finds: the same
  // person for any --threads.
  void work_in_rounds(RegionScratch* first_scratch);
  // The next round's regions (at most one per slot, each keyed above `after`); false when none is
  // left or the search stops.
  bool take_round(std::vector<std::optional<SearchRegion>>& batch, double after);
  void rekey(std::vector<SearchRegion>& children) const;
  // Witnesses of one round's slots, ranked by the depth-first place of the region they came from.
  void rank_witnesses(std::vector<RegionOutcome>& outs);
  // Moves the witnesses that no open region precedes into the tally (stopping the search once it has
  // enough); the rank below which no region needs refining (-inf while too few are known).
  double confirm_witnesses(bool final);
  [[nodiscard]] double first_open_key();
  void report_progress(std::chrono::steady_clock::time_point& last);
  [[nodiscard]] bool should_stop() const;
  void restore(SearchState start);
  // Everything known now: closed shares, open regions (queued, in flight, stuck), answer parts.
  [[nodiscard]] SearchState snapshot();

  const RegionEvaluator& regions_;
  SearchSignals& signals_;
  const Schema& schema_;
  const CompleteSearchOptions& o_;
  Env& env_;
  std::vector<std::unique_ptr<Queue>> queues_;
  std::atomic<long> pending_{0};  // regions queued or being refined
  std::atomic<long> drains_{0};   // times a full queue began draining (closes_every_region)
  // Workers hold it shared from taking a region to committing what it became, so that a snapshot
  // (holding it alone) sees every region exactly once: queued, in flight or closed.
  std::shared_mutex frontier_mutex_;
  std::vector<std::optional<SearchRegion>> in_flight_;  // per worker
  std::size_t stop_open_ = 0;
  double search_deadline_ = 0.0;  // quantify: the search stops here, the estimate takes the rest
  int part_ = 0, parts_ = 1;      // of the state searched from, kept in every state saved
  std::string header_;
  double save_seconds_ = 0.0;
  std::function<void(const SearchState&)> save_;
  std::mutex idle_mutex_;
  std::condition_variable idle_cv_;

  std::mutex mutex_;  // guards everything below
  SearchTally tally_;
  std::mt19937_64 rng_;                   // the evicted regions' sample
  std::optional<QuantifyAnswer> answer_;  // quantify: regions and marginals
  std::exception_ptr error_;
  // Witness hunting in rounds: witnesses found ahead of the depth-first order, with the rank that
  // places them in it (larger: earlier; within a region, in the order found).
  struct RankedWitness {
    double rank;
    std::size_t index;
    WitnessPair pair;
  };
  std::vector<RankedWitness> ahead_;
  // ahead_ in depth-first order, without what `before` (or an earlier one) holds, to `before`'s
  // size + what fits under the witness count.
  [[nodiscard]] std::vector<RankedWitness> first_ahead(const std::vector<WitnessPair>& before) const;
};

// When a search under `time_limit` (seconds, 0: none) stops refining regions: earlier than the limit
// when quantifying, so that the estimate of the undecided share is drawn within it (0: no deadline).
[[nodiscard]] double refine_deadline(const CompleteSearchOptions& o, double time_limit);

// A search by `regions` as the options say: continued from o.resume's saved state when given,
// saved to o.checkpoint as it goes (InputError before the search when that file cannot be written).
// The search's first regions dealt into `parts` states (split_complete_search).
std::vector<SearchState> split_search(const RegionEvaluator& regions, SearchSignals& signals,
                                      const CompleteSearchOptions& o, int parts, Env& env);

FairnessResult schedule_search(const RegionEvaluator& regions, SearchSignals& signals, const CompleteSearchOptions& o,
                               Env& env);

}  // namespace witness
