// Runs an action on a helper thread at a deadline unless disarmed first: the Z3 watchdog and the
// hard deadline of `witness fair` (Z3 4.8.12 can ignore its own timeout).
//
//   #include <z3++.h>
//   z3::context ctx;
//   z3::solver solver(ctx);
//   witness::Alarm alarm(std::chrono::steady_clock::now() + std::chrono::seconds(5),
//                        [&] { ctx.interrupt(); });
//   solver.check();
//   alarm.disarm();   // also done by the destructor; the action never runs after disarm() returns,
//                     // and one already running has finished
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

namespace witness {

class Alarm {
 public:
  // No deadline: nothing is started. With `repeat`, the action runs again every `repeat` after the
  // deadline until disarmed (an interrupt that arrived before its target was listening is not lost).
  Alarm(std::optional<std::chrono::steady_clock::time_point> deadline, std::function<void()> action,
        std::optional<std::chrono::milliseconds> repeat = std::nullopt);
  ~Alarm() { disarm(); }
  Alarm(const Alarm&) = delete;
  Alarm& operator=(const Alarm&) = delete;
  void disarm();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool disarmed_ = false;
  std::thread thread_;
};

}  // namespace witness
