#include "fairness/complete/answer/share_estimate.h"

#include <algorithm>
#include <boost/math/special_functions/beta.hpp>
#include <random>

namespace witness {

void clopper_pearson(std::int64_t k, std::int64_t n, double confidence, double& lo, double& hi) {
  lo = 0.0, hi = 1.0;
  if (n <= 0) return;
  const double alpha = 1.0 - confidence;
  const auto kd = static_cast<double>(k), nd = static_cast<double>(n);
  if (k > 0) lo = boost::math::ibeta_inv(kd, nd - kd + 1.0, alpha / 2.0);
  if (k < n) hi = boost::math::ibeta_inv(kd + 1.0, nd - kd, 1.0 - alpha / 2.0);
}

namespace {

// Draws points uniformly from the union of boxes, each box with probability proportional to its
// measure (integer and categorical features uniform over their values, real ones over the interval).
class OpenMassSampler {
 public:
  OpenMassSampler(const std::vector<SearchRegion>& open, std::uint64_t seed) : open_(open), rng_(seed) {
    long double total = 0.0L;
    cumulative_.reserve(open.size());
    for (const SearchRegion& r : open) {
      total += r.measure;
      cumulative_.push_back(static_cast<double>(total));
    }
    total_ = static_cast<double>(total);
  }

  void draw(const Schema& schema, Eigen::Ref<Eigen::VectorXd> point) {
    const double at = std::uniform_real_distribution<double>(0.0, total_)(rng_);
    const auto k = std::min<std::size_t>(
        static_cast<std::size_t>(std::upper_bound(cumulative_.begin(), cumulative_.end(), at) - cumulative_.begin()),
        open_.size() - 1);
    const SearchRegion& r = open_[k];
    for (int f = 0; f < schema.size(); ++f) {
      const double lo = r.lo(f), hi = r.hi(f);
      if (!(lo < hi)) {
        point(f) = lo;
      } else if (schema.feature(f).integral()) {
        point(f) = static_cast<double>(std::uniform_int_distribution<std::int64_t>(
            static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi))(rng_));
      } else {
        point(f) = std::min(hi, std::uniform_real_distribution<double>(lo, hi)(rng_));
      }
    }
  }

 private:
  const std::vector<SearchRegion>& open_;
  std::mt19937_64 rng_;
  std::vector<double> cumulative_;
  double total_ = 0.0;
};

}  // namespace

namespace {

std::int64_t binomial(std::int64_t n, long double p, std::mt19937_64& rng) {
  if (n <= 0 || p <= 0.0L) return 0;
  if (p >= 1.0L) return n;
  return std::binomial_distribution<std::int64_t>(n, static_cast<double>(p))(rng);
}

// What one stratum's points say of its unfair measure: the Clopper-Pearson interval of k unfair
// of n drawn, scaled to the stratum and clipped to what its counts prove.
struct StratumBounds {
  long double lo = 0.0L, share = 0.0L, hi = 0.0L;
};

StratumBounds stratum_bounds(std::int64_t k, std::int64_t n, double confidence, long double measure,
                             long double counted_unfair, long double undecided) {
  double pl = 0.0, ph = 1.0;
  clopper_pearson(k, n, confidence, pl, ph);
  const long double p = n > 0 ? static_cast<long double>(k) / static_cast<long double>(n) : 0.5L;
  auto scaled = [&](long double share) {
    return std::clamp(share * measure, counted_unfair, counted_unfair + undecided);
  };
  return {scaled(pl), scaled(p), scaled(ph)};
}

}  // namespace

void EvictedSample::thin(long double to_rate, std::mt19937_64& rng) {
  if (rate <= to_rate) return;
  const long double keep = to_rate / rate;
  const std::int64_t kept_unfair = binomial(unfair_samples, keep, rng);
  samples = kept_unfair + binomial(samples - unfair_samples, keep, rng);
  unfair_samples = kept_unfair;
  rate = to_rate;
}

std::int64_t EvictedSample::plan(const std::vector<SearchRegion>& batch, std::mt19937_64& rng) {
  long double w = 0.0L;
  for (const SearchRegion& r : batch) w += r.measure, fair += r.fair, unfair += r.unfair;
  measure += w;
  if (w <= 0.0L) return 0;
  if (rate <= 0.0L) rate = static_cast<long double>(cap) / (2.0L * w);
  while (static_cast<long double>(samples) + rate * w > static_cast<long double>(cap)) thin(rate / 2.0L, rng);
  return std::poisson_distribution<std::int64_t>(static_cast<double>(rate * w))(rng);
}

void EvictedSample::add(long double drawn_rate, std::int64_t drawn, std::int64_t unfair_drawn, std::mt19937_64& rng) {
  if (drawn_rate > rate) {
    const long double keep = rate / drawn_rate;
    const std::int64_t kept_unfair = binomial(unfair_drawn, keep, rng);
    drawn = kept_unfair + binomial(drawn - unfair_drawn, keep, rng);
    unfair_drawn = kept_unfair;
  }
  samples += drawn;
  unfair_samples += unfair_drawn;
}

void EvictedSample::merge(const EvictedSample& other, std::mt19937_64& rng) {
  if (other.rate > 0.0L && (rate <= 0.0L || other.rate < rate)) thin(other.rate, rng);
  if (rate <= 0.0L) rate = other.rate;
  EvictedSample b = other;
  b.thin(rate, rng);
  measure += b.measure, fair += b.fair, unfair += b.unfair;
  samples += b.samples, unfair_samples += b.unfair_samples;
}

namespace {

std::int64_t unfair_among(const RegionEvaluator& regions, const Schema& schema, OpenMassSampler& sampler,
                          Eigen::Index width, std::int64_t n, RegionScratch* scratch) {
  constexpr std::int64_t kBatch = 256;
  Eigen::MatrixXd batch(width, kBatch);
  std::int64_t unfair = 0;
  for (std::int64_t done = 0; done < n; done += kBatch) {
    if (n - done < kBatch) batch.conservativeResize(Eigen::NoChange, n - done);
    for (Eigen::Index i = 0; i < batch.cols(); ++i) sampler.draw(schema, batch.col(i));
    for (PointVerdict p : regions.decide_points(batch, scratch)) unfair += p == PointVerdict::Unfair ? 1 : 0;
  }
  return unfair;
}

}  // namespace

std::int64_t unfair_among_drawn(const RegionEvaluator& regions, const Schema& schema,
                                const std::vector<SearchRegion>& from, std::int64_t n, std::uint64_t seed,
                                RegionScratch* scratch) {
  if (n <= 0 || from.empty()) return 0;
  OpenMassSampler sampler(from, seed);
  return unfair_among(regions, schema, sampler, from.front().lo.size(), n, scratch);
}

std::optional<ShareEstimate> estimate_falsified_share(const RegionEvaluator& regions, const Schema& schema,
                                                      const std::vector<SearchRegion>& open,
                                                      const EvictedSample& evicted, const SoundMass& mass,
                                                      const EstimateOptions& o, Env& env) {
  if (mass.undecided <= 0.0L || mass.valid <= 0.0L) return std::nullopt;
  long double m = 0.0L, counted_unfair = 0.0L, counted_fair = 0.0L;
  for (const SearchRegion& r : open) m += r.measure, counted_unfair += r.unfair, counted_fair += r.fair;
  const long double open_undecided = std::max(0.0L, m - counted_fair - counted_unfair);
  // The evicted regions are a stratum of their own once any point was planned in them.
  const bool drawn_evicted = evicted.rate > 0.0L;
  const long double evicted_undecided =
      drawn_evicted ? std::max(0.0L, evicted.measure - evicted.fair - evicted.unfair) : 0.0L;
  const long double elsewhere = std::max(0.0L, mass.undecided - open_undecided - evicted_undecided);  // undrawn
  const long double others =
      mass.falsified - counted_unfair - (drawn_evicted ? evicted.unfair : 0.0L);  // falsified outside both
  // Two strata: each interval at half the error rate, so that both hold together at `confidence`.
  const double confidence = drawn_evicted ? 1.0 - (1.0 - o.confidence) / 2.0 : o.confidence;
  const StratumBounds in_evicted = drawn_evicted ? stratum_bounds(evicted.unfair_samples, evicted.samples, confidence,
                                                                  evicted.measure, evicted.unfair, evicted_undecided)
                                                 : StratumBounds{};
  ShareEstimate e;
  e.confidence = o.confidence;
  std::int64_t drawn = 0, unfair = 0;  // in the open regions
  const long double v = mass.valid;
  const auto sound_lo = static_cast<double>(mass.falsified / v);
  const auto sound_hi = static_cast<double>((mass.falsified + mass.undecided) / v);
  // The interval from both strata; its centre for the undrawn mass at the open regions' rate.
  auto update = [&] {
    const StratumBounds in_open = stratum_bounds(unfair, drawn, confidence, m, counted_unfair, open_undecided);
    const long double rate =
        open_undecided > 0.0L ? std::clamp((in_open.share - counted_unfair) / open_undecided, 0.0L, 1.0L) : 0.5L;
    e.samples = drawn + (drawn_evicted ? evicted.samples : 0);
    e.unfair = unfair + (drawn_evicted ? evicted.unfair_samples : 0);
    e.lo = std::clamp(static_cast<double>((others + in_open.lo + in_evicted.lo) / v), sound_lo, sound_hi);
    e.hi = std::clamp(static_cast<double>((others + in_open.hi + in_evicted.hi + elsewhere) / v), sound_lo, sound_hi);
    e.share =
        std::clamp(static_cast<double>((others + in_open.share + in_evicted.share + rate * elsewhere) / v), e.lo, e.hi);
  };
  if (open.empty() || m <= 0.0L) {
    update();
    return e;
  }
  OpenMassSampler sampler(open, o.seed);
  const std::unique_ptr<RegionScratch> scratch = regions.scratch();
  const double start = env.elapsed_seconds();
  constexpr std::int64_t kBatch = 256;
  constexpr std::int64_t kSettled = 4096;
  while (drawn < o.max_samples) {
    unfair += unfair_among(regions, schema, sampler, open.front().lo.size(), kBatch, scratch.get());
    drawn += kBatch;
    if (drawn < o.min_samples) continue;
    update();
    // Narrow enough (on enough points that the interval is not just the clipping's), or out of time.
    if (((e.hi - e.lo) / 2.0 <= o.target_half_width && drawn >= kSettled) || env.elapsed_seconds() - start >= o.seconds)
      break;
  }
  update();
  return e;
}

}  // namespace witness
