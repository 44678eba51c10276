#include "fairness/complete/answer/search_tally.h"

#include <fmt/format.h>

#include <algorithm>

#include "fairness/complete/answer/share_estimate.h"

namespace witness {

FairnessResult search_result(SearchTally tally, const RegionEvaluator& regions, const Schema& schema,
                             std::optional<QuantifyAnswer>& answer, const CompleteSearchOptions& o, Env& env) {
  FairnessResult r;
  r.engine = "complete";
  // Whatever is still open (queued, evicted, split to the last bit) is undecided.
  std::vector<SearchRegion>& left = tally.left;
  const bool finished = left.empty() && tally.evicted == 0;
  const bool real_domain = regions.real_domain();
  if (answer) {
    for (const SearchRegion& g : left) answer->add_marginal(g.lo, g.hi, g.unfair);
    r.marginals = answer->marginals(tally.falsified + tally.open_unfair);
    // Only the open regions that can make the report (millions may be open at a time limit).
    const std::size_t keep = std::min(left.size(), 4 * static_cast<std::size_t>(std::max(1, o.max_regions)));
    auto known = [](const SearchRegion& g) { return g.measure - g.fair; };  // falsified + undecided
    std::nth_element(left.begin(), left.begin() + static_cast<std::ptrdiff_t>(keep), left.end(),
                     [&known](const SearchRegion& a, const SearchRegion& b) { return known(a) > known(b); });
    for (std::size_t i = 0; i < keep; ++i)
      answer->add_report(left[i].lo, left[i].hi, left[i].measure, left[i].unfair,
                         left[i].measure - left[i].fair - left[i].unfair, false);
  }
  r.stats.regions = tally.counters.regions;
  r.stats.leaves = tally.leaves;
  r.stats.rejected = tally.counters.rejected;
  r.stats.checked = tally.counters.checked;
  r.stats.tests = tally.counters.regions;
  env.stats.set("complete.regions", static_cast<double>(tally.counters.regions));
  env.stats.set("complete.leaves", static_cast<double>(tally.leaves));
  env.stats.set("complete.open_regions", static_cast<double>(left.size()) + static_cast<double>(tally.evicted));
  env.stats.set("complete.evicted_regions", static_cast<double>(tally.evicted));
  regions.record_stats(env, tally);
  r.share.measured = true;
  // With constraints the shares are of the valid points: those of the closed regions, and all of
  // the open ones' (at most that many), so that every share stays a sound bound until the end.
  const long double valid = tally.valid(regions.domain_points());
  r.share.points = real_domain ? 0.0L : valid;
  const long double cert = tally.certified + tally.open_fair, fals = tally.falsified + tally.open_unfair;
  if (finished) {  // every point closed exactly: the shares are complementary
    r.share.falsified = valid > 0.0L ? static_cast<double>(tally.falsified / valid) : 0.0;
    r.share.certified = 1.0 - r.share.falsified;
    r.share.undecided = 0.0;
    // Counts are long doubles: whole numbers are exact only below 2^64 points.
    r.share.exact = !real_domain && !tally.inexact && regions.domain_points() < 18446744073709551616.0L;
    r.share.falsified_points = tally.falsified;
  } else {
    r.share.certified = std::clamp(static_cast<double>(cert / valid), 0.0, 1.0);
    r.share.falsified = std::clamp(static_cast<double>(fals / valid), 0.0, 1.0 - r.share.certified);
    r.share.undecided = std::max(0.0, 1.0 - r.share.certified - r.share.falsified);
  }
  if (!finished && o.quantify && o.estimate_seconds > 0.0) {
    EstimateOptions eo;
    eo.confidence = o.confidence;
    // The time the search left it (its end and the report above may have run into it: it is not
    // cut short for that, or it would draw too few points to say anything).
    const double limit = env.options.get_real("time-limit");
    eo.seconds = limit > 0.0 ? std::min(o.estimate_seconds, limit / 20.0) : o.estimate_seconds;
    eo.seed = env.seed();
    const SoundMass mass{fals, std::max(0.0L, valid - cert - fals), valid};
    r.share.estimate = estimate_falsified_share(regions, schema, left, tally.evicted_sample, mass, eo, env);
    if (r.share.estimate) env.stats.set("complete.estimate_samples", static_cast<double>(r.share.estimate->samples));
  }
  if (answer) r.regions = answer->regions(valid);
  // Why the run stopped short; also kept with a witness verdict, whose shares it qualifies.
  std::string unfinished;
  if (!finished) {
    const auto open = static_cast<std::int64_t>(left.size()) + tally.evicted;
    if (tally.slivers > 0 && !tally.interrupted)
      unfinished =
          fmt::format("{} regions of real features were split to the last bit and are still open", tally.slivers);
    else if (tally.evicted > 0 && !tally.interrupted)
      unfinished = fmt::format("{} open regions exceeded the queue's capacity and stay undecided", tally.evicted);
    else
      unfinished = fmt::format("{}: {:.4g}% of the domain certified, {:.3g}% falsified, {} regions open",
                               env.stop_reason(), 100.0 * r.share.certified, 100.0 * r.share.falsified, open);
  }
  r.witnesses = std::move(tally.witnesses);
  if (!r.witnesses.empty()) {
    r.verdict = Verdict::Witness;
    r.exhaustive = finished && o.quantify;
    if (o.quantify) r.reason = unfinished;
  } else if (finished && tally.falsified == 0.0L) {
    r.verdict = Verdict::Verified;
    r.exhaustive = true;
    r.share = DomainShare{true, 1.0, 0.0, 0.0, r.share.points, 0.0L, r.share.exact, std::nullopt};  // exact as above
  } else if (finished) {
    r.reason = regions.unreplayed(tally.falsified);
  } else {
    r.reason = unfinished;
  }
  r.stats.seconds = env.elapsed_seconds();
  return r;
}

}  // namespace witness
