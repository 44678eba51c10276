#include "server/job_board.h"

#include <fmt/format.h>

#include <algorithm>
#include <new>

#include "core/error.h"

namespace witness {

const char* to_string(Job::State state) {
  switch (state) {
    case Job::State::Queued: return "queued";
    case Job::State::Running: return "running";
    case Job::State::Done: return "done";
    case Job::State::Failed: return "failed";
    case Job::State::Cancelled: return "cancelled";
  }
  return "unknown";
}

Job::Job(std::string id, std::string kind) : id_(std::move(id)), kind_(std::move(kind)) {}

void Job::set_progress_listener(std::function<void(const nlohmann::json&, const std::vector<double>&)> listener) {
  const std::lock_guard lock(mutex_);
  listener_ = std::move(listener);
}

void Job::report_progress(nlohmann::json progress, std::vector<double> point) {
  const std::lock_guard lock(mutex_);
  if (listener_) listener_(progress, point);
  progress_ = std::move(progress);
  if (point.empty()) return;
  history_.push_back(std::move(point));
  if (history_.size() > 400) {  // keep every other point: the chart's shape stays, the size is bounded
    std::vector<std::vector<double>> half;
    half.reserve(history_.size() / 2 + 1);
    for (std::size_t i = 0; i < history_.size(); i += 2) half.push_back(std::move(history_[i]));
    history_ = std::move(half);
  }
}

Job::State Job::state() const {
  const std::lock_guard lock(mutex_);
  return state_;
}

std::shared_ptr<const JobOutput> Job::output() const {
  const std::lock_guard lock(mutex_);
  return output_;
}

nlohmann::json Job::status(bool full) const {
  const std::lock_guard lock(mutex_);
  const bool finished = state_ != State::Queued && state_ != State::Running;
  const double seconds =
      finished ? seconds_ : std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  nlohmann::json j = {{"id", id_}, {"kind", kind_}, {"state", to_string(state_)}, {"seconds", seconds}};
  if (!full) return j;
  j["progress"] = progress_;
  j["history"] = history_;
  j["result"] = output_ ? output_->result : nlohmann::json(nullptr);
  j["text"] = output_ ? nlohmann::json(output_->text) : nlohmann::json(nullptr);
  j["report"] = output_ && !output_->report.is_null() ? output_->report : nlohmann::json(nullptr);
  j["error"] = error_.empty() ? nlohmann::json(nullptr) : nlohmann::json(error_);
  return j;
}

void Job::cancel() {
  cancel_ = true;
  const std::lock_guard lock(mutex_);
  if (state_ == State::Queued || state_ == State::Running) state_ = State::Cancelled;
}

void Job::run(const std::function<JobOutput(Job&)>& work) {
  {
    const std::lock_guard lock(mutex_);
    if (state_ == State::Queued) state_ = State::Running;
  }
  std::shared_ptr<const JobOutput> output;
  std::string error;
  try {
    output = std::make_shared<const JobOutput>(work(*this));
  } catch (const Error& e) {  // what the CLI would print after "error: "
    error = e.what();
  } catch (const std::bad_alloc&) {
    error = "out of memory";
  } catch (const std::exception& e) {
    error = std::string("internal: ") + e.what();
  }
  const std::lock_guard lock(mutex_);
  seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  output_ = std::move(output);
  error_ = std::move(error);
  if (state_ == State::Cancelled) return;  // what it found before it stopped stays readable
  state_ = error_.empty() ? State::Done : State::Failed;
}

JobBoard::JobBoard(int max_running, int max_kept) : max_running_(max_running), max_kept_(max_kept) {}

JobBoard::~JobBoard() {
  std::map<std::string, std::thread> threads;
  std::vector<std::thread> finished;
  {
    const std::lock_guard lock(mutex_);
    for (const auto& job : jobs_) job->cancel();
    threads.swap(threads_);
    finished.swap(finished_);
  }
  for (auto& [id, t] : threads) t.join();
  for (std::thread& t : finished) t.join();
}

void JobBoard::reap() {
  // These threads have left their work and hold no lock: joining them is immediate.
  for (std::thread& t : finished_) t.join();
  finished_.clear();
  auto is_finished = [](const std::shared_ptr<Job>& j) {
    return j->state() != Job::State::Running && j->state() != Job::State::Queued;
  };
  auto kept = static_cast<std::ptrdiff_t>(std::count_if(jobs_.begin(), jobs_.end(), is_finished));
  for (auto it = jobs_.begin(); it != jobs_.end() && kept > max_kept_;) {
    if (is_finished(*it) && !threads_.contains((*it)->id())) {
      it = jobs_.erase(it);
      --kept;
    } else {
      ++it;
    }
  }
}

std::shared_ptr<Job> JobBoard::submit(const std::string& kind, std::function<JobOutput(Job&)> work) {
  const std::lock_guard lock(mutex_);
  reap();
  // A cancelled job still counts until its thread has wound down.
  const auto running = static_cast<int>(threads_.size());
  if (running >= max_running_)
    throw JobsFull(fmt::format("{} jobs are running (--max-jobs {}): wait or cancel one", running, max_running_));
  auto job = std::make_shared<Job>(fmt::format("j{}", next_++), kind);
  jobs_.push_back(job);
  threads_.emplace(job->id(), std::thread([this, job, work = std::move(work)] {
                     job->run(work);
                     // The thread says it is done by moving itself out of the map to be joined.
                     const std::lock_guard done_lock(mutex_);
                     const auto it = threads_.find(job->id());
                     if (it != threads_.end()) {
                       finished_.push_back(std::move(it->second));
                       threads_.erase(it);
                     }
                   }));
  return job;
}

std::shared_ptr<Job> JobBoard::find(const std::string& id) const {
  const std::lock_guard lock(mutex_);
  for (const auto& j : jobs_)
    if (j->id() == id) return j;
  return nullptr;
}

bool JobBoard::cancel(const std::string& id) const {
  const std::shared_ptr<Job> job = find(id);
  if (!job) return false;
  job->cancel();
  return true;
}

nlohmann::json JobBoard::list() const {
  const std::lock_guard lock(mutex_);
  nlohmann::json out = nlohmann::json::array();
  for (const auto& j : jobs_) out.push_back(j->status(false));
  return {{"jobs", out}};
}

}  // namespace witness
