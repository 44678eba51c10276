#include "server/job_runs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <memory>

#include "core/env.h"
#include "core/error.h"
#include "fairness/bias.h"
#include "fairness/blackbox.h"
#include "fairness/engine.h"
#include "model/columns.h"
#include "model/loaders.h"
#include "program/program.h"
#include "query/query.h"
#include "report/query_report.h"
#include "run/jobs.h"
#include "run/option_catalog.h"

namespace witness {
namespace {

// A discriminatory pairs download larger than this is cut (the full set: witness test --out).
constexpr std::size_t kMaxCsvPairs = 200000;

std::string string_field(const nlohmann::json& request, const std::string& key, bool required,
                         const std::string& fallback = "") {
  if (!request.contains(key) || request[key].is_null()) {
    if (required) throw InputError(fmt::format("request: '{}' is required", key));
    return fallback;
  }
  if (!request[key].is_string()) throw InputError(fmt::format("request: '{}' must be a string", key));
  return request[key].get<std::string>();
}

// A path inside the root, as the engines take it (ForbiddenPath otherwise).
std::string root_path(const RootFolder& root, const nlohmann::json& request, const std::string& key) {
  return root.resolve(string_field(request, key, true)).string();
}

// A list of column names ("protected", "groups"); absent or null: empty.
std::vector<std::string> names_field(const nlohmann::json& request, const char* key) {
  std::vector<std::string> out;
  if (!request.contains(key) || request[key].is_null()) return out;
  const std::string what = fmt::format("request: '{}' must be a list of column names", key);
  if (!request[key].is_array()) throw InputError(what);
  for (const auto& v : request[key]) {
    if (!v.is_string()) throw InputError(what);
    out.push_back(v.get<std::string>());
  }
  return out;
}

// The request's "options" as the CLI flags' texts, by flag name (without the dashes).
std::map<std::string, std::string> options_field(const nlohmann::json& request) {
  std::map<std::string, std::string> out;
  if (!request.contains("options") || request["options"].is_null()) return out;
  if (!request["options"].is_object()) throw InputError("request: 'options' must be an object of flag -> value");
  for (const auto& [k, v] : request["options"].items()) {
    if (v.is_string()) {
      out[k] = v.get<std::string>();
    } else if (v.is_number() || v.is_boolean()) {
      out[k] = v.dump();
    } else {
      throw InputError(fmt::format("request: options.{} must be a string, number or boolean", k));
    }
  }
  return out;
}

// The server's cap on a job's time limit: none given, or more than the server allows, means the server's.
void cap_time_limit(Env& env, const JobLimits& limits) {
  const double limit = env.options.get_real("time-limit");
  if (limit <= 0 || limit > limits.max_seconds) env.options.set("time-limit", fmt::format("{}", limits.max_seconds));
}

// Likewise the memory limit: each job runs in a process of its own, bounded by the server's.
void cap_memory_limit(Env& env, const JobLimits& limits) {
  const double limit = env.options.get_real("memory-limit");
  if (limits.memory_mb > 0 && (limit <= 0 || limit > limits.memory_mb))
    env.options.set("memory-limit", fmt::format("{}", limits.memory_mb));
}

// The command line that does the same job, for the report.
std::string equivalent_command(const std::string& kind, const nlohmann::json& request,
                               const std::map<std::string, std::string>& options) {
  std::string line = fmt::format("witness {} {}", kind, string_field(request, "model", false));
  if (const std::string schema = string_field(request, "schema", false); !schema.empty()) line += " --schema " + schema;
  for (const char* key : {"protected", "groups"}) {
    const std::vector<std::string> names = names_field(request, key);
    if (!names.empty()) line += fmt::format(" --{} {}", key, fmt::join(names, ","));
  }
  if (const std::string label = string_field(request, "label", false); !label.empty()) line += " --label " + label;
  for (const char* rows : {"data", "seeds"}) {
    if (const std::string path = string_field(request, rows, false); !path.empty())
      line += fmt::format(" --{} {}", rows, path);
  }
  if (request.contains("engine") && request["engine"].is_string())
    line += " --engine " + request["engine"].get<std::string>();
  for (const auto& [k, v] : options) line += v == "true" ? " --" + k : fmt::format(" --{} {}", k, v);
  return line;
}

// What fair, test and bias requests share: the model, the schema, the protected attributes, the data
// and seed rows (paths under the root) and the options, read and checked before the job starts.
struct ModelJob {
  SubjectSource source;
  std::shared_ptr<Env> env = std::make_shared<Env>();
  std::string command;  // the CLI line that does the same

  template <typename J>
  ModelJob(const std::string& kind, const nlohmann::json& request, const RootFolder& root, const JobLimits& limits,
           const std::vector<SettingOption<J>>& table, J& job) {
    source.model_path = root_path(root, request, "model");
    source.model_name = root.relative(source.model_path);
    if (!string_field(request, "schema", false).empty()) source.schema_path = root_path(root, request, "schema");
    source.box = string_field(request, "box", false);
    source.protected_names = names_field(request, "protected");
    source.group_names = names_field(request, "groups");
    if (const std::string label = string_field(request, "label", false); !label.empty()) source.label = label;
    if (!string_field(request, "data", false).empty()) {
      source.data.path = root_path(root, request, "data");
      source.data.name = root.relative(source.data.path);
    }
    if (!string_field(request, "seeds", false).empty()) {
      source.seeds.path = root_path(root, request, "seeds");
      source.seeds.name = root.relative(source.seeds.path);
    }
    std::map<std::string, std::string> options = options_field(request);
    if (request.contains("engine") && request["engine"].is_string())
      options["engine"] = request["engine"].get<std::string>();
    set_job_options(table, job, *env, options);
    cap_time_limit(*env, limits);
    cap_memory_limit(*env, limits);
    options.erase("engine");
    command = equivalent_command(kind, request, options);
  }

  // The model, schema and rows, loaded on the job's thread (a malformed file fails the job).
  [[nodiscard]] JobSubject load(Job& job) const {
    env->set_cancel(&job.cancel_flag());
    env->start();
    return load_subject(source);
  }
};

std::function<JobOutput(Job&)> fair_job(const nlohmann::json& request, const RootFolder& root,
                                        const JobLimits& limits) {
  auto fair = std::make_shared<FairJob>();
  const auto j = std::make_shared<const ModelJob>("fair", request, root, limits, fair_options(), *fair);
  return [j, fair](Job& job) {
    fair->settings.progress = [&job](const CompleteProgress& p) {
      job.report_progress(progress_json(p), {p.seconds, p.certified, p.falsified});
    };
    return run_fair(j->load(job), *fair, *j->env, j->command);
  };
}

std::function<JobOutput(Job&)> test_job(const nlohmann::json& request, const RootFolder& root,
                                        const JobLimits& limits) {
  auto o = std::make_shared<TestOptions>();
  const auto j = std::make_shared<const ModelJob>("test", request, root, limits, test_options(), *o);
  settle_test_budget(*o, options_field(request));
  return [j, o](Job& job) {
    const JobSubject subject = j->load(job);
    TestOptions options_run = *o;
    options_run.on_progress = [&job](const TestProgress& p) {
      job.report_progress(progress_json(p),
                          {p.seconds, static_cast<double>(p.generated), static_cast<double>(p.discriminatory)});
    };
    ModelOracle oracle(*subject.model, subject.schema, j->env->threads());
    return run_testing(subject, oracle, options_run, *j->env, j->command, kMaxCsvPairs);
  };
}

std::function<JobOutput(Job&)> bias_job(const nlohmann::json& request, const RootFolder& root,
                                        const JobLimits& limits) {
  auto bias = std::make_shared<BiasJob>();
  const auto j = std::make_shared<const ModelJob>("bias", request, root, limits, bias_options(), *bias);
  return [j, bias](Job& job) { return run_bias(j->load(job), *bias, *j->env, j->command); };
}

std::function<JobOutput(Job&)> query_job(const nlohmann::json& request, const RootFolder& root,
                                         const JobLimits& limits) {
  const std::string text = string_field(request, "toml", true);
  QueryJob job;
  job.options.time_limit = limits.max_seconds;
  std::map<std::string, std::string> options = options_field(request);
  if (request.contains("time_limit") && request["time_limit"].is_number())
    options["time-limit"] = request["time_limit"].dump();
  for (const char* path_option : {"model", "program", "function"}) {
    if (options.contains(path_option))
      throw InputError(fmt::format("options.{}: name the model or program in the query text", path_option));
  }
  Env run;  // takes time_limit, the whole job's
  check_option_names("query", options);
  set_job_options(query_options(), job, run, options);
  auto within_job_limit = [&limits](double seconds) {
    return std::clamp(seconds <= 0 ? limits.max_seconds : seconds, 0.1, limits.max_seconds);
  };
  job.options.time_limit = within_job_limit(job.options.time_limit);
  const double run_limit = within_job_limit(run.options.get_real("time-limit"));
  if (limits.memory_mb > 0 && (job.options.memory_limit_mb <= 0 || job.options.memory_limit_mb > limits.memory_mb))
    job.options.memory_limit_mb = limits.memory_mb;
  // The text is parsed (and its programs compiled) on the job's thread, under the job's limits: a
  // request thread only checks the request's shape.
  return [text, job, run_limit, root = root.path().string()](Job& j) mutable {
    job.options.cancel = &j.cancel_flag();
    // Paths in the text are relative to the root, as if the file were saved there.
    std::vector<Query> queries = load_query_text(text, (std::filesystem::path(root) / "workbench-query.toml").string());
    const RootFolder folder(root);
    for (const Query& q : queries) {
      for (const std::string& p : {q.model_path, q.program_path, q.schema_path}) {
        if (!p.empty() && !folder.contains(p))
          throw InputError(fmt::format("{}: '{}' lies outside the root", q.where, p));
      }
    }
    return run_queries(job_queries(std::move(queries), job), job.options, run_limit);
  };
}

}  // namespace

std::function<JobOutput(Job&)> prepare_job(const nlohmann::json& request, const RootFolder& root,
                                           const JobLimits& limits) {
  if (!request.is_object()) throw InputError("request: expected a JSON object");
  const std::string kind = string_field(request, "kind", true);
  if (kind == "fair") return fair_job(request, root, limits);
  if (kind == "test") return test_job(request, root, limits);
  if (kind == "bias") return bias_job(request, root, limits);
  if (kind == "query") return query_job(request, root, limits);
  throw InputError(fmt::format("request: unknown kind '{}' (fair, test, bias, query)", kind));
}

nlohmann::json describe_inputs(const RootFolder& root, const std::string& path, const std::string& function,
                               const JobLimits& limits) {
  const std::filesystem::path file = root.resolve(path);
  const std::string ext = file.extension().string();
  if (ext == ".c" || ext == ".cc" || ext == ".cpp" || ext == ".cxx") {
    if (function.empty()) throw InputError(path, "", "a program needs function=NAME");
    const Program p = Program::compile(file.string(), function, "function", BuildLimits{.seconds = limits.max_seconds});
    nlohmann::json inputs = nlohmann::json::array();
    for (const ProgramInput& in : p.inputs()) {
      if (in.global) continue;  // globals keep their initializers unless a query declares them
      const char* type = in.kind == ProgramInput::Kind::Bool  ? "bool"
                         : in.kind == ProgramInput::Kind::Int ? "int"
                                                              : "real";
      inputs.push_back({{"name", in.name}, {"type", type}});
    }
    return {{"kind", "program"},
            {"path", path},
            {"function", function},
            {"inputs", inputs},
            {"outputs", nlohmann::json::array()},
            {"classes", nlohmann::json::array()}};
  }
  const Model m = load_model(file.string());
  nlohmann::json inputs = nlohmann::json::array();
  // A model that carries its preprocessing is asked in raw columns: categories by their labels.
  for (const RawColumn& c : m.columns) {
    nlohmann::json in = {{"name", c.name}, {"type", c.categorical ? "category" : "real"}};
    if (c.categorical) in["categories"] = c.categories;
    inputs.push_back(std::move(in));
  }
  for (int i = 0; m.columns.empty() && i < m.input_width(); ++i) {
    const auto k = static_cast<std::size_t>(i);
    inputs.push_back(
        {{"name", k < m.input_names.size() ? m.input_names[k] : fmt::format("input[{}]", i)}, {"type", "real"}});
  }
  return {{"kind", "model"},           {"path", path},
          {"function", nullptr},       {"inputs", inputs},
          {"outputs", m.output_names}, {"classes", m.rule.class_labels}};
}

}  // namespace witness
