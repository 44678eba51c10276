#include "fairness/complete/search/region_scheduler.h"

#include <algorithm>
#include <barrier>
#include <thread>

#include "core/error.h"
#include "core/file.h"
#include "fairness/complete/search/distribution.h"

namespace witness {

namespace {

constexpr std::size_t kPointReports = 4096;  // falsified points of an enumerated region reported one by one

// The heap's order: the largest key first, or while a full queue drains, the smallest.
struct ByKey {
  bool smallest_first = false;
  bool operator()(const SearchRegion& a, const SearchRegion& b) const {
    return smallest_first ? b.key < a.key : a.key < b.key;
  }
};

}  // namespace

RegionScheduler::RegionScheduler(const RegionEvaluator& regions, SearchSignals& signals, const CompleteSearchOptions& o,
                                 Env& env)
    : regions_(regions), signals_(signals), schema_(regions.problem().schema()), o_(o), env_(env) {
  unsigned threads = env.threads();
  if (threads == 0) threads = std::max(1U, std::thread::hardware_concurrency());
  for (unsigned t = 0; t < threads; ++t) queues_.push_back(std::make_unique<Queue>());
  in_flight_.resize(threads);
  rng_.seed(env.seed());
  if (o.quantify)
    answer_.emplace(schema_, regions.problem().protected_features(), o.max_regions, regions.domain_points());
  search_deadline_ = refine_deadline(o, env.options.get_real("time-limit"));
}

double refine_deadline(const CompleteSearchOptions& o, double time_limit) {
  if (time_limit <= 0.0) return 0.0;
  // The estimate of what stays undecided is drawn within the time limit: the search leaves it time.
  if (o.quantify && o.estimate_seconds > 0.0) return time_limit - std::min(o.estimate_seconds, time_limit / 20.0);
  return time_limit;
}

bool RegionScheduler::should_stop() const {
  return env_.expired() || (search_deadline_ > 0.0 && env_.elapsed_seconds() >= search_deadline_) ||
         (o_.cancel != nullptr && o_.cancel->load());
}

void RegionScheduler::save_every(double seconds, std::function<void(const SearchState&)> save) {
  save_seconds_ = seconds;
  save_ = std::move(save);
}

SearchState RegionScheduler::search(std::optional<SearchState> start) {
  // The time limit and the cancel flag raise the stop signal, which long evaluations (bounds of
  // wide networks, enumeration) watch, so a limit is kept to within one layer or one batch. The
  // watchdog waits on a condition variable, so that a run of milliseconds (one box of
  // --near-data) ends without waiting out its polling interval. It also takes the checkpoints.
  bool done = false;
  std::mutex done_mutex;
  std::condition_variable done_cv;
  std::thread watchdog([this, &done, &done_mutex, &done_cv] {
    auto last_save = std::chrono::steady_clock::now();
    std::unique_lock lock(done_mutex);
    while (!done) {
      // The answer gathers the open regions into one list while the queues still hold them.
      env_.set_memory_reserve(static_cast<double>(std::max(0L, pending_.load())) *
                              static_cast<double>(sizeof(SearchRegion)) / 1048576.0);
      if (should_stop()) {
        {
          std::lock_guard tally_lock(mutex_);
          tally_.interrupted = true;
        }
        signals_.stop = true;
        idle_cv_.notify_all();
        return;
      }
      if (save_ && std::chrono::steady_clock::now() - last_save > std::chrono::duration<double>(save_seconds_)) {
        try {
          save_(snapshot());
        } catch (...) {  // a checkpoint that cannot be written ends the run with its error
          std::lock_guard tally_lock(mutex_);
          if (!error_) error_ = std::current_exception();
          signals_.stop = true;
          idle_cv_.notify_all();
          return;
        }
        last_save = std::chrono::steady_clock::now();
      }
      done_cv.wait_for(lock, std::chrono::milliseconds(5));
    }
  });
  auto finish_watchdog = [&] {
    {
      std::lock_guard lock(done_mutex);
      done = true;
    }
    done_cv.notify_all();
    watchdog.join();
    env_.set_memory_reserve(0.0);
  };
  const std::unique_ptr<RegionScratch> first_scratch = regions_.scratch();
  try {
    if (start) {
      restore(std::move(*start));
    } else {
      SearchRegion whole = regions_.whole();
      std::optional<RegionOutcome> first;
      if (should_stop()) {
        tally_.interrupted = true;
      } else {
        try {
          first = regions_.begin(whole, first_scratch.get());
        } catch (const Interrupted&) {
          first.reset();
        }
      }
      if (first) {
        commit(0, nullptr, std::move(*first), false, first_scratch.get());
      } else {  // nothing decided: all undecided
        tally_.left.push_back(std::move(whole));
      }
    }
  } catch (...) {
    finish_watchdog();
    throw;
  }
  if (pending_.load() > 0 && !signals_.stop.load() && !o_.quantify && queues_.size() > 1) {
    work_in_rounds(first_scratch.get());
  } else if (pending_.load() > 0 && !signals_.stop.load()) {
    // Own threads rather than TBB tasks: the anytime answer needs each worker to take the region
    // of largest undecided measure next (witness hunting: the newest), across all queues when
    // idle; TBB's scheduler runs tasks LIFO/FIFO by spawn, with no such order or global view.
    std::vector<std::thread> pool;
    std::vector<std::unique_ptr<RegionScratch>> scratches;
    for (unsigned t = 1; t < queues_.size(); ++t) {
      scratches.push_back(regions_.scratch());
      pool.emplace_back([this, t, s = scratches.back().get()] { work(t, s); });
    }
    work(0, first_scratch.get());
    for (auto& t : pool) t.join();
  }
  finish_watchdog();
  if (error_) std::rethrow_exception(error_);
  SearchState final_state;
  final_state.part = part_, final_state.parts = parts_, final_state.header = header_;
  final_state.answer = answer_ ? answer_->parts() : QuantifyAnswer::Parts{};
  final_state.tally = std::move(tally_);
  // Sized once, and each queue's storage freed as it is emptied: a run stopped at its memory limit
  // with 200,000 regions open would otherwise hold them twice over while the vector doubled.
  std::size_t open = final_state.tally.left.size();
  for (auto& q : queues_) open += q->heap.size();
  final_state.tally.left.reserve(open);
  for (auto& q : queues_) {
    for (SearchRegion& g : q->heap) final_state.tally.left.push_back(std::move(g));
    std::vector<SearchRegion>().swap(q->heap);
  }
  if (save_) save_(final_state);
  return final_state;
}

void RegionScheduler::restore(SearchState start) {
  part_ = start.part, parts_ = start.parts, header_ = std::move(start.header);
  std::vector<SearchRegion> frontier = std::move(start.tally.left);
  tally_ = std::move(start.tally);
  tally_.left.clear();
  tally_.interrupted = false;
  if (static_cast<int>(tally_.witnesses.size()) > signals_.max_witnesses())
    tally_.witnesses.resize(static_cast<std::size_t>(signals_.max_witnesses()));
  signals_.witnesses_found = static_cast<int>(tally_.witnesses.size());
  if (answer_ && !answer_->join(start.answer))
    throw InputError("a saved search state's quantify answer does not fit this question");
  if (!o_.quantify && !signals_.wants_witnesses()) {  // the verdict is known: nothing to search
    tally_.left = std::move(frontier);
    return;
  }
  for (std::size_t k = 0; k < frontier.size(); ++k) {
    ++pending_;
    push(static_cast<unsigned>(k % queues_.size()), std::move(frontier[k]));
  }
}

SearchState RegionScheduler::snapshot() {
  const std::unique_lock frontier(frontier_mutex_);
  SearchState s;
  s.part = part_, s.parts = parts_, s.header = header_;
  {
    std::lock_guard lock(mutex_);
    s.tally = tally_;
    if (answer_) s.answer = answer_->parts();
    for (RankedWitness& w : first_ahead(tally_.witnesses)) s.tally.witnesses.push_back(std::move(w.pair));
  }
  for (auto& q : queues_) {
    std::lock_guard lock(q->mutex);
    s.tally.left.insert(s.tally.left.end(), q->heap.begin(), q->heap.end());
  }
  for (const std::optional<SearchRegion>& r : in_flight_)
    if (r) s.tally.left.push_back(*r);
  return s;
}

FairnessResult RegionScheduler::answer(SearchState state) const {
  std::optional<QuantifyAnswer> a;
  if (o_.quantify) {
    a.emplace(schema_, regions_.problem().protected_features(), o_.max_regions, regions_.domain_points());
    if (!a->join(state.answer)) throw InputError("a search state's quantify answer does not fit this question");
  }
  env_.stats.set("complete.drained_queues", static_cast<double>(drains_.load()));
  return search_result(std::move(state.tally), regions_, schema_, a, o_, env_);
}

void RegionScheduler::push(unsigned id, SearchRegion r) {
  Queue& q = *queues_[id];
  std::lock_guard lock(q.mutex);
  q.heap.push_back(std::move(r));
  std::push_heap(q.heap.begin(), q.heap.end(), ByKey{q.draining});
}

bool RegionScheduler::take_from(Queue& q, SearchRegion& r) {
  std::lock_guard lock(q.mutex);
  if (q.heap.empty()) return false;
  std::pop_heap(q.heap.begin(), q.heap.end(), ByKey{q.draining});
  r = std::move(q.heap.back());
  q.heap.pop_back();
  if (q.draining && q.heap.size() <= q.drained) {  // drained: the largest first again
    q.draining = false;
    std::make_heap(q.heap.begin(), q.heap.end(), ByKey{});
  }
  return true;
}

bool RegionScheduler::pop(unsigned id, SearchRegion& r) {
  while (!signals_.stop.load()) {
    {
      const std::shared_lock frontier(frontier_mutex_);
      bool taken = take_from(*queues_[id], r);
      if (!taken) {  // steal from the queue whose best region is largest
        std::size_t victim = queues_.size();
        double best = -INFINITY;
        for (std::size_t v = 0; v < queues_.size(); ++v) {
          std::lock_guard lock(queues_[v]->mutex);
          if (!queues_[v]->heap.empty() && queues_[v]->heap.front().key > best)
            best = queues_[v]->heap.front().key, victim = v;
        }
        taken = victim < queues_.size() && take_from(*queues_[victim], r);
      }
      if (taken) {
        if (save_) in_flight_[id] = r;  // only snapshots read it
        return true;
      }
    }
    if (pending_.load() == 0) return false;
    std::unique_lock lock(idle_mutex_);
    idle_cv_.wait_for(lock, std::chrono::milliseconds(2));
  }
  return false;
}

void RegionScheduler::commit(unsigned id, const SearchRegion* parent, RegionOutcome out, bool stuck_parent,
                             RegionScratch* scratch) {
  const std::shared_lock frontier(frontier_mutex_);
  in_flight_[id].reset();
  std::vector<SearchRegion> to_push;
  {
    std::lock_guard lock(mutex_);
    SearchTally& t = tally_;
    if (parent != nullptr && !stuck_parent) {
      t.open_fair -= parent->fair;
      t.open_unfair -= parent->unfair;
    }
    if (stuck_parent) t.left.push_back(*parent);
    t.counters += out.counters;
    t.invalid += out.invalid;
    for (auto& w : out.witnesses) {
      if (static_cast<int>(t.witnesses.size()) >= signals_.max_witnesses()) break;
      const bool seen =
          std::any_of(t.witnesses.begin(), t.witnesses.end(), [&w](const WitnessPair& o) { return same_people(o, w); });
      if (!seen) t.witnesses.push_back(std::move(w));
    }
    signals_.witnesses_found = static_cast<int>(t.witnesses.size());
    for (ClosedRegion& c : out.closed) {
      ++t.leaves;
      t.certified += c.certified;
      t.falsified += c.falsified;
      t.inexact = t.inexact || c.inexact;
      if (!answer_ || c.falsified <= 0.0L) continue;
      if (!c.all_falsified && !c.unfair_points.empty() && c.unfair_points.size() <= kPointReports) {
        // Single points, merged into boxes at the end: crisp rules instead of a share of a box.
        for (const Eigen::VectorXd& p : c.unfair_points) answer_->add_falsified(p, p, 1.0L, 1.0L, true);
      } else if (!c.all_falsified && !c.unfair_by_value.empty()) {
        answer_->add_falsified_by_value(c.lo, c.hi, c.measure, c.falsified, c.unfair_by_value, c.unfair_run_ends);
      } else {
        answer_->add_falsified(c.lo, c.hi, c.measure, c.falsified, c.all_falsified);
      }
    }
    for (SearchRegion& c : out.open) {
      t.open_fair += c.fair;
      t.open_unfair += c.unfair;
      to_push.push_back(std::move(c));
    }
    if (!o_.quantify && static_cast<int>(t.witnesses.size()) >= signals_.max_witnesses()) signals_.stop = true;
    if (should_stop()) {
      t.interrupted = true;
      signals_.stop = true;
    }
  }
  pending_ += static_cast<long>(to_push.size());
  for (SearchRegion& c : to_push) push(id, std::move(c));
  if (stop_open_ > 0 && static_cast<std::size_t>(std::max(0L, pending_.load())) >= stop_open_) signals_.stop = true;
  if (parent != nullptr) --pending_;
  idle_cv_.notify_all();
  evict(id, scratch);
}

// Keeps the queues within the evaluator's cap. Where every region closes after finitely many
// refinements (trees) and the run has no time limit, a full queue is drained instead: the
// smallest regions first (depth first, so the queue stops growing) until half of it is left, and
// nothing is lost, so the count ends exact. Under a time limit draining would spend the time on
// small regions (Adult, 100 trees of depth 4 at 60 s: 5.3 -> 10.7% undecided for
// HistGradientBoosting, 29.7 -> 44.4% for GradientBoosting), so there, as for networks, the
// regions with the least undecided measure (the smallest keys) are dropped for good. Their
// measure stays undecided, with what counting showed of them; memory stays bounded. For
// --quantify, points drawn in them as they go keep the estimate of the undecided share about them.
void RegionScheduler::evict(unsigned id, RegionScratch* scratch) {
  const std::size_t cap = std::max<std::size_t>(64, regions_.max_open() / queues_.size());
  Queue& q = *queues_[id];
  std::vector<SearchRegion> out;
  {
    std::lock_guard lock(q.mutex);
    if (q.heap.size() <= cap) return;
    if (regions_.closes_every_region() && search_deadline_ <= 0.0) {
      if (!q.draining) {
        ++drains_;
        q.draining = true;
        q.drained = cap / 2;
        std::make_heap(q.heap.begin(), q.heap.end(), ByKey{true});
      }
      return;
    }
    auto by_key = [](const SearchRegion& a, const SearchRegion& b) { return a.key > b.key; };
    std::nth_element(q.heap.begin(), q.heap.begin() + static_cast<std::ptrdiff_t>(cap / 2), q.heap.end(), by_key);
    out.assign(std::make_move_iterator(q.heap.begin() + static_cast<std::ptrdiff_t>(cap / 2)),
               std::make_move_iterator(q.heap.end()));
    q.heap.resize(cap / 2);
    std::make_heap(q.heap.begin(), q.heap.end(), ByKey{});
  }
  pending_ -= static_cast<long>(out.size());
  const bool estimate = o_.quantify && o_.estimate_seconds > 0.0;
  std::int64_t draw = 0;
  long double rate = 0.0L;
  std::uint64_t seed = 0;
  {
    std::lock_guard lock(mutex_);
    tally_.evicted += static_cast<std::int64_t>(out.size());
    for (const SearchRegion& r : out) {
      tally_.evicted_measure += r.measure;
      tally_.evicted_fair += r.fair;
      tally_.evicted_unfair += r.unfair;
    }
    if (answer_)
      for (const SearchRegion& r : out) answer_->add_marginal(r.lo, r.hi, r.unfair);
    if (!estimate) return;
    draw = tally_.evicted_sample.plan(out, rng_);
    rate = tally_.evicted_sample.rate;
    seed = rng_();
  }
  // Decided outside the lock; the sample's rate may halve meanwhile, and add() thins to it.
  const std::int64_t unfair = unfair_among_drawn(regions_, schema_, out, draw, seed, scratch);
  std::lock_guard lock(mutex_);
  tally_.evicted_sample.add(rate, draw, unfair, rng_);
}

void RegionScheduler::report_progress(std::chrono::steady_clock::time_point& last) {
  const auto now = std::chrono::steady_clock::now();
  if (now - last <= std::chrono::milliseconds(250)) return;
  last = now;
  CompleteProgress p;
  {
    std::lock_guard lock(mutex_);
    const long double valid = tally_.valid(regions_.domain_points());
    p.certified_points = tally_.certified + tally_.open_fair;
    p.falsified_points = tally_.falsified + tally_.open_unfair;
    p.invalid_points = tally_.invalid;
    p.certified = static_cast<double>(p.certified_points / valid);
    p.falsified = static_cast<double>(p.falsified_points / valid);
    p.leaves = tally_.leaves;
    p.open_regions = pending_.load();
    p.seconds = env_.elapsed_seconds();
  }
  o_.progress(p);
}

void RegionScheduler::work(unsigned id, RegionScratch* scratch) {
  auto last_progress = std::chrono::steady_clock::now();
  SearchRegion r;
  while (pop(id, r)) {
    RegionOutcome out;
    bool stuck = false;
    try {
      out = regions_.refine(r, scratch);
      if (out.stuck) {
        std::lock_guard lock(mutex_);
        ++tally_.slivers;
        stuck = true;
      }
    } catch (const Interrupted&) {  // the region goes back undecided, as it was
      out = RegionOutcome{};
      stuck = true;
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::current_exception();
      signals_.stop = true;
      --pending_;
      idle_cv_.notify_all();
      return;
    }
    commit(id, &r, std::move(out), stuck, scratch);
    if (id == 0 && o_.progress) report_progress(last_progress);
  }
}

// The evaluator keyed the children by when it made them, which for parallel workers depends on
// timing. New keys, the children's own order kept, make the next rounds repeatable.
void RegionScheduler::rekey(std::vector<SearchRegion>& children) const {
  std::vector<SearchRegion*> by_key;
  by_key.reserve(children.size());
  for (SearchRegion& c : children) by_key.push_back(&c);
  std::sort(by_key.begin(), by_key.end(), [](const SearchRegion* a, const SearchRegion* b) { return a->key < b->key; });
  for (SearchRegion* c : by_key) c->key = signals_.next_sequence();
}

bool RegionScheduler::take_round(std::vector<std::optional<SearchRegion>>& batch, double after) {
  if (signals_.stop.load()) return false;
  const std::shared_lock frontier(frontier_mutex_);
  bool any = false;
  for (std::size_t slot = 0; slot < batch.size(); ++slot) {
    std::size_t best_queue = queues_.size();
    double best = after;
    for (std::size_t v = 0; v < queues_.size(); ++v)
      if (!queues_[v]->heap.empty() && queues_[v]->heap.front().key > best)
        best = queues_[v]->heap.front().key, best_queue = v;
    SearchRegion r;
    if (best_queue == queues_.size() || !take_from(*queues_[best_queue], r)) break;
    if (save_) in_flight_[slot] = r;  // only snapshots read it
    batch[slot] = std::move(r);
    any = true;
  }
  return any;
}

void RegionScheduler::work_in_rounds(RegionScratch* first_scratch) {
  const auto width = static_cast<unsigned>(queues_.size());
  std::vector<std::unique_ptr<RegionScratch>> own;
  std::vector<RegionScratch*> scratch{first_scratch};
  for (unsigned t = 1; t < width; ++t) {
    own.push_back(regions_.scratch());
    scratch.push_back(own.back().get());
  }
  std::vector<std::optional<SearchRegion>> batch(width);
  std::vector<RegionOutcome> outs(width);
  std::vector<char> stuck(width, 0), sliver(width, 0);
  std::vector<std::exception_ptr> errors(width);
  auto refine_slot = [&](unsigned t) {
    if (!batch[t]) return;
    try {
      outs[t] = regions_.refine(*batch[t], scratch[t]);
      sliver[t] = stuck[t] = outs[t].stuck ? 1 : 0;
    } catch (const Interrupted&) {  // the region goes back undecided, as it was
      outs[t] = RegionOutcome{};
      stuck[t] = 1;
    } catch (...) {
      errors[t] = std::current_exception();
    }
  };
  bool quit = false;
  std::barrier sync(static_cast<std::ptrdiff_t>(width));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < width; ++t) {
    pool.emplace_back([&, t] {
      for (;;) {
        sync.arrive_and_wait();  // a round is dealt (or the search is over)
        if (quit) return;
        refine_slot(t);
        sync.arrive_and_wait();  // every slot refined
      }
    });
  }
  auto last_progress = std::chrono::steady_clock::now();
  double after = -INFINITY;  // regions keyed at most this come after enough witnesses
  for (;;) {
    quit = !take_round(batch, after);
    sync.arrive_and_wait();
    if (quit) break;
    refine_slot(0);
    sync.arrive_and_wait();
    rank_witnesses(outs);
    for (unsigned t = 0; t < width; ++t) {
      if (!batch[t]) continue;
      if (errors[t]) {
        std::lock_guard lock(mutex_);
        if (!error_) error_ = errors[t];
        signals_.stop = true;
        --pending_;
      } else {
        if (sliver[t] != 0) {
          std::lock_guard lock(mutex_);
          ++tally_.slivers;
        }
        commit(t, &*batch[t], std::move(outs[t]), stuck[t] != 0, scratch[t]);
      }
      batch[t].reset();
      outs[t] = RegionOutcome{};
      stuck[t] = sliver[t] = 0;
      errors[t] = nullptr;
    }
    after = confirm_witnesses(false);
    if (o_.progress) report_progress(last_progress);
  }
  for (auto& t : pool) t.join();
  confirm_witnesses(true);  // cut short (time, errors): what was found ahead still counts
}

// Depth first (one thread), the children of a region come next, the newest first: keys in order of
// creation. A round refines the regions of the largest keys; keying the last slot's children first
// and the first slot's last keeps every open region's key its depth-first place. A region's
// witnesses come before its children and after the children of the slots before it.
void RegionScheduler::rank_witnesses(std::vector<RegionOutcome>& outs) {
  std::lock_guard lock(mutex_);
  for (std::size_t t = outs.size(); t-- > 0;) {
    rekey(outs[t].open);
    if (outs[t].witnesses.empty()) continue;
    const double rank = signals_.next_sequence();
    for (std::size_t i = 0; i < outs[t].witnesses.size(); ++i)
      ahead_.push_back(RankedWitness{rank, i, std::move(outs[t].witnesses[i])});
    outs[t].witnesses.clear();
  }
}

std::vector<RegionScheduler::RankedWitness> RegionScheduler::first_ahead(const std::vector<WitnessPair>& before) const {
  std::vector<const RankedWitness*> order;
  order.reserve(ahead_.size());
  for (const RankedWitness& w : ahead_) order.push_back(&w);
  std::sort(order.begin(), order.end(), [](const RankedWitness* a, const RankedWitness* b) {
    return a->rank > b->rank || (a->rank == b->rank && a->index < b->index);
  });
  std::vector<RankedWitness> first;
  for (const RankedWitness* w : order) {
    if (before.size() + first.size() >= static_cast<std::size_t>(signals_.max_witnesses())) break;
    const bool seen =
        std::any_of(before.begin(), before.end(), [&](const WitnessPair& b) { return same_people(b, w->pair); }) ||
        std::any_of(first.begin(), first.end(), [&](const RankedWitness& f) { return same_people(f.pair, w->pair); });
    if (!seen) first.push_back(*w);
  }
  return first;
}

double RegionScheduler::first_open_key() {
  double first = -INFINITY;
  for (auto& q : queues_) {
    std::lock_guard lock(q->mutex);
    if (q->heap.empty()) continue;
    if (!q->draining) {
      first = std::max(first, q->heap.front().key);
    } else {  // smallest first while draining
      for (const SearchRegion& r : q->heap) first = std::max(first, r.key);
    }
  }
  return first;
}

double RegionScheduler::confirm_witnesses(bool final) {
  const std::shared_lock frontier(frontier_mutex_);
  const double first_open = final ? -INFINITY : first_open_key();
  std::lock_guard lock(mutex_);
  std::vector<RankedWitness> first = first_ahead(tally_.witnesses);
  std::size_t confirmed = 0;
  for (; confirmed < first.size() && first[confirmed].rank > first_open; ++confirmed)
    tally_.witnesses.push_back(std::move(first[confirmed].pair));
  first.erase(first.begin(), first.begin() + static_cast<std::ptrdiff_t>(confirmed));
  ahead_ = std::move(first);
  signals_.witnesses_found = static_cast<int>(tally_.witnesses.size());
  const auto wanted = static_cast<std::size_t>(signals_.max_witnesses());
  if (tally_.witnesses.size() >= wanted) {
    signals_.stop = true;
    return INFINITY;
  }
  return tally_.witnesses.size() + ahead_.size() < wanted ? -INFINITY : ahead_.back().rank;
}

std::vector<SearchState> split_search(const RegionEvaluator& regions, SearchSignals& signals,
                                      const CompleteSearchOptions& o, int parts, Env& env) {
  if (parts < 1) throw InputError("--split-into: expected at least 1 part");
  RegionScheduler scheduler(regions, signals, o, env);
  scheduler.stop_when_open(4 * static_cast<std::size_t>(parts));
  return divide_search_state(scheduler.search(), parts, regions.domain_points());
}

FairnessResult schedule_search(const RegionEvaluator& regions, SearchSignals& signals, const CompleteSearchOptions& o,
                               Env& env) {
  if (const DistributedSearch spanning = installed_distributed_search()) return spanning(regions, signals, o, env);
  RegionScheduler scheduler(regions, signals, o, env);
  const SearchQuestion question{regions.problem(), o.quantify};
  std::optional<SearchState> start;
  if (o.start) {
    start = *o.start;
  } else if (!o.resume.empty()) {
    start = read_search_state(o.resume, question);
  }
  if (o.answer_only) {
    if (!start) throw InternalError("an answer without a search needs a saved state");
    return scheduler.answer(std::move(*start));
  }
  if (!o.checkpoint.empty()) {
    check_writable(o.checkpoint);
    scheduler.save_every(o.checkpoint_seconds, [&o, &question, &env](const SearchState& s) {
      const double t0 = env.elapsed_seconds();
      write_search_state(o.checkpoint, s, question);
      env.log(1, "checkpoint: {} open regions saved to {} in {:.2f} s", s.tally.left.size(), o.checkpoint,
              env.elapsed_seconds() - t0);
    });
  }
  return scheduler.answer(scheduler.search(std::move(start)));
}

}  // namespace witness
