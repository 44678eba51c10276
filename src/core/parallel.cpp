#include "core/parallel.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>

namespace witness {

// On oneTBB: its worker threads persist between calls (the oracle calls this once per batch of
// labels), an arena of `count` slots bounds the threads, and the arena's slot index is the worker
// index. A body's exception cancels the items not yet started and is rethrown here by TBB.
void parallel_for(unsigned threads, std::size_t n, const std::function<void(std::size_t, unsigned)>& body) {
  if (n == 0) return;
  const auto count = static_cast<unsigned>(std::min<std::size_t>(std::max(1U, threads), n));
  if (count == 1) {
    for (std::size_t i = 0; i < n; ++i) body(i, 0);
    return;
  }
  tbb::task_arena arena(static_cast<int>(count));
  arena.execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<std::size_t>(0, n, 1),
        [&](const tbb::blocked_range<std::size_t>& range) {
          const auto worker = static_cast<unsigned>(tbb::this_task_arena::current_thread_index());
          for (std::size_t i = range.begin(); i != range.end(); ++i) body(i, worker);
        },
        tbb::simple_partitioner());  // one item at a time: uneven items balance
  });
}

}  // namespace witness
