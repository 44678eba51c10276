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
#include "model/loaders.h"
#include "program/program.h"
#include "query/query.h"
#include "report/query_report.h"
#include "report/runs.h"

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

// The model, named in answers by its path under the root (as the CLI run from the root would).
Model load_root_model(const RootFolder& root, const std::string& path) {
  Model m = load_model(path);
  m.source = root.relative(path);
  return m;
}

std::vector<std::string> protected_field(const nlohmann::json& request) {
  std::vector<std::string> out;
  if (!request.contains("protected") || request["protected"].is_null()) return out;
  if (!request["protected"].is_array()) throw InputError("request: 'protected' must be a list of feature names");
  for (const auto& v : request["protected"]) {
    if (!v.is_string()) throw InputError("request: 'protected' must be a list of feature names");
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

// Moves the run options (seed, threads, time-limit) into the environment and returns the rest.
// The time limit is capped by the server's; none given means the server's.
std::map<std::string, std::string> take_env_options(std::map<std::string, std::string> options, Env& env,
                                                    const JobLimits& limits) {
  for (const char* name : {"seed", "threads", "time-limit"}) {
    const auto it = options.find(name);
    if (it == options.end()) continue;
    env.options.set(name, it->second);
    options.erase(it);
  }
  const double limit = env.options.get_real("time-limit");
  if (limit <= 0 || limit > limits.max_seconds) env.options.set("time-limit", fmt::format("{}", limits.max_seconds));
  return options;
}

// The command line that does the same job, for the report.
std::string equivalent_command(const std::string& kind, const nlohmann::json& request,
                               const std::map<std::string, std::string>& options) {
  std::string line = fmt::format("witness {} {} --schema {}", kind, string_field(request, "model", false),
                                 string_field(request, "schema", false));
  const std::vector<std::string> prot = protected_field(request);
  if (!prot.empty()) line += fmt::format(" --protected {}", fmt::join(prot, ","));
  if (request.contains("engine") && request["engine"].is_string())
    line += " --engine " + request["engine"].get<std::string>();
  for (const auto& [k, v] : options) line += v == "true" ? " --" + k : fmt::format(" --{} {}", k, v);
  return line;
}

// What fair, test and bias requests share: the model, the schema, the protected attributes and the
// options, read and checked before the job starts.
struct ModelJob {
  std::string kind;
  std::string model_path, schema_path, box;    // resolved inside the root
  std::vector<std::string> requested;          // protected, as asked (empty: the schema's)
  std::map<std::string, std::string> options;  // as given (for the command line)
  std::map<std::string, std::string> rest;     // the command's own options (not seed, threads, time-limit)
  std::shared_ptr<Env> env;
  std::string command;  // the CLI line that does the same

  ModelJob(const std::string& job_kind, const nlohmann::json& request, const RootFolder& root, const JobLimits& limits)
      : kind(job_kind),
        model_path(root_path(root, request, "model")),
        schema_path(root_path(root, request, "schema")),
        box(string_field(request, "box", false)),
        requested(protected_field(request)),
        options(options_field(request)),
        env(std::make_shared<Env>()),
        command(equivalent_command(kind, request, options)) {
    rest = take_env_options(options, *env, limits);
  }
};

// The model and the schema a job runs on, loaded on the job's thread (a malformed file fails the job).
struct LoadedModel {
  Model model;
  Schema schema;
  std::vector<std::string> names;  // the protected attributes
};

LoadedModel load_for_job(const ModelJob& j, const RootFolder& root, Job& job) {
  j.env->set_cancel(&job.cancel_flag());
  j.env->start();
  LoadedModel out{.model = load_root_model(root, j.model_path), .schema = Schema(), .names = j.requested};
  out.schema = load_schema_for(out.model, j.schema_path, j.box);
  if (out.names.empty()) out.names = out.schema.protected_names();
  if (out.names.empty())
    throw InputError(j.schema_path, "", "no protected attribute: give protected or set `protected`");
  return out;
}

std::function<JobOutput(Job&)> fair_job(const nlohmann::json& request, const RootFolder& root,
                                        const JobLimits& limits) {
  const std::string engine = string_field(request, "engine", false, "auto");
  (void)fairness_engine(engine);  // an unknown engine is a bad request
  const auto j = std::make_shared<const ModelJob>("fair", request, root, limits);
  auto settings = std::make_shared<EngineSettings>();
  for (const auto& [k, v] : j->rest) set_setting(engine_options(), *settings, k, v);
  return [j, settings, engine, &root](Job& job) {
    settings->cancel = &job.cancel_flag();
    settings->progress = [&job](const CompleteProgress& p) {
      job.report_progress({{"certified", p.certified},
                           {"falsified", p.falsified},
                           {"undecided", std::max(0.0, 1.0 - p.certified - p.falsified)},
                           {"leaves", p.leaves},
                           {"seconds", p.seconds}},
                          {p.seconds, p.certified, p.falsified});
    };
    const LoadedModel m = load_for_job(*j, root, job);
    return run_fair(FairnessProblem(m.model, m.schema, m.names), engine, *settings, *j->env, j->command);
  };
}

std::function<JobOutput(Job&)> test_job(const nlohmann::json& request, const RootFolder& root,
                                        const JobLimits& limits) {
  const auto j = std::make_shared<const ModelJob>("test", request, root, limits);
  auto o = std::make_shared<TestOptions>();
  if (!j->rest.contains("budget") && j->options.contains("time-limit")) o->budget = 0;  // until the limit
  for (const auto& [k, v] : j->rest) set_setting(test_options(), *o, k, v);
  return [j, o, &root](Job& job) {
    const LoadedModel m = load_for_job(*j, root, job);
    TestOptions options_run = *o;
    options_run.protected_features = m.schema.protected_indices(m.names);
    options_run.on_progress = [&job](const TestProgress& p) {
      job.report_progress({{"generated", p.generated},
                           {"discriminatory", p.discriminatory},
                           {"budget", p.budget},
                           {"seconds", p.seconds}},
                          {p.seconds, static_cast<double>(p.generated), static_cast<double>(p.discriminatory)});
    };
    ModelOracle oracle(m.model, m.schema, j->env->threads());
    return run_testing(oracle, m.schema, m.names, options_run, *j->env, j->command, kMaxCsvPairs);
  };
}

std::function<JobOutput(Job&)> bias_job(const nlohmann::json& request, const RootFolder& root,
                                        const JobLimits& limits) {
  const auto j = std::make_shared<const ModelJob>("bias", request, root, limits);
  std::map<std::string, std::string> rest = j->rest;
  long long samples = 100000;
  if (const auto it = rest.find("samples"); it != rest.end()) {
    try {
      samples = std::stoll(it->second);
    } catch (const std::exception&) {
      samples = 0;
    }
    if (samples <= 0 || samples > 100000000)
      throw InputError(fmt::format("options.samples: expected a count from 1 to 1e8, got '{}'", it->second));
    rest.erase(it);
  }
  if (!rest.empty()) throw InputError(fmt::format("options: unknown option '{}' for bias", rest.begin()->first));
  return [j, samples, &root](Job& job) {
    const LoadedModel m = load_for_job(*j, root, job);
    BiasOptions o;
    o.samples = samples;
    o.seed = j->env->seed();
    o.threads = j->env->threads();
    return run_bias(m.model, m.schema, m.names, o, *j->env, j->command);
  };
}

std::function<JobOutput(Job&)> query_job(const nlohmann::json& request, const RootFolder& root,
                                         const JobLimits& limits) {
  const std::string text = string_field(request, "toml", true);
  // Paths in the text are relative to the root, as if the file were saved there.
  auto queries =
      std::make_shared<std::vector<Query>>(load_query_text(text, (root.path() / "workbench-query.toml").string()));
  for (const Query& q : *queries) {
    for (const std::string& p : {q.model_path, q.program_path}) {
      if (!p.empty() && !root.contains(p))
        throw ForbiddenPath(fmt::format("{}: '{}' lies outside the root", q.where, p));
    }
  }
  QueryOptions options;
  options.time_limit = limits.max_seconds;
  if (request.contains("time_limit") && request["time_limit"].is_number())
    options.time_limit = std::clamp(request["time_limit"].get<double>(), 0.1, limits.max_seconds);
  return [queries, options](Job& job) mutable {
    options.cancel = &job.cancel_flag();
    return run_queries(*queries, options);
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

nlohmann::json describe_inputs(const RootFolder& root, const std::string& path, const std::string& function) {
  const std::filesystem::path file = root.resolve(path);
  const std::string ext = file.extension().string();
  if (ext == ".c" || ext == ".cc" || ext == ".cpp" || ext == ".cxx") {
    if (function.empty()) throw InputError(path, "", "a program needs function=NAME");
    const Program p = Program::compile(file.string(), function, "function");
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
  for (int i = 0; i < m.input_width(); ++i) {
    const auto k = static_cast<std::size_t>(i);
    inputs.push_back(
        {{"name", k < m.input_names.size() ? m.input_names[k] : fmt::format("input[{}]", i)}, {"type", "real"}});
  }
  return {{"kind", "model"},           {"path", path},
          {"function", nullptr},       {"inputs", inputs},
          {"outputs", m.output_names}, {"classes", m.rule.class_labels}};
}

}  // namespace witness
