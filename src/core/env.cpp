#include "core/env.h"

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
  return limit > 0 && elapsed_seconds() >= limit;
}

unsigned Env::threads() const {
  const long long t = options.get_int("threads");
  if (t > 0) return static_cast<unsigned>(t);
  return std::max(1U, std::thread::hardware_concurrency());
}

}  // namespace witness
