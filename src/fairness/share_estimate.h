// How unfair, when the sound bounds leave a gap: points drawn uniformly from the regions still
// open (a region with probability proportional to its measure, then uniformly inside it), each
// decided exactly by the evaluator, estimate the falsified share of the open mass; a
// Clopper-Pearson interval on it, added to the closed mass and clipped to the sound bounds, is the
// estimate's interval. Sampling stops at the target half-width, the sample cap or the deadline.
//
//   #include "fairness/network_regions.h"
//   witness::Model model = witness::load_model("benchmarks/fairify/models/german/GC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/german.toml");
//   witness::CompleteSearchOptions o;  o.protected_features = {schema.feature_index("age")};
//   witness::SearchSignals signals(o.max_witnesses);
//   witness::NetworkRegions regions(model, schema, o, *witness::relu_network_of(model, nullptr), signals);
//   witness::SoundMass mass{0.0L, regions.domain_points(), regions.domain_points()};  // all undecided
//   witness::Env env;  witness::EstimateOptions eo;  eo.seconds = 0.5;
//   auto e = witness::estimate_falsified_share(regions, schema, {regions.whole()}, mass, eo, env);
//   // e->lo <= e->share <= e->hi at eo.confidence
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/env.h"
#include "domain/schema.h"
#include "fairness/search_region.h"
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

// The estimate of the falsified share of `valid`, from points drawn in `open` (the regions left
// open; their counted lower bounds are included in mass.falsified and the fair ones excluded from
// mass.undecided). Undecided measure outside `open` (regions evicted from a full queue) cannot be
// drawn from: it widens the interval by its whole extent. None when nothing is undecided.
[[nodiscard]] std::optional<ShareEstimate> estimate_falsified_share(const RegionEvaluator& regions,
                                                                    const Schema& schema,
                                                                    const std::vector<SearchRegion>& open,
                                                                    const SoundMass& mass, const EstimateOptions& o,
                                                                    Env& env);

// Clopper-Pearson bounds on a binomial proportion: k successes in n draws, two-sided at `confidence`.
void clopper_pearson(std::int64_t k, std::int64_t n, double confidence, double& lo, double& hi);

}  // namespace witness
