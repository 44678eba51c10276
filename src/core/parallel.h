// One loop over independent items on several threads, for the engines and oracles that split work.
//
//   const unsigned threads = 4;
//   std::vector<double> out(1000);
//   std::vector<std::vector<double>> scratch(threads);      // per-thread buffers, indexed by worker
//   witness::parallel_for(threads, out.size(), [&](std::size_t i, unsigned worker) {
//     scratch[worker].assign(8, static_cast<double>(i));    // each i exactly once, on some thread
//     out[i] = scratch[worker][0] * 2;
//   });
#pragma once

#include <cstddef>
#include <functional>

namespace witness {

// Runs body(i, worker) for every i in [0, n) on min(threads, n) threads (at least one), oneTBB's
// pooled threads; worker is in [0, min(threads, n)), one at a time per worker index. Items are
// handed out one at a time, so uneven items balance. The first exception a body throws is rethrown
// here once every thread has stopped; the items not yet started are then skipped.
void parallel_for(unsigned threads, std::size_t n, const std::function<void(std::size_t, unsigned)>& body);

}  // namespace witness
