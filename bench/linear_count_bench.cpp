// Distributions per second of LinearDistribution (the quantifying engine's counts), Release build:
//   build/bench/bench_linear_count
// Each iteration builds the distribution of one linear bound over a box shaped like the German
// credit domain's (19 integer features, 2 to 81 values each), at a first count's 256 bins and a
// fine count's 16,384; the boxes are seeded sub-boxes, as a search meets them.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <random>
#include <vector>

#include "bounds/linear_count.h"

namespace {

// Values per feature of the German domain (Fairify's box), protected age left out.
constexpr std::array<int, 19> kValues = {4, 81, 5, 11, 200, 3, 3, 4, 3, 4, 3, 2, 3, 4, 2, 2, 2, 2, 2};

std::vector<std::vector<witness::LinearTerm>> term_sets(std::size_t n) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> coef(0.0, 1.0);
  std::vector<std::vector<witness::LinearTerm>> sets(n);
  for (auto& terms : sets) {
    for (const int values : kValues) {
      std::uniform_int_distribution<int> pick(0, values - 1);
      int a = pick(rng), b = pick(rng);
      if (rng() % 2 == 0) a = 0, b = values - 1;  // half the features still whole
      terms.push_back(witness::LinearTerm::integers(coef(rng) / values, 0.0, std::min(a, b), std::max(a, b)));
    }
  }
  return sets;
}

void BM_LinearDistribution(benchmark::State& state) {
  const auto sets = term_sets(256);
  const int bins = static_cast<int>(state.range(0));
  std::size_t k = 0;
  for (auto _ : state) {
    const witness::LinearDistribution d(0.5, 0.0, sets[k++ % sets.size()], bins);
    benchmark::DoNotOptimize(d.cdf_lower(0.0));
  }
  state.counters["per s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_LinearDistribution)->Arg(256)->Arg(16384);

}  // namespace

BENCHMARK_MAIN();
