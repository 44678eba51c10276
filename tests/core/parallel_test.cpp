#include "core/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

namespace witness {
namespace {

TEST(ParallelFor, EveryIndexOnceWithWorkersInRange) {
  for (unsigned threads : {0U, 1U, 2U, 5U}) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{1000}}) {
      std::vector<std::atomic<int>> seen(n);
      std::atomic<bool> worker_ok{true};
      parallel_for(threads, n, [&](std::size_t i, unsigned worker) {
        ++seen[i];
        if (worker >= std::max(1U, threads)) worker_ok = false;
      });
      for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(seen[i].load(), 1) << threads << " threads, item " << i;
      EXPECT_TRUE(worker_ok);
    }
  }
}

// Per-worker scratch buffers are safe: no two items run at once with the same worker index.
TEST(ParallelFor, NoTwoItemsShareAWorkerAtOnce) {
  for (unsigned threads : {2U, 4U}) {
    std::vector<std::atomic<int>> busy(threads);
    std::atomic<bool> shared{false};
    parallel_for(threads, 2000, [&](std::size_t i, unsigned worker) {
      if (busy[worker]++ != 0) shared = true;
      volatile double x = 0;
      for (std::size_t k = 0; k < 200 + (i % 7) * 100; ++k) x = x + static_cast<double>(k);
      --busy[worker];
    });
    EXPECT_FALSE(shared) << threads << " threads";
  }
}

TEST(ParallelFor, TheFirstExceptionIsRethrownAfterAllThreadsStop) {
  std::atomic<int> running{0};
  try {
    parallel_for(2, 100, [&](std::size_t i, unsigned) {
      ++running;
      if (i == 10) throw std::runtime_error("item 10");
      --running;
    });
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "item 10");
  }
  EXPECT_EQ(running.load(), 1);  // only the item that threw is left counted: the others finished
}

}  // namespace
}  // namespace witness
