// One Env per run, passed by reference: options, a logger on stderr, named statistics, the random
// seed and the deadline. No globals.
//
//   witness::Env env;                             // defaults from option_table()
//   env.options.set("time-limit", "10");
//   env.start();                                  // starts the clock and the deadline
//   env.stats.add("bias.samples", 1000);
//   if (env.expired()) { /* stop and report what is known */ }
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
  [[nodiscard]] bool expired() const;  // past --time-limit (never when it is 0), or cancelled
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
};

}  // namespace witness
