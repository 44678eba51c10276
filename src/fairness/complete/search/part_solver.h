// One sub-problem (a saved search state) solved on its own thread for a slice of time, while the
// calling thread stays free (an MPI rank's thread listens for messages meanwhile), and what such
// parts have decided so far, as measures of points that add up over the parts of one run.
//
//   #include "fairness/complete/network/network_regions.h"
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/german.toml");
//   witness::Model model = witness::load_model("benchmarks/fairify/models/german/GC1.h5");
//   const witness::FairnessProblem problem(model, schema, {"age"});
//   witness::CompleteSearchOptions o;  witness::SearchSignals signals(o.max_witnesses);
//   witness::NetworkRegions regions(problem, o, *witness::relu_network_of(model, nullptr), signals);
//   witness::Env env;  witness::PartSolver solver(regions, signals, o, env);
//   solver.start(witness::split_search(regions, signals, o, 1, env).front(), 2.0);  // at most 2 s
//   while (!solver.done()) witness::PartProgress now = solver.progress();  // the caller listens meanwhile
//   witness::PartProgress closed = witness::PartProgress::of(solver.finish().tally);
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/env.h"
#include "domain/schema.h"
#include "fairness/complete/options.h"
#include "fairness/complete/search/region_scheduler.h"
#include "fairness/complete/search/search_state.h"

namespace witness {

// What a part has decided so far, as measures: the parts' add up to the run's progress.
struct PartProgress {
  long double certified = 0.0L, falsified = 0.0L, invalid = 0.0L;  // counted in open regions included
  std::int64_t leaves = 0;

  static PartProgress of(const SearchTally& t);
  static PartProgress of(const CompleteProgress& p);
  PartProgress& operator+=(const PartProgress& o);
  // As a message between ranks, and back; malformed text (never sent by witness) decides nothing.
  [[nodiscard]] std::string text() const;
  static PartProgress parse(const std::string& text);
};

class PartSolver {
 public:
  PartSolver(const RegionEvaluator& regions, SearchSignals& signals, const CompleteSearchOptions& o, Env& env);
  PartSolver(const PartSolver&) = delete;
  PartSolver& operator=(const PartSolver&) = delete;
  ~PartSolver();

  // Solves `part` for at most `seconds` (0: until it is closed or the time limit).
  void start(SearchState part, double seconds);
  [[nodiscard]] bool busy() const { return thread_.joinable(); }
  [[nodiscard]] bool done() const { return done_.load(); }
  // What the part being solved has decided so far (its state's shares until the search reports).
  [[nodiscard]] PartProgress progress() const;
  // The part's open regions at the search's last report (what moving it back would carry).
  [[nodiscard]] std::int64_t open_regions() const { return open_regions_.load(); }
  void cancel() { cancel_ = true; }
  // The finished part's state (rethrows what the search threw).
  SearchState finish();

 private:
  const CompleteSearchOptions& own_options();
  const RegionEvaluator& regions_;
  SearchSignals& signals_;
  const CompleteSearchOptions& o_;
  Env& env_;
  CompleteSearchOptions own_;
  std::atomic<bool> cancel_{false}, done_{false};
  std::atomic<std::int64_t> open_regions_{0};
  std::thread thread_;
  std::optional<SearchState> result_;
  std::exception_ptr error_;
  mutable std::mutex progress_mutex_;
  PartProgress progress_;
};

}  // namespace witness
