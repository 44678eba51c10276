#include "core/alarm.h"

#include "core/process.h"

namespace witness {

Alarm::Alarm(std::optional<std::chrono::steady_clock::time_point> deadline, std::function<void()> action,
             std::optional<std::chrono::milliseconds> repeat) {
  if (!deadline) return;
  // A thread of its own: a sanitized build must then not fork a child that allocates (core/process.h).
  note_many_threads_allocate();
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
