// What each kind of witness serve job does, read from the request's JSON (docs/serve.md): the
// same engines and formatters as the CLI, on files under the root.
//
//   witness::RootFolder root(".");
//   nlohmann::json request = {{"kind", "bias"}, {"model", "m.onnx"}, {"schema", "s.toml"},
//                             {"protected", {"sex"}}, {"options", {{"samples", "1000"}}}};
//   auto work = witness::prepare_job(request, root, witness::JobLimits{.max_seconds = 600});
//   witness::JobBoard board(2, 64);
//   auto job = board.submit("bias", work);
#pragma once

#include <functional>
#include <nlohmann/json.hpp>

#include "server/job_board.h"
#include "server/root_folder.h"

namespace witness {

struct JobLimits {
  double max_seconds = 600;  // a job's time limit, and the limit when the request gives none
  double memory_mb = 0;      // a job's memory limit (resident MiB), and the cap on the one asked for (0: none)
};

// Checks the request (kind, fields, that every path lies inside the root) and returns the job's
// work. InputError for a malformed request, ForbiddenPath for a path outside the root.
std::function<JobOutput(Job&)> prepare_job(const nlohmann::json& request, const RootFolder& root,
                                           const JobLimits& limits);

// The inputs of a model or program for the query workspace (GET /api/inputs); a program is
// compiled under the job limit's seconds.
nlohmann::json describe_inputs(const RootFolder& root, const std::string& path, const std::string& function,
                               const JobLimits& limits);

}  // namespace witness
