#include "fairness/complete/search/part_solver.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <utility>

namespace witness {

PartProgress PartProgress::of(const SearchTally& t) {
  return {t.certified + t.open_fair, t.falsified + t.open_unfair, t.invalid, t.leaves};
}

PartProgress PartProgress::of(const CompleteProgress& p) {
  return {p.certified_points, p.falsified_points, p.invalid_points, p.leaves};
}

PartProgress& PartProgress::operator+=(const PartProgress& o) {
  certified += o.certified, falsified += o.falsified, invalid += o.invalid, leaves += o.leaves;
  return *this;
}

std::string PartProgress::text() const {
  return fmt::format("{:a} {:a} {:a} {}", certified, falsified, invalid, leaves);
}

PartProgress PartProgress::parse(const std::string& text) {
  PartProgress p;
  const char* at = text.c_str();
  char* end = nullptr;
  for (long double* v : {&p.certified, &p.falsified, &p.invalid}) {
    *v = std::strtold(at, &end);
    if (end == at || !std::isfinite(*v) || *v < 0.0L) return {};
    at = end;
  }
  p.leaves = std::strtoll(at, &end, 10);
  return p;
}

PartSolver::PartSolver(const RegionEvaluator& regions, SearchSignals& signals, const CompleteSearchOptions& o, Env& env)
    : regions_(regions), signals_(signals), o_(o), env_(env) {
  own_.cancel = &cancel_;
}

PartSolver::~PartSolver() {
  if (thread_.joinable()) {
    cancel_ = true;
    thread_.join();
  }
}

void PartSolver::start(SearchState part, double seconds) {
  cancel_ = false;
  signals_.stop = false;
  done_ = false;
  open_regions_ = static_cast<std::int64_t>(part.tally.left.size());
  {
    std::lock_guard lock(progress_mutex_);
    progress_ = PartProgress::of(part.tally);
  }
  thread_ = std::thread([this, p = std::move(part), seconds]() mutable {
    try {
      RegionScheduler scheduler(regions_, signals_, own_options(), env_);
      if (seconds > 0.0) scheduler.stop_at(env_.elapsed_seconds() + seconds);
      result_ = scheduler.search(std::move(p));
    } catch (...) {
      error_ = std::current_exception();
    }
    done_ = true;
  });
}

PartProgress PartSolver::progress() const {
  std::lock_guard lock(progress_mutex_);
  return progress_;
}

SearchState PartSolver::finish() {
  thread_.join();
  if (error_) std::rethrow_exception(error_);
  return std::move(*result_);
}

const CompleteSearchOptions& PartSolver::own_options() {
  const bool user_cancel = o_.cancel != nullptr && o_.cancel->load();
  if (user_cancel) cancel_ = true;
  own_ = o_;
  own_.cancel = &cancel_;
  own_.checkpoint.clear();
  // The part's own shares are not the run's: kept for the rank's MPI thread, which passes them on.
  own_.progress = [this](const CompleteProgress& p) {
    open_regions_ = p.open_regions;
    std::lock_guard lock(progress_mutex_);
    progress_ = PartProgress::of(p);
  };
  return own_;
}

}  // namespace witness
