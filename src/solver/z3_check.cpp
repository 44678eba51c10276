#include "solver/z3_check.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "core/alarm.h"

namespace witness {

namespace {

// One helper thread deletes retired contexts in order; at exit it finishes the queue.
class ContextGraveyard {
 public:
  ContextGraveyard() : worker_([this] { work(); }) {}
  ~ContextGraveyard() {
    {
      const std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_one();
    worker_.join();
  }
  ContextGraveyard(const ContextGraveyard&) = delete;
  ContextGraveyard& operator=(const ContextGraveyard&) = delete;

  void bury(std::unique_ptr<z3::context> ctx, std::vector<z3::solver> solvers,
            std::vector<std::shared_ptr<void>> terms) {
    pending_.fetch_add(1);
    {
      const std::lock_guard lock(mutex_);
      queue_.push_back({std::move(terms), std::move(solvers), std::move(ctx)});
    }
    wake_.notify_one();
  }
  [[nodiscard]] bool busy() const { return pending_.load() > 0; }

 private:
  void work() {
    std::unique_lock lock(mutex_);
    while (true) {
      wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      auto next = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      try {
        next.terms.clear();  // terms and solvers before their context
        next.solvers.clear();
        next.ctx.reset();
      } catch (...) {
        // Freeing a context that ran out of memory can itself throw (an independent probe saw
        // `terminate called` from this thread after a query ran Z3 out of memory, killing the
        // server). An exception leaving this thread aborts the process; the context leaks instead.
        (void)next.ctx.release();
      }
      pending_.fetch_sub(1);
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  struct Buried {
    std::vector<std::shared_ptr<void>> terms;
    std::vector<z3::solver> solvers;
    std::unique_ptr<z3::context> ctx;
  };
  std::deque<Buried> queue_;
  std::atomic<int> pending_{0};
  bool stop_ = false;
  std::thread worker_;  // last: starts after the rest is built
};

ContextGraveyard& graveyard() {
  static ContextGraveyard g;
  return g;
}

std::atomic<double> solver_memory_mb{0.0};  // what limit_solver_memory set (0: none)
// What Z3 4.8.12 counts for one new context (Z3_get_estimated_alloc_size before and after).
constexpr double kContextBytes = 17.2e6;

}  // namespace

RetiringContext::RetiringContext() {
  (void)graveyard();
  // z3::context dereferences the context Z3 made without looking: under a memory_max_size that
  // is already used up Z3 returns none, and the constructor would crash. Ask first; and where the
  // bound surely leaves no room for a context, do not ask, since a context that Z3 fails to make
  // leaks what it had allocated (8.5 MB under a 1 MB bound).
  const double limit_mb = solver_memory_mb.load();
  if (limit_mb > 0 && static_cast<double>(Z3_get_estimated_alloc_size()) + kContextBytes > limit_mb * 1024.0 * 1024.0)
    throw z3::exception("out of memory: the solver cannot start under its memory limit");
  Z3_config config = Z3_mk_config();
  Z3_context probe = Z3_mk_context_rc(config);
  Z3_del_config(config);
  if (probe == nullptr) throw z3::exception("out of memory: the solver cannot start under its memory limit");
  Z3_del_context(probe);
  ctx_ = std::make_unique<z3::context>();
}
RetiringContext::~RetiringContext() { graveyard().bury(std::move(ctx_), std::move(solvers_), std::move(terms_)); }
bool contexts_retiring() { return graveyard().busy(); }

void limit_solver_memory(double megabytes) {
  if (megabytes <= 0) return;
  z3::set_param("memory_max_size", static_cast<int>(std::min(megabytes, 1.0e9)));
  solver_memory_mb = std::min(megabytes, 1.0e9);
}

bool is_z3_resource_message(const std::string& msg) {
  for (const char* word : {"canceled", "cancelled", "timeout", "max. resource", "resource limit", "memory"}) {
    if (msg.find(word) != std::string::npos) return true;
  }
  return false;
}

z3::solver make_z3_solver(z3::context& ctx, const char* tactic) {
  z3::solver s = tactic != nullptr ? z3::tactic(ctx, tactic).mk_solver() : z3::solver(ctx);
  z3::params leave_signals(ctx);
  leave_signals.set("ctrl_c", false);
  s.set(leave_signals);
  return s;
}

Z3Check z3_check(z3::solver& solver, double seconds, const std::atomic<bool>* cancel) {
  const bool limited = seconds > 0 && std::isfinite(seconds);
  z3::context& ctx = solver.ctx();
  Z3Check c;
  const auto raised = [cancel] { return cancel != nullptr && cancel->load(std::memory_order_relaxed); };
  if (raised()) {
    c.reason = "canceled";
    c.canceled = true;
    return c;
  }
  // The limit is a watchdog that interrupts the context, not Z3's own "timeout" parameter: Z3
  // 4.8.12's timer thread and an interrupt at about the same moment deadlock inside Z3 (seen under
  // load with a 1 ms limit), and the timer adds nothing: it only raises the same cancel flag.
  // Z3 still ignores the flag inside some LIA checks with huge coefficients (a GC5 query ran
  // 40-70 s past a 2 s limit): such a check overruns, and callers that must stop on time run
  // under their own deadline.
  const auto now = std::chrono::steady_clock::now();
  const auto deadline = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                  std::chrono::duration<double>(limited ? std::min(seconds, 1.0e7) : 0.0));
  // Repeated: an interrupt that comes before Z3 listens (a 1 ms limit under load) is lost. With a
  // cancel flag the watchdog starts at once and looks at the flag every 20 ms.
  std::optional<std::chrono::steady_clock::time_point> first;
  if (cancel != nullptr) {
    first = now;
  } else if (limited) {
    first = deadline;
  }
  Alarm watchdog(
      first,
      [&ctx, &raised, limited, deadline] {
        if (raised() || (limited && std::chrono::steady_clock::now() >= deadline)) ctx.interrupt();
      },
      std::chrono::milliseconds(20));
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
  if (c.result == z3::unknown && raised()) {
    c.reason = "canceled";
    c.canceled = true;
  } else if (c.result == z3::unknown) {
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
