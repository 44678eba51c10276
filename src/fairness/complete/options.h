// What the complete verifier is asked (the options of every part of fairness/complete/, which all
// read them and none of which runs the whole search), how a region picks its split, and the progress
// it reports. The driver (complete_search.h) runs the search; this header is below every part.
//
//   witness::CompleteSearchOptions o;  // the question itself is a FairnessProblem (fairness/problem.h)
//   o.quantify = true;                   // measure the whole domain
//   o.split = witness::parse_split_rule("gap");
//   o.progress = [](const witness::CompleteProgress& p) { (void)p.certified; };
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/choice.h"

namespace witness {

struct SearchState;  // search_state.h

// How a region picks the feature it splits: Score = the largest |coefficient| x width in the
// output's symbolic bounds (summed over the copies); Gap = the feature that most narrows the
// unstable neurons that loosen the output's bounds; Widest = the feature with most values; Auto =
// Gap when quantifying (it closes more of the domain), Score when hunting a witness (it finds one
// sooner).
enum class SplitRule : std::uint8_t { Auto, Score, Widest, Gap };
inline constexpr Choices<SplitRule, 4> kSplitRules{
    {{{SplitRule::Auto, "auto"}, {SplitRule::Score, "score"}, {SplitRule::Gap, "gap"}, {SplitRule::Widest, "widest"}}},
    "rule"};
SplitRule parse_split_rule(const std::string& name);  // kSplitRules, InputError naming --split

struct CompleteProgress {
  double certified = 0.0, falsified = 0.0;  // shares of the domain so far (sound at every moment)
  std::int64_t leaves = 0;
  std::int64_t open_regions = 0;  // queued or being refined now
  double seconds = 0.0;
  // The same as measures of points (a sub-problem's, for adding up parts): certified and falsified
  // (counted in open regions included), and found to be no person.
  long double certified_points = 0.0L, falsified_points = 0.0L, invalid_points = 0.0L;
};

// Seconds between checkpoints unless told otherwise (--checkpoint-every).
inline constexpr double kCheckpointSeconds = 10.0;

struct CompleteSearchOptions {
  int max_witnesses = 1;  // stop after this many replayed witnesses...
  // ...unless measuring the whole domain: open regions are then refined largest undecided share
  // first, so a time limit leaves sound certified/falsified shares at every moment.
  bool quantify = false;
  bool check = false;  // re-prove every region closed by bounds with Z3 (slow; for tests)
  SplitRule split = SplitRule::Auto;
  // auto_search: falsification's budget in tests, beside complete_search or before dual_search
  // (near-fair models: bounds close little, but witnesses sit next to the decision boundary);
  // 0: falsify_tests_for(model).
  long long falsify_tests = 0;
  // A region is enumerated point by point (exactly) when that costs at most this many times one
  // bound computation; 0 enumerates only single points.
  double enumerate_factor = 16.0;
  int max_regions = 1000;  // quantify: falsified/undecided regions kept for the report
  // quantify: seconds for estimating the undecided share from points drawn in the open regions
  // (share_estimate.h); the search leaves them of its time limit (at most a twentieth). 0: none.
  double estimate_seconds = 1.0;
  double confidence = 0.95;  // of the estimate's interval
  // Hidden layers' bounds: by back-substitution or forward symbolic propagation; by default the
  // cheaper for the network's shape (forward for wide, deep networks).
  enum class HiddenBounds : std::uint8_t { Auto, BackSubstitution, Forward };
  HiddenBounds hidden_bounds = HiddenBounds::Auto;
  std::size_t max_open_regions = std::size_t{1} << 21;  // queue cap; beyond it the least undecided stay open
  // Sums per half of an exact count of a linear model's region (16 bytes each, two halves per
  // worker); the rest of the features are swept outer. Smaller only to test the outer sweeps.
  std::size_t lattice_half_sums = std::size_t{1} << 23;
  const std::atomic<bool>* cancel = nullptr;  // stop early (verdict inconclusive) when it becomes true
  // Called from one worker about four times a second (e.g. a progress line on a terminal).
  std::function<void(const CompleteProgress&)> progress;
  // The search saved to this file every checkpoint_seconds and at the end (search_state.h), and
  // continued from `resume`'s saved state instead of the whole domain.
  std::string checkpoint;
  double checkpoint_seconds = kCheckpointSeconds;
  std::string resume;
  // Or continue from this state; with answer_only, answer from it without searching (the joined
  // results of sub-problems).
  std::shared_ptr<const SearchState> start;
  bool answer_only = false;
};

}  // namespace witness
