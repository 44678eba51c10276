#include "fairness/bias.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>

#include "core/error.h"
#include "core/parallel.h"
#include "domain/sampler.h"
#include "model/evaluator.h"

namespace witness {
namespace {

constexpr long long kChunk = 4096;

// splitmix64: decorrelates the seeds of consecutive chunks.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30U)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27U)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31U);
}

struct ChunkResult {
  long long drawn = 0;    // 0: not run (stopped before it)
  long long samples = 0;  // those drawn that satisfy the schema's constraints (all, without any)
  long long discriminatory = 0;
  long long first = -1;  // index within the chunk of the first discriminatory pair
  Eigen::VectorXd x, x_prime;
};

ChunkResult run_chunk(const Schema& schema, const std::vector<int>& prot, const BiasOptions& options, long long chunk,
                      Eigen::Index count, Evaluator<double>& ev) {
  Sampler sampler(schema, mix(options.seed ^ mix(static_cast<std::uint64_t>(chunk))));
  Eigen::MatrixXd raw(schema.size(), count);
  if (options.rows != nullptr) {
    std::uniform_int_distribution<Eigen::Index> pick(0, options.rows->cols() - 1);
    for (Eigen::Index j = 0; j < count; ++j) raw.col(j) = options.rows->col(pick(sampler.engine()));
  } else {
    raw = sampler.points(count);
  }
  Eigen::MatrixXd raw_prime = raw;
  for (Eigen::Index j = 0; j < count; ++j) sampler.change_protected(raw_prime.col(j), prot);
  ChunkResult r;
  r.drawn = count;
  if (const Constraints& cs = schema.constraints(); !cs.empty()) {
    // Only people who can exist, with a twin who can: derived features follow their sources (a
    // proxy of the protected attribute follows it in the twin), and the rest is rejected.
    Eigen::Index kept = 0;
    for (Eigen::Index j = 0; j < count; ++j) {
      if (options.rows == nullptr) cs.derive(raw.col(j));
      cs.derive(raw_prime.col(j));
      if (!cs.satisfied(raw.col(j)) || !cs.satisfied(raw_prime.col(j))) continue;
      raw.col(kept) = raw.col(j);
      raw_prime.col(kept) = raw_prime.col(j);
      ++kept;
    }
    raw.conservativeResize(Eigen::NoChange, kept);
    raw_prime.conservativeResize(Eigen::NoChange, kept);
    count = kept;
  }
  r.samples = count;
  std::vector<int> a, b;
  ev.labels(schema.to_model_columns(raw), a);
  ev.labels(schema.to_model_columns(raw_prime), b);
  for (Eigen::Index j = 0; j < count; ++j) {
    if (a[static_cast<std::size_t>(j)] == b[static_cast<std::size_t>(j)]) continue;
    if (r.discriminatory++ == 0) {
      r.first = j;
      r.x = raw.col(j);
      r.x_prime = raw_prime.col(j);
    }
  }
  return r;
}

}  // namespace

std::pair<double, double> wilson_interval(long long k, long long n) {
  if (n <= 0) return {0.0, 1.0};
  const double z = 1.959963984540054;
  const double p = static_cast<double>(k) / static_cast<double>(n);
  const double nn = static_cast<double>(n);
  const double denom = 1.0 + z * z / nn;
  const double centre = (p + z * z / (2 * nn)) / denom;
  const double half = z * std::sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / denom;
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

BiasEstimate estimate_bias(const Model& model, const Schema& schema, const std::vector<int>& protected_features,
                           const BiasOptions& options) {
  if (schema.model_width() != model.input_width()) {
    throw InputError(schema.source(), "",
                     fmt::format("schema describes {} model inputs but {} has {}", schema.model_width(), model.source,
                                 model.input_width()));
  }
  if (protected_features.empty()) throw InputError("no protected attribute given (use --protected)");
  if (options.samples <= 0) throw InputError("--samples must be positive");
  if (options.rows != nullptr && options.rows->cols() == 0) throw InputError("the data set has no rows");
  {
    Sampler probe(schema, options.seed);  // fails early, in this thread, on a one-valued attribute
    Eigen::VectorXd x = probe.point();
    probe.change_protected(x, protected_features);
  }
  // Chunks of 4096 samples for a small network, fewer for a wide one: the stop flag is asked
  // between chunks, which must each take a fraction of a second.
  const long long chunk = std::min<long long>(kChunk, batch_columns(model));
  const long long chunks = (options.samples + chunk - 1) / chunk;
  std::vector<ChunkResult> results(static_cast<std::size_t>(chunks));
  const unsigned threads = std::max(1U, std::min<unsigned>(options.threads, static_cast<unsigned>(chunks)));
  std::vector<std::unique_ptr<Evaluator<double>>> evaluators(threads);  // one per thread, made on first use
  std::atomic<bool> stopped{false};
  parallel_for(threads, static_cast<std::size_t>(chunks), [&](std::size_t c, unsigned worker) {
    if (stopped.load() || (options.stop && options.stop())) {
      stopped = true;
      return;
    }
    auto& ev = evaluators[worker];
    if (!ev) ev = std::make_unique<Evaluator<double>>(model);
    const auto first = static_cast<long long>(c);
    const long long count = std::min(chunk, options.samples - first * chunk);
    results[c] = run_chunk(schema, protected_features, options, first, count, *ev);
  });

  BiasEstimate est;
  est.stopped = stopped.load();
  for (const ChunkResult& r : results) {  // in chunk order, so the example does not depend on threads
    if (r.first >= 0 && !est.example) est.example = std::make_pair(r.x, r.x_prime);
    est.samples += r.samples;  // the chunks that ran: each a sample of its own, unbiased by the stop
    est.drawn += r.drawn;
    est.discriminatory += r.discriminatory;
  }
  for (const auto& ev : evaluators) est.nan_labels += ev ? ev->nan_labels() : 0;
  if (est.samples == 0) {
    est.ci_high = 1.0;  // nothing drawn: nothing known
    return est;
  }
  est.rate = static_cast<double>(est.discriminatory) / static_cast<double>(est.samples);
  std::tie(est.ci_low, est.ci_high) = wilson_interval(est.discriminatory, est.samples);
  return est;
}

}  // namespace witness
