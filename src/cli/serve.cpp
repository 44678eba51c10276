// witness serve [--port P] [--root DIR]: the investigator's workbench in the browser (src/server).
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>
#include <utility>

#include "cli/cli.h"
#include "core/alarm.h"
#include "core/error.h"
#include "server/job_process.h"
#include "server/workbench.h"

namespace witness::cli {
namespace {

struct ServeArgs {
  WorkbenchOptions options;
  double max_upload_mb = 16;
  bool in_process = false;
};

constexpr int kStopSeconds = 10;  // from SIGTERM to the end of the process, jobs running or not

void run_serve(ServeArgs args) {
  // CLI11's Range passes NaN (every comparison with it is false): refuse it here, for every number.
  for (const auto& [flag, value] :
       {std::pair{"--max-upload", args.max_upload_mb}, std::pair{"--job-time-limit", args.options.job_seconds},
        std::pair{"--job-memory", args.options.job_memory_mb},
        std::pair{"--request-grace", args.options.request_grace_seconds}}) {
    if (!std::isfinite(value)) throw InputError(fmt::format("{}: expected a number, not {}", flag, value));
  }
  if (args.max_upload_mb <= 0) throw InputError("--max-upload: expected a positive number of megabytes");
  args.options.max_upload = static_cast<std::size_t>(args.max_upload_mb * 1024 * 1024);
  // Each job works in a child process of this same binary (serve-job): a solver that aborts or
  // runs out of memory ends that job, never the server.
  if (args.in_process) {
    args.options.job_executable.clear();
  } else {
    std::error_code ec;
    args.options.job_executable = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    if (ec) throw InternalError("cannot find this program's own file (/proc/self/exe) to run jobs in");
  }
  // SIGINT and SIGTERM stop the server cleanly (jobs cancelled, threads joined).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  // Set once stopping: a job that does not heed its cancel flag must not keep the server alive.
  std::unique_ptr<Alarm> stop_deadline;
  Workbench bench(args.options);
  std::cout << "witness serve: " << bench.url() << std::endl;  // the line a browser test reads: flushed
  std::cerr << fmt::format("witness serve: files under {}; Ctrl-C stops\n", args.options.root);
  std::thread waiter([&bench, stop_signals] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    bench.stop();
  });
  bench.serve();
  // serve() also returns if listening failed: wake the waiter (the signal is blocked in every
  // thread, so only its sigwait takes it) so that it can be joined.
  kill(getpid(), SIGTERM);
  waiter.join();
  // Jobs are cancelled and joined when `bench` goes; past the deadline the process ends anyway.
  stop_deadline = std::make_unique<Alarm>(std::chrono::steady_clock::now() + std::chrono::seconds(kStopSeconds), [] {
    std::cerr << fmt::format("witness serve: running jobs did not stop within {} s of the signal; exiting\n",
                             kStopSeconds);
    std::_Exit(1);
  });
}

}  // namespace

void add_serve_command(CLI::App& app, int& status) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "serve", "The workbench in a browser: query, fairness and testing workspaces (local, token-protected)");
  cmd->add_option("--port", args->options.port, "port on 127.0.0.1 (0: any free one)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--root", args->options.root, "the only folder whose files the workbench may open")
      ->capture_default_str();
  cmd->add_option("--host", args->options.host, "address to listen on (other than 127.0.0.1 exposes it to the network)")
      ->capture_default_str();
  cmd->add_option("--max-upload", args->max_upload_mb, "megabytes of one upload or request")->capture_default_str();
  cmd->add_option("--max-jobs", args->options.max_jobs, "jobs running at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  cmd->add_option("--job-time-limit", args->options.job_seconds, "seconds a job may run")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 86400.0));
  cmd->add_option("--job-memory", args->options.job_memory_mb,
                  "MiB one job's process may hold (its runs stop there; the process is bounded above it)")
      ->capture_default_str()
      ->check(CLI::Range(64.0, 1048576.0));
  cmd->add_option("--request-grace", args->options.request_grace_seconds,
                  "seconds a request may take to arrive, and its answer to leave, plus 1 s per 16 KiB (slower "
                  "connections are cut)")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 3600.0));
  cmd->add_flag("--jobs-in-process", args->in_process,
                "work jobs on threads of the server's own process (tests; a solver's crash then ends the server)");
  cmd->add_option("--token", args->options.token, "the access token (default: a random one, printed in the URL)");
  cmd->callback([args] { run_serve(*args); });

  // The server's child for one job (job_process.h): reads the task on stdin, answers on stdout.
  auto memory_mb = std::make_shared<double>(4096);
  CLI::App* job = app.add_subcommand("serve-job", "");  // no description: hidden from --help
  job->add_option("--memory-mb", *memory_mb, "the job's memory bound in MiB");
  job->callback([memory_mb, &status] { status = serve_child_job(std::cin, std::cout, *memory_mb); });
}

}  // namespace witness::cli
