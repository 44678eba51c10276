#include "run/subproblems.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <system_error>

#include "core/error.h"
#include "core/file.h"
#include "core/json_document.h"
#include "core/sha256.h"
#include "fairness/complete/search/search_state.h"
#include "fairness/engine.h"

namespace witness {

namespace {

using json = nlohmann::json;

constexpr int kMaxParts = 100000;
constexpr int kMaxJsonDepth = 16;
constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t{8} << 30;
constexpr const char* kKind = "fair sub-problem";

std::string absolute(const std::string& path) {
  if (path.empty()) return "";
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

// How to run a sub-problem, as its file keeps it.
struct Header {
  SubjectSource source;
  std::map<std::string, std::string> options;
  std::string text;  // the JSON object, as written
};

// A split's identity: a random id, and the hash of every part's scope and open regions as dealt.
// Every part carries both, so that parts of two runs of the same command never merge (their
// regions differ while their questions agree).
json split_identity(const std::vector<SearchState>& parts) {
  std::random_device device;
  std::string id;
  for (int k = 0; k < 4; ++k) id += fmt::format("{:08x}", device());
  Sha256 layout;
  for (const SearchState& s : parts) {
    layout.add_field(fmt::format("{:a} {}", s.tally.scope, s.tally.left.size()));
    for (const SearchRegion& r : s.tally.left)
      for (Eigen::Index f = 0; f < r.lo.size(); ++f) layout.add_number(r.lo(f)), layout.add_number(r.hi(f));
  }
  return {{"id", id}, {"parts", parts.size()}, {"layout", layout.hex()}};
}

std::string header_text(const SubjectSource& s, const std::map<std::string, std::string>& options, const json& split) {
  json o = json::object();
  for (const auto& [name, value] : options) o[name] = value;
  return json{{"witness", kKind},
              {"model", absolute(s.model_path)},
              {"schema", absolute(s.schema_path)},
              {"box", s.box},
              {"data", absolute(s.data.path)},
              {"protected", s.protected_names},
              {"options", o},
              {"split", split}}
      .dump();
}

// "split 3f2a9c1b... (part 2 of 4)" from a header, for messages.
std::string split_name(const std::string& header) {
  const json h = json::parse(header, nullptr, false);
  const json split = h.is_object() ? h.value("split", json()) : json();
  if (!split.is_object() || !split.value("id", json()).is_string()) return "a split without an identity";
  return fmt::format("split {}", split["id"].get<std::string>().substr(0, 12));
}

bool is_fair_option(const std::string& name) {
  const auto& table = fair_options();
  return std::any_of(table.begin(), table.end(), [&](const SettingOption<FairJob>& o) { return o.spec.name == name; });
}

// The header of a sub-problem or result file, read before the question it belongs to is known.
Header read_header(const std::string& path) {
  json j;
  try {
    j = parse_json_document(read_file(path, kMaxFileBytes), path, kMaxJsonDepth);
  } catch (const InputError& e) {
    throw InputError(path, "", fmt::format("not a sub-problem of `witness fair --split-into` ({})", e.what()));
  }
  auto fail = [&path](const std::string& what) { throw InputError(path, "", what); };
  const auto h = j.is_object() ? j.find("header") : j.end();
  if (h == j.end() || !h->is_object() || h->value("witness", json()) != kKind)
    fail("not a sub-problem of `witness fair --split-into` (no sub-problem header)");
  Header out;
  out.text = h->dump();
  auto text = [&](const char* name) {
    const auto it = h->find(name);
    if (it == h->end() || !it->is_string()) fail(fmt::format("header.{}: expected a string", name));
    return it->get<std::string>();
  };
  out.source.model_path = text("model");
  if (out.source.model_path.empty()) fail("header.model: empty");
  out.source.schema_path = text("schema");
  out.source.box = text("box");
  out.source.data.path = text("data");
  const auto prot = h->find("protected");
  if (prot == h->end() || !prot->is_array()) fail("header.protected: expected an array of feature names");
  for (const json& p : *prot) {
    if (!p.is_string()) fail("header.protected: expected an array of feature names");
    out.source.protected_names.push_back(p.get<std::string>());
  }
  const auto options = h->find("options");
  if (options == h->end() || !options->is_object()) fail("header.options: expected an object");
  for (const auto& [name, value] : options->items()) {
    if (!value.is_string() || !is_fair_option(name))
      fail(fmt::format("header.options.{}: not an option of witness fair given as a string", name));
    out.options.emplace(name, value.get<std::string>());
  }
  return out;
}

// The job's fair options replaced by the file's (the question is the file's).
void apply_header(const Header& h, FairJob& job, Env& env) {
  FairJob fresh;
  fresh.settings.progress = job.settings.progress;
  fresh.settings.checkpoint_seconds = job.settings.checkpoint_seconds;
  set_job_options(fair_options(), fresh, env, h.options);
  job = std::move(fresh);
}

}  // namespace

std::vector<std::string> write_subproblems(const SubjectSource& source,
                                           const std::map<std::string, std::string>& options, const FairJob& job,
                                           int parts, const std::string& dir, Env& env) {
  if (parts < 1 || parts > kMaxParts) throw InputError(fmt::format("--split-into: expected 1 to {} parts", kMaxParts));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw InputError(dir, "", fmt::format("cannot create the folder: {}", ec ? ec.message() : "not a folder"));
  const JobSubject subject = load_subject(source);
  if (!subject.model) throw InputError("--split-into: no model");
  const FairnessProblem problem(*subject.model, subject.schema, subject.protected_names);
  std::vector<SearchState> states = split_fairness_search(job.engine, problem, job.settings, parts, env);
  const SearchQuestion question{problem, job.settings.quantify};  // the engine's: proxies included
  std::map<std::string, std::string> kept;  // the question's options; run options (threads...) are each run's
  for (const auto& [name, value] : options)
    if (is_fair_option(name)) kept.emplace(name, value);
  const std::string header = header_text(source, kept, split_identity(states));
  // Written into a fresh folder beside `dir`, then moved in: a split that fails midway (a full
  // disk) leaves no part behind, and one that succeeds never mixes with an older split's parts.
  const std::filesystem::path staging = std::filesystem::path(dir) / fmt::format(".witness-split-{}", getpid());
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))  // what a killed split left
    if (entry.path().filename().string().starts_with(".witness-split-")) std::filesystem::remove_all(entry.path(), ec);
  std::filesystem::create_directories(staging, ec);
  if (ec) throw InputError(dir, "", fmt::format("cannot create a folder in it: {}", ec.message()));
  std::vector<std::string> files;
  try {
    for (SearchState& s : states) {
      s.header = header;
      const std::string name = fmt::format("part-{:03d}.json", s.part);
      files.push_back((std::filesystem::path(dir) / name).string());
      try {
        write_search_state((staging / name).string(), s, question);
      } catch (const InputError& e) {  // named as the part it was to be: the staging folder goes
        const std::string what = e.what();
        const std::size_t colon = what.find(": ");
        throw InputError(files.back(), "", colon == std::string::npos ? what : what.substr(colon + 2));
      }
    }
    for (const std::string& f : files) {
      std::filesystem::rename(staging / std::filesystem::path(f).filename(), f, ec);
      if (ec) throw InputError(f, "", fmt::format("cannot move the part into place: {}", ec.message()));
    }
  } catch (...) {
    std::filesystem::remove_all(staging, ec);
    throw;
  }
  std::filesystem::remove_all(staging, ec);
  return files;
}

std::pair<RunOutput, std::string> solve_subproblem(const std::string& path, FairJob job, Env& env,
                                                   const std::string& command) {
  const Header h = read_header(path);
  apply_header(h, job, env);
  std::string result = path;
  if (result.size() > 5 && result.ends_with(".json")) result.resize(result.size() - 5);
  result += ".result.json";
  check_writable(result);
  job.settings.resume = path;
  job.settings.checkpoint = result;
  const JobSubject subject = load_subject(h.source);
  return {run_fair(subject, job, env, command), result};
}

RunOutput merge_subproblems(const std::vector<std::string>& results, FairJob job, Env& env,
                            const std::string& command) {
  if (results.empty()) throw InputError("merge: no result files given");
  const Header h = read_header(results.front());
  apply_header(h, job, env);
  const JobSubject subject = load_subject(h.source);
  if (!subject.model) throw InputError(results.front(), "", "no model");
  const FairnessProblem problem(*subject.model, subject.schema, subject.protected_names);
  const SearchQuestion question{problem, job.settings.quantify};
  std::vector<SearchState> states;
  for (const std::string& r : results) {
    SearchState s = read_search_state(r, question);
    if (s.header != h.text)
      throw InputError(r, "",
                       fmt::format("a result of another split ({}) than {} ({}): parts of different splits "
                                   "never merge",
                                   split_name(s.header), results.front(), split_name(h.text)));
    states.push_back(std::move(s));
  }
  job.settings.start = std::make_shared<const SearchState>(join_search_states(std::move(states), results, question));
  job.settings.answer_only = true;
  RunOutput out = run_fair(subject, job, env, command);
  add_trust_note(out, fmt::format("merged from {} parts; the regions other processes closed are trusted (their "
                                  "accounts and open regions were checked)",
                                  results.size()));
  return out;
}

}  // namespace witness
