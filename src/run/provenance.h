// Where an answer came from, for the report an auditor hands on: the SHA-256 of every input file
// (as `sha256sum` prints it), witness's version and commit, the exact command or call, the options,
// seed and time limit, the date and the machine.
//
//   witness::SubjectSource src;
//   src.model_path = "benchmarks/fairify/models/adult/AC1.h5";
//   src.schema_path = "benchmarks/fairify/adult.toml";
//   witness::JobSubject subject = witness::load_subject(src);
//   witness::Env env;
//   nlohmann::json p = witness::provenance_json(subject, env, "witness fair AC1.h5 ...", {{"engine", "auto"}});
//   std::string model_hash = p["files"][0]["sha256"];
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/options.h"
#include "run/subject.h"

namespace witness {

// {"files": [{"role", "name", "sha256", "bytes"}], "witness": {"version", "commit"}, "command",
// "options", "seed", "time_limit", "created", "machine": {"host", "system", "cpu", "cores"}}.
[[nodiscard]] nlohmann::json provenance_json(const JobSubject& subject, const Env& env, const std::string& command,
                                             nlohmann::json options);

// A job's settings as their option names and texts, for the provenance's "options".
template <typename J>
[[nodiscard]] nlohmann::json settings_json(const std::vector<SettingOption<J>>& table, const J& job) {
  nlohmann::json out = nlohmann::json::object();
  for (const SettingOption<J>& o : table) out[o.spec.name] = o.text(job);
  return out;
}

}  // namespace witness
