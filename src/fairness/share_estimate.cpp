#include "fairness/share_estimate.h"

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

std::optional<ShareEstimate> estimate_falsified_share(const RegionEvaluator& regions, const Schema& schema,
                                                      const std::vector<SearchRegion>& open, const SoundMass& mass,
                                                      const EstimateOptions& o, Env& env) {
  if (mass.undecided <= 0.0L || mass.valid <= 0.0L) return std::nullopt;
  long double m = 0.0L, counted_unfair = 0.0L, counted_fair = 0.0L;
  for (const SearchRegion& r : open) m += r.measure, counted_unfair += r.unfair, counted_fair += r.fair;
  const long double open_undecided = std::max(0.0L, m - counted_fair - counted_unfair);
  const long double elsewhere = std::max(0.0L, mass.undecided - open_undecided);  // evicted: not drawn from
  const long double others = mass.falsified - counted_unfair;                     // falsified outside `open`
  ShareEstimate e;
  e.confidence = o.confidence;
  const long double v = mass.valid;
  const auto sound_lo = static_cast<double>(mass.falsified / v);
  const auto sound_hi = static_cast<double>((mass.falsified + mass.undecided) / v);
  // The interval from k unfair of n drawn; its centre for the evicted mass at the drawn rate.
  auto update = [&] {
    double pl = 0.0, ph = 1.0;
    clopper_pearson(e.unfair, e.samples, o.confidence, pl, ph);
    const long double p =
        e.samples > 0 ? static_cast<long double>(e.unfair) / static_cast<long double>(e.samples) : 0.5L;
    auto in_open = [&](long double share) {
      return std::clamp(share * m, counted_unfair, counted_unfair + open_undecided);
    };
    const long double rate =
        open_undecided > 0.0L ? std::clamp((in_open(p) - counted_unfair) / open_undecided, 0.0L, 1.0L) : 0.5L;
    e.lo = std::clamp(static_cast<double>((others + in_open(pl)) / v), sound_lo, sound_hi);
    e.hi = std::clamp(static_cast<double>((others + in_open(ph) + elsewhere) / v), sound_lo, sound_hi);
    e.share = std::clamp(static_cast<double>((others + in_open(p) + rate * elsewhere) / v), e.lo, e.hi);
  };
  if (open.empty() || m <= 0.0L) {
    update();
    return e;
  }
  OpenMassSampler sampler(open, o.seed);
  const std::unique_ptr<RegionScratch> scratch = regions.scratch();
  const double start = env.elapsed_seconds();
  const Eigen::Index width = open.front().lo.size();
  constexpr Eigen::Index kBatch = 256;
  constexpr std::int64_t kSettled = 4096;
  Eigen::MatrixXd batch(width, kBatch);
  while (e.samples < o.max_samples) {
    for (Eigen::Index i = 0; i < kBatch; ++i) sampler.draw(schema, batch.col(i));
    for (PointVerdict p : regions.decide_points(batch, scratch.get())) e.unfair += p == PointVerdict::Unfair ? 1 : 0;
    e.samples += kBatch;
    if (e.samples < o.min_samples) continue;
    update();
    // Narrow enough (on enough points that the interval is not just the clipping's), or out of time.
    if (((e.hi - e.lo) / 2.0 <= o.target_half_width && e.samples >= kSettled) ||
        env.elapsed_seconds() - start >= o.seconds)
      break;
  }
  update();
  return e;
}

}  // namespace witness
