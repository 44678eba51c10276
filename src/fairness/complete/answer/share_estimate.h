// How unfair, when the sound bounds leave a gap: points drawn uniformly from the regions still
// open (a region with probability proportional to its measure, then uniformly inside it), each
// decided exactly by the evaluator, estimate the falsified share of the open mass; a
// Clopper-Pearson interval on it, added to the closed mass and clipped to the sound bounds, is the
// estimate's interval. Sampling stops at the target half-width, the sample cap or the deadline.
//
//   #include "fairness/complete/network/network_regions.h"
//   witness::Model model = witness::load_model("benchmarks/fairify/models/german/GC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/german.toml");
//   const witness::FairnessProblem problem(model, schema, {"age"});
//   witness::CompleteSearchOptions o;  witness::SearchSignals signals(o.max_witnesses);
//   witness::NetworkRegions regions(problem, o, *witness::relu_network_of(model, nullptr), signals);
//   witness::SoundMass mass{0.0L, regions.domain_points(), regions.domain_points()};  // all undecided
//   witness::Env env;  witness::EstimateOptions eo;  eo.seconds = 0.5;
//   auto e = witness::estimate_falsified_share(regions, schema, {regions.whole()}, {}, mass, eo, env);
//   // e->lo <= e->share <= e->hi at eo.confidence
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "core/env.h"
#include "domain/schema.h"
#include "fairness/complete/region.h"
#include "fairness/verdict.h"

namespace witness {

// What the sound bounds say, in measure units: falsified points (closed regions, and counted in
// open ones), the undecided measure, and the valid points the shares are of.
struct SoundMass {
  long double falsified = 0.0L, undecided = 0.0L, valid = 0.0L;
};

struct EstimateOptions {
  double confidence = 0.95;
  double target_half_width = 5e-4;  // of the share: sampling stops once the interval is this narrow
  std::int64_t max_samples = 1'000'000;
  std::int64_t min_samples = 200;  // drawn even past the deadline, so that an estimate always exists
  double seconds = 1.0;            // sampling time, after min_samples
  std::uint64_t seed = 0;
};

// Points drawn from the regions a full queue dropped, as they are dropped: a Poisson sample at
// `rate` points per unit of measure, so that, given how many there are, they are uniform over all
// the evicted measure. Past `cap` points each is kept with probability 1/2 and the rate halves,
// which keeps that property; memory and decisions stay bounded however many regions go.
struct EvictedSample {
  long double measure = 0.0L, fair = 0.0L, unfair = 0.0L;  // of the evicted regions, as counted
  long double rate = 0.0L;                                 // 0: nothing evicted yet
  std::int64_t samples = 0, unfair_samples = 0;
  std::int64_t cap = 16384;

  // Takes in a batch of evicted regions; how many points to draw from it (by measure) at rate.
  [[nodiscard]] std::int64_t plan(const std::vector<SearchRegion>& batch, std::mt19937_64& rng);
  // Adds points drawn at `drawn_rate`, thinned to the rate now (it may have fallen meanwhile).
  void add(long double drawn_rate, std::int64_t drawn, std::int64_t unfair_drawn, std::mt19937_64& rng);
  // Another search's sample (a sub-problem's), both thinned to the lower rate.
  void merge(const EvictedSample& other, std::mt19937_64& rng);

 private:
  void thin(long double to_rate, std::mt19937_64& rng);
};

// Draws n points from `from` (each region with probability proportional to its measure, then
// uniformly inside it) and returns how many of them are unfair.
[[nodiscard]] std::int64_t unfair_among_drawn(const RegionEvaluator& regions, const Schema& schema,
                                              const std::vector<SearchRegion>& from, std::int64_t n, std::uint64_t seed,
                                              RegionScratch* scratch);

// The estimate of the falsified share of `valid`, from points drawn in `open` (the regions left
// open; their counted lower bounds are included in mass.falsified and the fair ones excluded from
// mass.undecided) and from `evicted` (regions dropped from a full queue, a second stratum; each
// stratum's interval then at half the error rate). Undecided measure in neither cannot be drawn
// from: it widens the interval by its whole extent. None when nothing is undecided.
[[nodiscard]] std::optional<ShareEstimate> estimate_falsified_share(const RegionEvaluator& regions,
                                                                    const Schema& schema,
                                                                    const std::vector<SearchRegion>& open,
                                                                    const EvictedSample& evicted, const SoundMass& mass,
                                                                    const EstimateOptions& o, Env& env);

// Clopper-Pearson bounds on a binomial proportion: k successes in n draws, two-sided at `confidence`.
void clopper_pearson(std::int64_t k, std::int64_t n, double confidence, double& lo, double& hi);

}  // namespace witness
