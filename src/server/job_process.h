// A witness serve job, or the description of a model's inputs, worked out in a child process
// (`witness serve-job`) so that a solver's crash, abort, out-of-memory death or slow teardown ends
// the child and never the server. The child bounds its own memory, relays progress as JSON lines
// and ends with its output or its error; a cancel is SIGINT (the answer found so far comes back),
// then SIGKILL after a grace.
//
//   witness::ChildJobLimits limits{.executable = "/usr/bin/witness", .seconds = 600, .memory_mb = 4096};
//   nlohmann::json request = {{"kind", "bias"}, {"model", "m.onnx"}, {"protected", {"sex"}}};
//   nlohmann::json task = {{"task", "job"}, {"root", "/srv/cases"}, {"request", request}};
//   std::atomic<bool> cancel{false};
//   witness::JobOutput out = witness::run_child_job(task, limits, cancel, nullptr);
//   // in main(), for the child:  return witness::serve_child_job(std::cin, std::cout);
#pragma once

#include <atomic>
#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/job_board.h"

namespace witness {

struct ChildJobLimits {
  std::string executable;   // the witness binary, run as `EXECUTABLE serve-job --memory-mb M`
  double seconds = 600;     // the job's time limit (the child keeps it; the parent kills past it plus a grace)
  double memory_mb = 4096;  // the child's memory: the runs' limit, and an address-space bound above it
};

using ProgressSink = std::function<void(nlohmann::json progress, std::vector<double> point)>;

// Runs `task` in a child: {"task": "job", "root": DIR, "request": {...}} (the API's job request) or
// {"task": "inputs", "root": DIR, "path": P, "function": F}. Returns the job's output (for
// "inputs": the description in `result`). The child's errors are rethrown as InputError (or
// ForbiddenPath); a child that dies says how ("the job's process was killed by signal 6 ...").
JobOutput run_child_job(const nlohmann::json& task, const ChildJobLimits& limits, const std::atomic<bool>& cancel,
                        const ProgressSink& progress);

// The child's side: reads the task from `in`, sets its memory bounds, works, writes
// {"progress": ..., "point": [...]} lines and one {"output": ...} or {"error": ...} line to `out`.
// SIGINT or SIGTERM cancels the work. Returns the exit code.
int serve_child_job(std::istream& in, std::ostream& out, double memory_mb);

}  // namespace witness
