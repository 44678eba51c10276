// Sub-problems for any scheduler (batch systems, cloud functions): `witness fair ... --split-into K
// --out-dir D` writes K files, each a saved search of part of the domain that also says how to run
// it (model, schema, data, protected features, options; paths made absolute); `witness fair
// --subproblem D/part-003.json` continues one and saves D/part-003.result.json; `witness merge
// D/*.result.json` joins the results into the answer one run would have given.
//
//   witness::SubjectSource src;
//   src.model_path = "benchmarks/fairify/models/german/GC1.h5";
//   src.schema_path = "benchmarks/fairify/german.toml";
//   src.protected_names = {"age"};
//   witness::Env env;
//   witness::FairJob job;
//   witness::set_job_options(witness::fair_options(), job, env, {{"quantify", "true"}});
//   std::vector<std::string> files = witness::write_subproblems(src, {{"quantify", "true"}}, job, 8, "/tmp/gc1", env);
//   std::string result = witness::solve_subproblem(files[0], job, env, "witness fair --subproblem ...").second;
//   witness::RunOutput merged = witness::merge_subproblems({result}, job, env, "witness merge ...");
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/env.h"
#include "run/jobs.h"
#include "run/subject.h"

namespace witness {

// Writes dir/part-000.json ... (dir is created) for `job` (set from `options`, fair_options()
// names only, which every file keeps). Returns the files written.
std::vector<std::string> write_subproblems(const SubjectSource& source,
                                           const std::map<std::string, std::string>& options, const FairJob& job,
                                           int parts, const std::string& dir, Env& env);

// Continues the sub-problem in `path` with the options it keeps (on top of `job`: progress, cancel,
// checkpoint period), saving its state as it goes and at the end to the result file beside it
// (part-003.json -> part-003.result.json). The part's answer, and the result file's path.
std::pair<RunOutput, std::string> solve_subproblem(const std::string& path, FairJob job, Env& env,
                                                   const std::string& command);

// The answer of every part's result joined (each part exactly once); nothing is searched.
RunOutput merge_subproblems(const std::vector<std::string>& results, FairJob job, Env& env, const std::string& command);

}  // namespace witness
