// witness serve: the investigator's workbench, a local HTTP server (cpp-httplib) with the web
// front-end, file access under one root folder, and jobs (docs/serve.md has the API).
//
//   #include <thread>
//   witness::WorkbenchOptions o;
//   o.root = "examples";
//   o.port = 0;                                // any free port
//   witness::Workbench bench(o);
//   std::cout << bench.url() << '\n';          // http://127.0.0.1:PORT/?token=...
//   std::thread t([&] { bench.serve(); });     // until stop()
//   bench.stop();
//   t.join();
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace witness {

struct WorkbenchOptions {
  std::string root = ".";
  std::string host = "127.0.0.1";
  int port = 8484;                      // 0: any free port
  std::size_t max_upload = 16U << 20U;  // bytes of one request body (uploads, job requests)
  int max_jobs = 2;                     // jobs running at once
  int max_kept_jobs = 64;               // finished jobs kept for reading
  int threads = 8;                      // requests served at once
  double job_seconds = 600;             // a job's time limit (and the cap on the one asked for)
  double job_memory_mb = 4096;          // a job's memory (and the cap on the one asked for)
  double request_grace_seconds = 10;    // a request's and an answer's time, plus 1 s per 16 KiB
  // The witness binary that works each job (and each GET /api/inputs) in a process of its own
  // (`serve-job`): a solver's crash or out-of-memory death then ends that job only. Empty: jobs
  // run on threads of this process.
  std::string job_executable;
  std::string token;  // empty: a random one
};

class Workbench {
 public:
  // Binds the port (InputError if it cannot, or if the root is not a folder).
  explicit Workbench(const WorkbenchOptions& options);
  ~Workbench();
  Workbench(const Workbench&) = delete;
  Workbench& operator=(const Workbench&) = delete;

  [[nodiscard]] int port() const;
  [[nodiscard]] const std::string& token() const;
  [[nodiscard]] std::string url() const;  // with the token
  void serve();                           // answers requests until stop()
  void stop();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace witness
