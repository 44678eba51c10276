// One Env per run, passed by reference: options, a logger on stderr, named statistics, the random
// seed and the deadline. No globals.
//
//   witness::Env env;                             // defaults from option_table()
//   env.options.set("time-limit", "10");
//   env.start();                                  // starts the clock and the deadline
//   env.stats.add("bias.samples", 1000);
//   if (env.expired()) { /* stop and report what is known */ }
//   std::string why = env.stop_reason();          // "time limit", "memory limit" or "cancelled" (Ctrl-C)
//   env.log(1, "sampled {} rows", 1000);
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <map>
#include <string>

#include "core/options.h"

namespace witness {

// Named counters and timers (`bias.samples`, `bias.seconds`), dumped by --stats.
class Stats {
 public:
  void add(const std::string& name, double amount = 1.0) { values_[name] += amount; }
  void set(const std::string& name, double value) { values_[name] = value; }
  [[nodiscard]] double get(const std::string& name) const;
  [[nodiscard]] const std::map<std::string, double>& all() const { return values_; }

 private:
  std::map<std::string, double> values_;
};

class Env {
 public:
  Options options;
  Stats stats;

  void start();
  [[nodiscard]] double elapsed_seconds() const;
  // Past --time-limit (never when it is 0), resident memory past --memory-limit, or cancelled.
  [[nodiscard]] bool expired() const;
  // Why expired() read true: "memory limit" once the memory limit was passed, "cancelled" when the
  // cancel flag stopped the run before its time limit, else "time limit".
  [[nodiscard]] const char* stop_reason() const;
  [[nodiscard]] bool over_memory_limit() const;  // latched: once past, stays past
  // Memory the run still needs to finish (to assemble its answer), counted against --memory-limit
  // beside the resident size, so that the limit holds to the end and not only to the stop.
  void set_memory_reserve(double megabytes) const { memory_.reserve_mb.store(megabytes, std::memory_order_relaxed); }
  // Seconds to the time limit: infinity without one, 0 once expired() for any reason.
  [[nodiscard]] double seconds_left() const;
  // A flag another thread raises to stop the run (witness serve's cancel button): expired() then
  // reads true, so every engine stops as it would at its time limit. The flag must outlive the run.
  void set_cancel(const std::atomic<bool>* flag) { cancel_ = flag; }
  [[nodiscard]] const std::atomic<bool>* cancel_flag() const { return cancel_; }
  [[nodiscard]] bool cancelled() const { return cancel_ != nullptr && cancel_->load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t seed() const { return static_cast<std::uint64_t>(options.get_int("seed")); }
  [[nodiscard]] unsigned threads() const;  // resolved: 0 means all cores

  template <typename... Args>
  void log(int level, fmt::format_string<Args...> format, Args&&... args) const {
    if (level <= options.get_int("verbose")) {
      std::cerr << "witness: " << fmt::format(format, std::forward<Args>(args)...) << '\n';
    }
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  const std::atomic<bool>* cancel_ = nullptr;
  // Reading /proc costs a system call: expired() samples the resident size at most every 20 ms.
  // Copies start a fresh gauge (atomics do not copy).
  struct MemoryGauge {
    MemoryGauge() = default;
    MemoryGauge(const MemoryGauge& /*other*/) {}
    MemoryGauge& operator=(const MemoryGauge& /*other*/) { return *this; }
    mutable std::atomic<std::int64_t> next_check_ns{0};
    mutable std::atomic<bool> exceeded{false};
    mutable std::atomic<double> reserve_mb{0.0};
  } memory_;
};

// Resident memory of this process in MiB (0 where /proc cannot tell).
[[nodiscard]] double resident_megabytes();

}  // namespace witness
