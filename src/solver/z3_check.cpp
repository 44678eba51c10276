#include "solver/z3_check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "core/alarm.h"

namespace witness {

bool is_z3_resource_message(const std::string& msg) {
  for (const char* word : {"canceled", "cancelled", "timeout", "max. resource", "resource limit", "memory"}) {
    if (msg.find(word) != std::string::npos) return true;
  }
  return false;
}

Z3Check z3_check(z3::solver& solver, double seconds) {
  const bool limited = seconds > 0 && std::isfinite(seconds);
  z3::context& ctx = solver.ctx();
  Z3Check c;
  // The limit is a watchdog that interrupts the context, not Z3's own "timeout" parameter: Z3
  // 4.8.12's timer thread and an interrupt at about the same moment deadlock inside Z3 (seen under
  // load with a 1 ms limit), and the timer adds nothing: it only raises the same cancel flag.
  // Z3 still ignores the flag inside some LIA checks with huge coefficients (a GC5 query ran
  // 40-70 s past a 2 s limit): such a check overruns, and callers that must stop on time run
  // under their own deadline.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                             std::chrono::duration<double>(limited ? std::min(seconds, 1.0e7) : 0.0));
  // Repeated: an interrupt that comes before Z3 listens (a 1 ms limit under load) is lost.
  Alarm watchdog(
      limited ? std::optional(deadline) : std::nullopt, [&ctx] { ctx.interrupt(); }, std::chrono::milliseconds(20));
  try {
    c.result = solver.check();
    watchdog.disarm();
    if (c.result == z3::unknown) c.reason = solver.reason_unknown();
  } catch (const z3::exception& e) {
    watchdog.disarm();
    const std::string msg = e.msg();
    if (!is_z3_resource_message(msg)) throw;
    c.result = z3::unknown;
    c.reason = msg;
  }
  if (c.result == z3::unknown) {
    // Z3 says "canceled" or "interrupted" for the watchdog's interrupt: one word.
    if (limited && (c.reason.find("timeout") != std::string::npos || c.reason.find("cancel") != std::string::npos ||
                    c.reason.find("interrupt") != std::string::npos)) {
      c.reason = "timeout";
      c.timed_out = true;
    }
    if (c.reason.empty()) c.reason = "unknown";
  }
  return c;
}

}  // namespace witness
