// Long runs of witness serve (fair, test, bias, query) as jobs on their own threads: a bounded
// number run at once, each reports progress, can be cancelled, and fails alone.
//
//   witness::JobBoard board(/*max_running=*/2, /*max_kept=*/64);
//   auto job = board.submit("bias", [](witness::Job& j) {
//     j.report_progress({{"samples", 10}}, {0.1, 10.0});     // progress, and a point of its history
//     return witness::JobOutput{.result = {{"bias_percent", 1.0}}, .text = "...", .report = {},
//                               .pairs_csv = "", .regions_csv = "", .flips_csv = ""};
//   });
//   nlohmann::json status = job->status(true);   // {"id": "j1", "state": "running", ...}
//   board.cancel(job->id());                      // raises the job's cancel flag
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "run/jobs.h"

namespace witness {

// What a finished job holds: the CLI's --json and text, the report's envelope, the pairs.
using JobOutput = RunOutput;

// Too many jobs running (HTTP 429).
class JobsFull : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Job {
 public:
  enum class State : std::uint8_t { Queued, Running, Done, Failed, Cancelled };

  Job(std::string id, std::string kind);
  [[nodiscard]] const std::string& id() const { return id_; }
  [[nodiscard]] const std::string& kind() const { return kind_; }
  [[nodiscard]] const std::atomic<bool>& cancel_flag() const { return cancel_; }
  // Replaces the progress; a non-empty `point` is appended to the history (thinned to ~200 points).
  void report_progress(nlohmann::json progress, std::vector<double> point);
  // The job's state as JSON; `full` adds the result, text and report (when done).
  [[nodiscard]] nlohmann::json status(bool full) const;
  [[nodiscard]] State state() const;
  // The output once the job finished (done or cancelled with an answer); null otherwise.
  [[nodiscard]] std::shared_ptr<const JobOutput> output() const;
  // Raises the cancel flag (a running job ends with what it found so far).
  void cancel();
  // Also called with every progress report (a child process relays them to the server).
  void set_progress_listener(std::function<void(const nlohmann::json&, const std::vector<double>&)> listener);

 private:
  friend class JobBoard;
  void run(const std::function<JobOutput(Job&)>& work);

  const std::string id_;
  const std::string kind_;
  std::atomic<bool> cancel_{false};
  mutable std::mutex mutex_;
  State state_ = State::Queued;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double seconds_ = 0.0;  // once finished
  nlohmann::json progress_;
  std::vector<std::vector<double>> history_;
  std::shared_ptr<const JobOutput> output_;
  std::string error_;
  std::function<void(const nlohmann::json&, const std::vector<double>&)> listener_;
};

[[nodiscard]] const char* to_string(Job::State state);

class JobBoard {
 public:
  JobBoard(int max_running, int max_kept);
  ~JobBoard();  // cancels every job and waits for them
  JobBoard(const JobBoard&) = delete;
  JobBoard& operator=(const JobBoard&) = delete;

  // Starts `work` on a thread of its own. JobsFull when max_running jobs are running.
  std::shared_ptr<Job> submit(const std::string& kind, std::function<JobOutput(Job&)> work);
  [[nodiscard]] std::shared_ptr<Job> find(const std::string& id) const;
  // False if there is no such job.
  bool cancel(const std::string& id) const;
  [[nodiscard]] nlohmann::json list() const;

 private:
  void reap();  // joins finished threads and forgets the oldest finished jobs beyond max_kept (locked)

  const int max_running_;
  const int max_kept_;
  mutable std::mutex mutex_;
  int next_ = 1;
  std::vector<std::shared_ptr<Job>> jobs_;      // oldest first
  std::map<std::string, std::thread> threads_;  // running (or winding down after a cancel)
  std::vector<std::thread> finished_;           // returned from their work, to be joined
};

}  // namespace witness
