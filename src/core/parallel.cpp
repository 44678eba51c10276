#include "core/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace witness {

void parallel_for(unsigned threads, std::size_t n, const std::function<void(std::size_t, unsigned)>& body) {
  if (n == 0) return;
  const auto count = static_cast<unsigned>(std::min<std::size_t>(std::max(1U, threads), n));
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::exception_ptr error;
  auto work = [&](unsigned worker) {
    for (std::size_t i = next++; i < n && !failed; i = next++) {
      try {
        body(i, worker);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < count; ++t) pool.emplace_back(work, t);
  work(0);
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace witness
