#include "core/env.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <thread>

namespace witness {

double Stats::get(const std::string& name) const {
  const auto it = values_.find(name);
  return it == values_.end() ? 0.0 : it->second;
}

void Env::start() { start_ = std::chrono::steady_clock::now(); }

double Env::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

bool Env::expired() const {
  if (cancelled()) return true;
  const double limit = options.get_real("time-limit");
  if (limit > 0 && elapsed_seconds() >= limit) return true;
  return over_memory_limit();
}

bool Env::over_memory_limit() const {
  if (memory_.exceeded.load(std::memory_order_relaxed)) return true;
  const double limit = options.get_real("memory-limit");
  if (limit <= 0) return false;
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  std::int64_t next = memory_.next_check_ns.load(std::memory_order_relaxed);
  if (now < next || !memory_.next_check_ns.compare_exchange_strong(next, now + 20'000'000)) return false;
  if (resident_megabytes() + memory_.reserve_mb.load(std::memory_order_relaxed) < limit) return false;
  memory_.exceeded.store(true, std::memory_order_relaxed);
  return true;
}

double Env::seconds_left() const {
  if (cancelled() || over_memory_limit()) return 0;
  const double limit = options.get_real("time-limit");
  if (limit <= 0) return std::numeric_limits<double>::infinity();
  return std::max(0.0, limit - elapsed_seconds());
}

const char* Env::stop_reason() const {
  if (memory_.exceeded.load()) return "memory limit";
  // Cancelled (Ctrl-C, the server's cancel) before any limit: not the time limit's doing.
  const double limit = options.get_real("time-limit");
  if (cancelled() && !(limit > 0 && elapsed_seconds() >= limit)) return "cancelled";
  return "time limit";
}

double resident_megabytes() {
  // /proc/self/statm: size, resident, ... in pages.
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[128] = {};
  const ssize_t got = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (got <= 0) return 0;
  char* end = nullptr;
  (void)std::strtoll(text, &end, 10);
  const long long pages = std::strtoll(end, nullptr, 10);
  return static_cast<double>(pages) * static_cast<double>(::sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

unsigned Env::threads() const {
  const long long t = options.get_int("threads");
  if (t > 0) return static_cast<unsigned>(t);
  return std::max(1U, std::thread::hardware_concurrency());
}

}  // namespace witness
