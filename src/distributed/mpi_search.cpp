#include "distributed/mpi_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.h"
#include "fairness/complete/search/part_solver.h"
#include "fairness/complete/search/region_scheduler.h"
#include "fairness/complete/search/search_state.h"
#include "fairness/complete/search/search_state_bytes.h"

#ifdef WITNESS_HAVE_MPI
#include <mpi.h>
#endif

namespace witness {

#ifndef WITNESS_HAVE_MPI

bool distributed_built() { return false; }
void distributed_start() {}
void distributed_stop() {}
int distributed_rank() { return 0; }
int distributed_size() { return 1; }
FairnessResult distributed_search(const RegionEvaluator& /*regions*/, SearchSignals& /*signals*/,
                                  const CompleteSearchOptions& /*o*/, Env& /*env*/) {
  throw InternalError("witness was built without MPI");
}

#else

namespace {

// kYield: hand the part back unfinished (rank 0 divides it with an idle rank).
// kProgress: what a worker's part has decided so far (rank 0 adds the parts up for the run's progress).
enum Tag : int { kRequest = 1, kPart = 2, kResult = 3, kStop = 4, kNone = 5, kYield = 6, kProgress = 7 };
constexpr int kPartsPerRank = 8;
constexpr double kLeastHeldSeconds = 0.1;  // a part is not asked back sooner
// Nor this close to the parts' deadline: moving a part costs up to a second (states of 200,000 open
// regions, there and back), and a part handed out past it would return untouched; a run of 20 s that divided a part
// at its end overran its limit by the hard deadline's 2.5 s and answered inconclusive.
constexpr double kLeastMovingSeconds = 1.0;
// Between polls of MPI: each poll runs OpenMPI's progress engine, and at 200 us the two ranks of an
// exact 5 s run spent 0.9 s of CPU polling (6.5 s against 5.6 s at 2 ms) on cores their solvers need.
constexpr std::chrono::milliseconds kPollPause{2};
// What moving one open region back to rank 0 costs (writing, sending and checking 160,000 regions
// of GC1 took 0.7 s): a worker ends its slice early by this much per open region, so that its part
// arrives when the slice ends, not a second later (the end of a run is such an end).
constexpr double kMovingSecondsPerRegion = 5e-6;
// Between reports of the run's progress (and workers' reports to rank 0).
constexpr double kProgressSeconds = 0.25;
bool started_by_launcher() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}

bool mpi_running() {
  int init = 0, done = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&done);
  return init != 0 && done == 0;
}

void send_text(int to, int tag, const std::string& text) {
  if (text.size() > static_cast<std::size_t>(INT32_MAX))
    throw InputError(fmt::format("a sub-problem's state of {} MB is too large for one MPI message", text.size() >> 20));
  MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD);
}

std::string receive_text(const MPI_Status& probed) {
  int n = 0;
  MPI_Get_count(&probed, MPI_CHAR, &n);
  std::string text(static_cast<std::size_t>(n), '\0');
  MPI_Recv(text.data(), n, MPI_CHAR, probed.MPI_SOURCE, probed.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return text;
}

bool witness_ends_search(const SearchState& s, const CompleteSearchOptions& o) {
  return !o.quantify && !s.tally.witnesses.empty();
}

// Rank 0's view of who solves what: worker ranks 1..size-1 and its own solver thread (index 0).
struct Holder {
  bool holding = false;   // solving a part
  bool yielding = false;  // asked to hand its part back, to be divided with an idle rank
  bool waiting = false;   // a worker rank that asked for a part when none was left
  bool retired = false;   // told there is no more
  double since = 0.0;     // when it got its part
  PartProgress progress;  // what its part has decided so far (a worker's last report)
};

// Rank 0's side of the search: hands the parts out (to worker ranks and its own solver thread),
// takes them back, divides a part asked back among idle ranks, reports progress and joins the
// results into one answer.
class Coordinator {
 public:
  Coordinator(const RegionEvaluator& regions, SearchSignals& signals, const CompleteSearchOptions& o, Env& env,
              const SearchQuestion& question, int size)
      : regions_(regions),
        signals_(signals),
        o_(o),
        env_(env),
        question_(question),
        size_(size),
        limit_(env.options.get_real("time-limit")),
        at_(static_cast<std::size_t>(size)),
        local_(regions, signals, o, env),
        deadline_(refine_deadline(o, limit_)) {}

  FairnessResult run() {
    // A quantification under a time limit keeps one part on each rank until the limit, its regions
    // refined largest undecided first as one process's queue refines them: its shares at any moment
    // are those of one process with a queue per rank. Parts that wait for a turn lag (GC1: 90%
    // certified after 8 s with 2 ranks and 8 parts each, after 1 s with 2 threads), and parts given
    // their time in slices lose the order (AC4: 51-53% certified at 20 s against 53-54% resident).
    const int parts_per_rank = o_.quantify && limit_ > 0.0 ? 1 : kPartsPerRank;
    for (SearchState& part : split_search(regions_, signals_, o_, parts_per_rank * size_, env_))
      waiting_.push_back(std::move(part));
    signals_.stop = false;
    while (step()) {
    }
    return answer();
  }

 private:
  // Results of a quantification that ended on their own, parsed when rank 0 has nothing else to do:
  // checking a state of 100,000 open regions takes a tenth of a second, which its rank would otherwise
  // spend waiting for its next part (a verdict search parses at once, to stop at a witness).
  struct Unparsed {
    int rank;
    std::string text;
    PartProgress last;  // its rank's last report, standing for it in the progress until parsed
  };

  SearchState parse_result(int r, const std::string& text) const {
    return parse_search_state_bytes(text, fmt::format("rank {}'s result", r), question_);
  }
  // Under a time limit each part gets a slice of it (the time left over the rounds of parts still
  // waiting), so that every part is refined, not only the first ones handed out: a part that runs
  // to the limit would leave the others wholly undecided.
  [[nodiscard]] bool late(double margin) const {
    return deadline_ > 0.0 && env_.elapsed_seconds() + margin >= deadline_;
  }
  [[nodiscard]] double slice() const {
    if (limit_ <= 0.0) return 0.0;
    const double rounds = std::ceil(static_cast<double>(waiting_.size()) / static_cast<double>(size_) - 1e-9);
    return std::max(0.01, (limit_ - env_.elapsed_seconds()) / std::max(1.0, rounds));
  }
  void stop_all() {
    if (stopping_) return;
    stopping_ = true;
    local_.cancel();
    for (int r = 1; r < size_; ++r)
      if (at_[static_cast<std::size_t>(r)].holding) send_text(r, kStop, "");
  }
  void hand_out(int r) {
    Holder& h = at_[static_cast<std::size_t>(r)];
    h.holding = true, h.waiting = false, h.since = env_.elapsed_seconds();
    SearchState& part = waiting_.front();
    h.progress = PartProgress::of(part.tally);
    const double seconds = slice();
    env_.log(2, "mpi: rank {} gets a part of {} open regions ({} waiting) for {:.2f} s", r, part.tally.left.size(),
             waiting_.size() - 1, seconds);
    if (r == 0) {
      local_.start(std::move(part), seconds);
    } else {
      send_text(r, kPart, fmt::format("{:.17g}\n", seconds) + search_state_bytes(std::move(part), question_));
    }
    waiting_.pop_front();
  }
  // A part back from rank r. One it was asked to yield, unfinished, is divided: a piece for each
  // idle rank and one for r (region stealing; the regions are the same as one process's).
  void take_back(int r, SearchState s) {
    Holder& h = at_[static_cast<std::size_t>(r)];
    h.holding = false;
    const bool yielded = std::exchange(h.yielding, false);
    if (witness_ends_search(s, o_)) stop_all();
    env_.log(2, "mpi: rank {} {} its part, {} regions open", r, yielded ? "yields" : "ends", s.tally.left.size());
    if (!yielded || stopping_ || late(kLeastMovingSeconds) || s.tally.left.empty()) {
      results_.push_back(std::move(s));
      return;
    }
    ++divided_;
    // What was closed stays here (it is not sent again); the open regions go out in pieces.
    const auto idle =
        static_cast<int>(std::count_if(at_.begin(), at_.end(), [](const Holder& x) { return x.waiting; }));
    std::vector<SearchState> pieces = divide_search_state(std::move(s), 2 + idle, regions_.domain_points(), true);
    results_.push_back(std::move(pieces[0]));
    for (std::size_t k = 1; k < pieces.size(); ++k)
      if (!pieces[k].tally.left.empty()) waiting_.push_back(std::move(pieces[k]));
  }
  // An idle rank is waiting and nothing is left to hand out: the part held longest is asked back.
  void steal() {
    if (stopping_ || !waiting_.empty() || late(kLeastMovingSeconds)) return;
    if (std::any_of(at_.begin(), at_.end(), [](const Holder& x) { return x.yielding; })) return;
    // Not a part just handed out (it would come back before doing anything).
    int victim = -1;
    for (int r = 0; r < size_; ++r) {
      const Holder& h = at_[static_cast<std::size_t>(r)];
      if (h.holding && env_.elapsed_seconds() - h.since >= kLeastHeldSeconds &&
          (victim < 0 || h.since < at_[static_cast<std::size_t>(victim)].since))
        victim = r;
    }
    if (victim < 0) return;
    at_[static_cast<std::size_t>(victim)].yielding = true;
    env_.log(2, "mpi: rank {}'s part is asked back", victim);
    if (victim == 0) {
      local_.cancel();
    } else {
      send_text(victim, kYield, "");
    }
  }
  // The run's progress: every part's, handed out or not (a part's state holds what was decided
  // before it was handed out, so nothing counts twice).
  void report() {
    if (!o_.progress || env_.elapsed_seconds() - last_report_ < kProgressSeconds) return;
    last_report_ = env_.elapsed_seconds();
    PartProgress sum;
    for (const SearchState& s : results_) sum += PartProgress::of(s.tally);
    for (const SearchState& q : waiting_) sum += PartProgress::of(q.tally);
    for (const Unparsed& u : unparsed_) sum += u.last;
    for (int r = 1; r < size_; ++r)
      if (at_[static_cast<std::size_t>(r)].holding) sum += at_[static_cast<std::size_t>(r)].progress;
    if (local_.busy()) sum += local_.progress();
    const long double valid = std::max(1.0L, regions_.domain_points() - sum.invalid);
    CompleteProgress p;
    p.certified_points = sum.certified, p.falsified_points = sum.falsified, p.invalid_points = sum.invalid;
    p.certified = static_cast<double>(sum.certified / valid);
    p.falsified = static_cast<double>(sum.falsified / valid);
    p.leaves = sum.leaves;
    p.seconds = env_.elapsed_seconds();
    o_.progress(p);
  }
  // One round of the loop; false once every rank is retired and nothing is left.
  bool step() {
    report();
    if (env_.expired() || (o_.cancel != nullptr && o_.cancel->load())) stop_all();
    if (local_.busy() && local_.done()) take_back(0, local_.finish());
    const bool closed = stopping_ || late(0.0);  // no more handing out
    if (!local_.busy() && !closed && !waiting_.empty()) hand_out(0);
    at_[0].waiting = !local_.busy() && !closed;
    for (int r = 1; r < size_ && !waiting_.empty() && !closed; ++r)
      if (at_[static_cast<std::size_t>(r)].waiting) hand_out(r);
    const bool anyone_holds = std::any_of(at_.begin(), at_.end(), [](const Holder& x) { return x.holding; });
    // Ranks that asked when nothing was left, and nothing can come back to divide: no more work.
    for (int r = 1; r < size_; ++r) {
      Holder& h = at_[static_cast<std::size_t>(r)];
      if (h.waiting && (closed || (waiting_.empty() && !anyone_holds))) {
        send_text(r, kNone, "");
        h.waiting = false, h.retired = true;
      }
    }
    if (std::any_of(at_.begin(), at_.end(), [](const Holder& x) { return x.waiting; })) steal();
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (flag != 0) {
      std::string text = receive_text(st);
      Holder& h = at_[static_cast<std::size_t>(st.MPI_SOURCE)];
      if (st.MPI_TAG == kProgress) {
        if (h.holding) h.progress = PartProgress::parse(text);
      } else if (st.MPI_TAG == kResult && o_.quantify && !h.yielding) {
        h.holding = false;
        env_.log(2, "mpi: rank {} ends its part", st.MPI_SOURCE);
        unparsed_.push_back({st.MPI_SOURCE, std::move(text), h.progress});
      } else if (st.MPI_TAG == kResult) {
        take_back(st.MPI_SOURCE, parse_result(st.MPI_SOURCE, text));
      } else if (st.MPI_TAG == kRequest) {
        h.waiting = true;
      }
      return true;
    }
    // Only while every worker rank is busy: one that just sent its result is about to ask for more.
    const bool workers_busy =
        std::all_of(at_.begin() + 1, at_.end(), [](const Holder& x) { return x.holding || x.retired; });
    if (!unparsed_.empty() && workers_busy) {
      results_.push_back(parse_result(unparsed_.front().rank, unparsed_.front().text));
      unparsed_.pop_front();
      return true;
    }
    const bool all_retired = std::all_of(at_.begin() + 1, at_.end(), [](const Holder& x) { return x.retired; });
    if (all_retired && !local_.busy() && (waiting_.empty() || closed)) return false;
    std::this_thread::sleep_for(kPollPause);
    return true;
  }
  FairnessResult answer() {
    for (const Unparsed& u : unparsed_) results_.push_back(parse_result(u.rank, u.text));
    for (SearchState& q : waiting_) results_.push_back(std::move(q));  // never handed out: still open
    env_.stats.set("mpi.ranks", size_);
    env_.stats.set("mpi.divided", divided_);
    // Divided parts make more pieces than the first split: numbered afresh for the join.
    for (std::size_t k = 0; k < results_.size(); ++k) {
      results_[k].part = static_cast<int>(k);
      results_[k].parts = static_cast<int>(results_.size());
    }
    RegionScheduler answerer(regions_, signals_, o_, env_);
    // The ranks' parts are this process's own making: their accounts are checked as they arrive,
    // their regions' disjointness is not checked again.
    return answerer.answer(join_search_states(std::move(results_), {"mpirun"}, question_, false));
  }

  const RegionEvaluator& regions_;
  SearchSignals& signals_;
  const CompleteSearchOptions& o_;
  Env& env_;
  const SearchQuestion& question_;
  const int size_;
  const double limit_;
  std::deque<SearchState> waiting_;
  std::vector<SearchState> results_;
  std::deque<Unparsed> unparsed_;
  std::vector<Holder> at_;
  bool stopping_ = false;
  int divided_ = 0;  // parts asked back and divided
  PartSolver local_;
  const double deadline_;
  double last_report_ = 0.0;
};

FairnessResult coordinate(const RegionEvaluator& regions, SearchSignals& signals, const CompleteSearchOptions& o,
                          Env& env, const SearchQuestion& question, int size) {
  return Coordinator(regions, signals, o, env, question, size).run();
}

// Rank 0's answer to a request: a part or kNone. A stop or yield meant for a part this rank has
// already finished may come first and is dropped. Polled with pauses: a blocking probe spins a core, which
// oversubscribed ranks (and the solver threads beside them) cannot spare.
std::pair<int, std::string> reply_from_rank0() {
  while (true) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (flag == 0) {
      std::this_thread::sleep_for(kPollPause);
      continue;
    }
    std::string text = receive_text(st);
    if (st.MPI_TAG == kPart || st.MPI_TAG == kNone) return {st.MPI_TAG, std::move(text)};
  }
}

void work(const RegionEvaluator& regions, SearchSignals& signals, const CompleteSearchOptions& o, Env& env,
          const SearchQuestion& question) {
  PartSolver solver(regions, signals, o, env);
  while (true) {
    send_text(0, kRequest, "");
    const auto [tag, text] = reply_from_rank0();
    if (tag == kNone) return;
    const std::size_t eol = text.find('\n');  // the part's time slice, then its state
    if (eol == std::string::npos) throw InternalError("rank 0 sent a sub-problem without its time slice");
    const double seconds = std::stod(text.substr(0, eol));
    // The search itself stops at the run's deadline for refining (before the estimate's time).
    const double deadline = refine_deadline(o, env.options.get_real("time-limit"));
    const double slice_end =
        deadline > 0.0 ? std::min(deadline, env.elapsed_seconds() + seconds) : env.elapsed_seconds() + seconds;
    solver.start(parse_search_state_bytes(std::string_view(text).substr(eol + 1), "rank 0's sub-problem", question),
                 seconds);
    double last_report = env.elapsed_seconds();
    while (!solver.done()) {
      const double moving = kMovingSecondsPerRegion * static_cast<double>(solver.open_regions());
      if (seconds > 0.0 && env.elapsed_seconds() + moving >= slice_end) solver.cancel();
      if (o.progress && env.elapsed_seconds() - last_report >= kProgressSeconds) {
        last_report = env.elapsed_seconds();
        send_text(0, kProgress, solver.progress().text());
      }
      int flag = 0;
      MPI_Status st;
      for (const int asked : {kStop, kYield}) {
        MPI_Iprobe(0, asked, MPI_COMM_WORLD, &flag, &st);
        if (flag != 0) {
          (void)receive_text(st);
          solver.cancel();
        }
      }
      if (o.cancel != nullptr && o.cancel->load()) solver.cancel();
      std::this_thread::sleep_for(kPollPause);
    }
    send_text(0, kResult, search_state_bytes(solver.finish(), question));
  }
}

}  // namespace

bool distributed_built() { return true; }

void distributed_start() {
  if (!started_by_launcher() || mpi_running()) return;
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  if (distributed_size() > 1) install_distributed_search(&distributed_search);
}

void distributed_stop() {
  if (mpi_running()) MPI_Finalize();
}

int distributed_rank() {
  if (!mpi_running()) return 0;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int distributed_size() {
  if (!mpi_running()) return 1;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

FairnessResult distributed_search(const RegionEvaluator& regions, SearchSignals& signals,
                                  const CompleteSearchOptions& o, Env& env) {
  if (!o.checkpoint.empty() || !o.resume.empty() || o.start)
    throw InputError("--checkpoint, --resume and sub-problems run in one process, not under mpirun");
  const SearchQuestion question{regions.problem(), o.quantify};
  const int size = distributed_size();
  // One core per rank unless --threads says otherwise (ranks share a machine's cores).
  if (env.options.get_int("threads") == 0) env.options.set("threads", "1");
  if (distributed_rank() == 0) return coordinate(regions, signals, o, env, question, size);
  work(regions, signals, o, env, question);
  FairnessResult r;
  r.engine = "complete";
  r.reason = "a worker rank: rank 0 prints the answer";
  return r;
}

#endif

}  // namespace witness
