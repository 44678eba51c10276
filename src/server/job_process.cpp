#include "server/job_process.h"

#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <iterator>
#include <memory>
#include <mutex>
#include <thread>

#include "core/error.h"
#include "core/json_document.h"
#include "core/process.h"
#include "core/sanitizer.h"
#include "server/job_runs.h"
#include "server/root_folder.h"

namespace witness {
namespace {

using Clock = std::chrono::steady_clock;

// Past its time limit a child has this long to answer (a run's own limit ends it first), and after
// a cancel this long to send the answer it has found so far, before it is killed.
constexpr std::chrono::seconds kLimitGrace{20};
constexpr std::chrono::seconds kCancelGrace{3};
// A job's output (its pairs CSV included) is bounded on the server's side too.
constexpr std::size_t kMaxChildLine = 512U << 20U;

std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

nlohmann::json output_json(const JobOutput& o) {
  return {{"result", o.result},
          {"text", o.text},
          {"report", o.report},
          {"pairs_csv", o.pairs_csv},
          {"regions_csv", o.regions_csv}};
}

JobOutput output_of(const nlohmann::json& j) {
  JobOutput o;
  o.result = j.at("result");
  o.text = j.at("text").get<std::string>();
  o.report = j.at("report");
  o.pairs_csv = j.at("pairs_csv").get<std::string>();
  o.regions_csv = j.at("regions_csv").get<std::string>();
  return o;
}

// How a child that sent no answer ended, in words for the job's error.
std::string death(ChildProcess& child, const ChildJobLimits& limits) {
  const std::string how = child.exit_description(std::chrono::milliseconds(2000));
  return fmt::format("the job's process {} before it answered (its memory bound is {:.0f} MiB: --job-memory)",
                     how.starts_with("killed") ? "was " + how : how, limits.memory_mb);
}

// Bytes of address space for a child whose runs stop at `memory_mb` of resident memory: room for
// thread stacks and allocator arenas, which reserve far more than they touch.
rlim_t address_space_bytes(double memory_mb) { return static_cast<rlim_t>((memory_mb * 1.5 + 1024) * 1048576.0); }

// One child started ahead of the next job: a witness process takes about 0.2 s to start (the LLVM
// and Z3 libraries load), which a job then does not wait for. It waits for its task on stdin.
class SpareChild {
 public:
  std::unique_ptr<ChildProcess> take(const std::string& command) {
    std::unique_ptr<ChildProcess> child;
    {
      const std::lock_guard lock(mutex_);
      if (spare_ && command_ == command && spare_->exit_description(std::chrono::milliseconds(0)) == "still running")
        child = std::move(spare_);
      spare_.reset();
    }
    if (!child) child = std::make_unique<ChildProcess>(command);
    auto next = std::make_unique<ChildProcess>(command);  // loads while this job runs
    const std::lock_guard lock(mutex_);
    spare_ = std::move(next);
    command_ = command;
    return child;
  }

 private:
  std::mutex mutex_;
  std::unique_ptr<ChildProcess> spare_;
  std::string command_;
};

SpareChild& spare_child() {
  static SpareChild spare;
  return spare;
}

}  // namespace

JobOutput run_child_job(const nlohmann::json& task, const ChildJobLimits& limits, const std::atomic<bool>& cancel,
                        const ProgressSink& progress) {
  const std::unique_ptr<ChildProcess> started = spare_child().take(
      fmt::format("exec {} serve-job --memory-mb {:.0f}", shell_quoted(limits.executable), limits.memory_mb));
  ChildProcess& child = *started;
  const Clock::time_point hard_deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limits.seconds)) +
      kLimitGrace;
  std::optional<Clock::time_point> cancel_deadline;
  {
    // The task first, whole (the child reads it to its end before it writes anything), then EOF.
    std::vector<std::string> none;
    if (child.exchange(json_line(task) + "\n", 0, none, Clock::now() + std::chrono::seconds(30)) !=
        ChildProcess::Status::Ok)
      throw InternalError(death(child, limits));
    child.close_input();
  }
  for (;;) {
    std::vector<std::string> lines;
    const ChildProcess::Status status = child.exchange({}, 1, lines, Clock::now() + std::chrono::milliseconds(100));
    for (const std::string& line : lines) {
      if (line.size() > kMaxChildLine) {
        child.kill();
        throw InternalError("the job's answer is larger than the server takes (512 MiB)");
      }
      const nlohmann::json msg = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (msg.is_discarded() || !msg.is_object()) {
        child.kill();
        throw InternalError("the job's process wrote something other than its protocol");
      }
      if (msg.contains("progress")) {
        if (progress) progress(msg["progress"], msg.value("point", std::vector<double>{}));
      } else if (msg.contains("output")) {
        return output_of(msg["output"]);
      } else if (msg.contains("error")) {
        const std::string what = msg["error"].get<std::string>();
        if (msg.value("forbidden", false)) throw ForbiddenPath(what);
        throw InputError(what);
      }
    }
    if (status == ChildProcess::Status::Closed) throw InternalError(death(child, limits));
    const Clock::time_point now = Clock::now();
    if (cancel && !cancel_deadline) {
      child.interrupt();  // the child's run stops and sends what it found
      cancel_deadline = now + kCancelGrace;
    }
    if ((cancel_deadline && now > *cancel_deadline) || now > hard_deadline) {
      child.kill();
      if (cancel_deadline) throw InputError("cancelled");
      throw InputError(fmt::format("the job did not end within {:.0f} s of its time limit; it was stopped",
                                   static_cast<double>(kLimitGrace.count())));
    }
  }
}

int serve_child_job(std::istream& in, std::ostream& out, double memory_mb) {
  // First, the bound: whatever a solver does, this process and no other dies of it.
  if (memory_mb > 0 && !kAddressSanitizer) {  // ASan reserves terabytes of address space
    const rlimit bound{address_space_bytes(memory_mb), address_space_bytes(memory_mb)};
    setrlimit(RLIMIT_AS, &bound);
  }
  note_many_threads_allocate();  // the signal watcher below is a thread
  std::mutex out_mutex;
  auto send = [&](const nlohmann::json& msg) {
    const std::lock_guard lock(out_mutex);
    out << json_line(msg) << '\n' << std::flush;
  };
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  Job job("child", "child");
  std::thread watcher([&job, stop_signals] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    job.cancel();
  });
  watcher.detach();  // it lives until the process ends (a signal or the end of main)
  try {
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const nlohmann::json task = nlohmann::json::parse(text);
    const RootFolder root(task.at("root").get<std::string>());
    const JobLimits limits{.max_seconds = task.value("seconds", 600.0), .memory_mb = memory_mb};
    if (task.at("task") == "inputs") {
      JobOutput o;
      o.result = describe_inputs(root, task.at("path").get<std::string>(), task.value("function", ""), limits);
      send({{"output", output_json(o)}});
      return 0;
    }
    const auto work = prepare_job(task.at("request"), root, limits);
    job.set_progress_listener([&send](const nlohmann::json& p, const std::vector<double>& point) {
      send({{"progress", p}, {"point", point}});
    });
    send({{"output", output_json(work(job))}});
    return 0;
  } catch (const ForbiddenPath& e) {
    send({{"error", e.what()}, {"forbidden", true}});
  } catch (const Error& e) {
    send({{"error", e.what()}});
  } catch (const std::bad_alloc&) {
    send({{"error", fmt::format("out of memory (the job's bound is {:.0f} MiB: --job-memory)", memory_mb)}});
  } catch (const nlohmann::json::exception& e) {
    send({{"error", std::string("internal: ") + e.what()}});
  } catch (const std::exception& e) {
    send({{"error", std::string("internal: ") + e.what()}});
  }
  return 1;
}

}  // namespace witness
