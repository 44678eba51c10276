#include "run/option_catalog.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "core/error.h"
#include "fairness/blackbox.h"
#include "run/jobs.h"

namespace witness {

namespace {

template <typename S>
std::vector<OptionSpec> specs_of(const std::vector<SettingOption<S>>& table) {
  std::vector<OptionSpec> out;
  out.reserve(table.size());
  for (const SettingOption<S>& o : table) out.push_back(o.spec);
  return out;
}

}  // namespace

const std::vector<std::string>& job_names() {
  static const std::vector<std::string> names = {"fair", "test", "bias", "query"};
  return names;
}

const std::vector<std::string>& job_run_options(const std::string& job) {
  // query: time-limit bounds the whole command; its own per-query limits (query-time-limit,
  // query-memory-limit: query_options()) bound each query; the rest does not apply.
  static const std::map<std::string, std::vector<std::string>> run = {
      {"fair", {"seed", "time-limit", "memory-limit", "threads", "verbose", "stats"}},
      {"test", {"seed", "threads", "time-limit", "memory-limit", "verbose", "stats"}},
      {"bias", {"seed", "threads", "time-limit", "memory-limit", "verbose", "stats"}},
      {"query", {"time-limit"}},
  };
  const auto it = run.find(job);
  if (it == run.end()) throw InputError(fmt::format("unknown job '{}' (known: {})", job, fmt::join(job_names(), ", ")));
  return it->second;
}

void check_option_names(const std::string& job, const std::map<std::string, std::string>& given) {
  const std::vector<OptionSpec> specs = job_options(job);
  for (const auto& option : given) {
    const std::string& name = option.first;
    if (std::any_of(specs.begin(), specs.end(), [&](const OptionSpec& s) { return s.name == name; })) continue;
    std::vector<std::string> names;
    names.reserve(specs.size());
    for (const OptionSpec& s : specs) names.push_back(s.name);
    throw InputError(fmt::format("{}: no option '{}' (its options: {})", job, name, fmt::join(names, ", ")));
  }
}

std::vector<OptionSpec> job_options(const std::string& job) {
  std::vector<OptionSpec> own;
  if (job == "fair") own = specs_of(fair_options());
  if (job == "test") own = specs_of(test_options());
  if (job == "bias") own = specs_of(bias_options());
  if (job == "query") own = specs_of(query_options());
  std::vector<OptionSpec> out;
  for (const std::string& name : job_run_options(job)) {
    const bool shadowed = std::any_of(own.begin(), own.end(), [&](const OptionSpec& s) { return s.name == name; });
    const auto it =
        std::find_if(option_table().begin(), option_table().end(), [&](const OptionSpec& s) { return s.name == name; });
    if (!shadowed && it != option_table().end()) out.push_back(*it);
  }
  out.insert(out.end(), own.begin(), own.end());
  return out;
}

}  // namespace witness
