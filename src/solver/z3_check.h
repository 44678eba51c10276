// One Z3 check with a time limit that holds: Z3's own timeout plus a watchdog that interrupts the
// context shortly after it (Z3 4.8.12 ignores its timeout inside some checks). Every layer that
// talks to Z3 directly checks through this.
//
//   z3::context ctx;
//   z3::solver s = witness::make_z3_solver(ctx);
//   s.add(ctx.int_const("x") > 3);
//   const witness::Z3Check c = witness::z3_check(s, 2.0);  // at most about 2 s
//   if (c.timed_out) { /* c.result == z3::unknown */ }
#pragma once

#include <z3++.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace witness {

struct Z3Check {
  z3::check_result result = z3::unknown;
  std::string reason;      // unknown: Z3's reason, or "timeout" for the time limit (Z3 or the watchdog)
  bool timed_out = false;  // unknown because the time limit passed
  bool canceled = false;   // unknown because `cancel` was raised (reason "canceled")
};

// A solver that leaves SIGINT to the program (Z3 otherwise swaps in its own handler during a check
// and answers "interrupted from keyboard": Python would see no KeyboardInterrupt, and handlers
// swapped by concurrent checks race). The program stops a check through z3_check's `cancel`.
// `tactic`: a solver made from that tactic ("qffp"), else Z3's default solver. Solver parameters
// are set here, before any assertion: set later, Z3 re-reads them at every check (40x slower).
z3::solver make_z3_solver(z3::context& ctx, const char* tactic = nullptr);

// `seconds` <= 0 or infinite: no limit. Z3's resource exceptions (interrupt, memory, rlimit) are an
// unknown answer; other Z3 exceptions propagate. `cancel` (optional), raised by another thread,
// interrupts the check within about 20 ms (Ctrl-C in Python, a job's cancel in witness serve).
Z3Check z3_check(z3::solver& solver, double seconds, const std::atomic<bool>* cancel = nullptr);

// Z3's memory bound (MiB) for every context of the process; past it a check answers unknown.
void limit_solver_memory(double megabytes);

// True for Z3's words for resource exhaustion (timeout, interrupt, memory, rlimit).
bool is_z3_resource_message(const std::string& msg);

// A Z3 context deleted on a helper thread: freeing the gigabytes of a large bit-blasted query
// takes seconds, which would otherwise run past the caller's time limit. Declare it before every
// term and solver of the context (it goes last).
class RetiringContext {
 public:
  RetiringContext();
  ~RetiringContext();
  RetiringContext(const RetiringContext&) = delete;
  RetiringContext& operator=(const RetiringContext&) = delete;
  z3::context& operator*() { return *ctx_; }
  // A solver of the context, freed on the helper thread too (its clauses are most of the memory).
  void keep(const z3::solver& s) { solvers_.push_back(s); }
  // Terms of the context (any holder of them), freed on the helper thread before it: a wide
  // network's partial encoding, dropped at a time limit, takes seconds to free term by term.
  void keep_terms(std::shared_ptr<void> terms) { terms_.push_back(std::move(terms)); }

 private:
  std::unique_ptr<z3::context> ctx_;
  std::vector<z3::solver> solvers_;
  std::vector<std::shared_ptr<void>> terms_;
};

// Whether a retired context is still being deleted (a process may then exit without waiting).
bool contexts_retiring();

}  // namespace witness
