#include "core/alarm.h"

namespace witness {

Alarm::Alarm(std::optional<std::chrono::steady_clock::time_point> deadline, std::function<void()> action,
             std::optional<std::chrono::milliseconds> repeat) {
  if (!deadline) return;
  thread_ = std::thread([this, when = *deadline, act = std::move(action), repeat] {
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_until(lock, when, [this] { return disarmed_; })) return;
    act();
    while (repeat && !cv_.wait_for(lock, *repeat, [this] { return disarmed_; })) act();
  });
}

void Alarm::disarm() {
  if (!thread_.joinable()) return;
  {
    const std::lock_guard<std::mutex> lock(mu_);
    disarmed_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

}  // namespace witness
