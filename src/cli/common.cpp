#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "cli/cli.h"
#include "core/alarm.h"
#include "core/error.h"
#include "core/file.h"
#include "domain/dataset.h"
#include "report/html_report.h"
#include "run/jobs.h"

namespace witness::cli {

void add_option_flags(CLI::App& cmd, const std::vector<OptionSpec>& specs, std::map<std::string, std::string>& raw) {
  for (const OptionSpec& s : specs) {
    if (s.type == OptionSpec::Type::Bool) {
      cmd.add_flag_callback(
          "--" + s.name, [&raw, name = s.name] { raw[name] = "true"; }, option_help(s));
    } else {
      const char* type = s.type == OptionSpec::Type::Int    ? "INT"
                         : s.type == OptionSpec::Type::Real ? "NUMBER"
                         : s.allowed.empty()                ? "TEXT"
                                                            : "CHOICE";
      cmd.add_option("--" + s.name, raw[s.name], option_help(s))->type_name(type);
    }
  }
}

SubjectSource SubjectArgs::source() const {
  SubjectSource src;
  src.model_path = model;
  src.schema_path = schema;
  src.box = box;
  src.protected_names = split_list(protected_list);
  if (!label.empty()) src.label = label;
  src.group_names = split_list(groups_list);
  return src;
}

void add_data_options(CLI::App& cmd, SubjectArgs& args) {
  cmd.add_option("--label", args.label,
                 "the data's true-label column, for true and false positive rates and accuracy (default: the schema's "
                 "label column when the data has it; never guessed)");
  cmd.add_option("--groups", args.groups_list,
                 "columns for the group table and their intersection, comma-separated, read by the model or not "
                 "(default: the protected attributes)");
}

void add_subject_options(CLI::App& cmd, SubjectArgs& args, const std::string& rows, bool model_required) {
  auto* model = cmd.add_option("model", args.model,
                               std::string("model file (.json mlp-json-v1, Keras .h5, .onnx incl. skl2onnx pipelines, "
                                           ".nnet)") +
                                   (model_required ? "" : "; or use --cmd"));
  if (model_required) model->required();
  cmd.add_option("--schema", args.schema,
                 "input schema (TOML); a model that carries its preprocessing (a skl2onnx pipeline) brings its own, "
                 "read off " +
                     rows);
  cmd.add_option("--box", args.box, "use a named alternative box of the schema (e.g. fairify)");
  cmd.add_option("--protected", args.protected_list, "protected attributes, comma-separated (default: the schema's)");
}

std::map<std::string, std::string> given_options(const std::map<std::string, std::string>& raw) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : raw) {
    if (!value.empty()) out.emplace(name, value);
  }
  return out;
}

void print_answer(const RunOutput& out, bool json) {
  if (json) {
    print_json(out.result);
  } else {
    std::cout << out.text;
  }
}

int verdict_exit_code(const nlohmann::json& result) {
  const std::string v = result.value("verdict", "inconclusive");
  return v == "verified" ? 0 : v == "witness" ? 10 : 20;
}

void add_env_options(CLI::App& cmd, std::map<std::string, std::string>& raw, const std::vector<std::string>& names) {
  std::vector<OptionSpec> specs;
  for (const OptionSpec& s : option_table()) {
    if (std::find(names.begin(), names.end(), s.name) != names.end()) specs.push_back(s);
  }
  add_option_flags(cmd, specs, raw);
}

void apply_env_options(Env& env, const std::map<std::string, std::string>& raw) {
  for (const auto& [name, value] : raw) {
    if (!value.empty()) env.options.set(name, value);
  }
  env.start();
}

void print_stats(const Env& env) {
  if (!env.options.get_bool("stats") && env.options.get_int("verbose") < 1) return;
  for (const auto& [name, value] : env.stats.all()) std::cerr << fmt::format("stats: {} = {}\n", name, value);
}

void print_json(const nlohmann::json& doc) { std::cout << json_text(doc) << '\n'; }

void add_report_options(CLI::App& cmd, ReportFiles& files) {
  cmd.add_option("--html", files.html,
                 "also write a self-contained HTML report (opens offline: verdict, pairs, charts, command)");
  cmd.add_option("--report-json", files.json,
                 "also write the report's JSON (the --json document with the text, schema and pairs); "
                 "witness report turns it into HTML");
}

void check_report_files(const ReportFiles& files) {
  for (const std::string& f : {files.json, files.html}) {
    if (!f.empty()) check_writable(f);
  }
}

void write_reports(const ReportFiles& files, const nlohmann::json& envelope) {
  if (!files.json.empty()) write_file(files.json, json_text(envelope) + "\n");
  if (!files.html.empty()) write_html_report(files.html, envelope);
}

namespace {
std::string& recorded_command_line() {
  static std::string line = "witness";
  return line;
}
// Quoted for a POSIX shell where needed, so the line can be pasted back.
std::string shell_word(const std::string& word) {
  if (!word.empty() &&
      word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,:+@%") ==
          std::string::npos)
    return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}
}  // namespace

void set_command_line(int argc, const char* const* argv) {
  std::string line = "witness";
  for (int i = 1; i < argc; ++i) line += " " + shell_word(argv[i]);
  recorded_command_line() = line;
}

const std::string& command_line() { return recorded_command_line(); }

long long count_parameters(const Model& m) {
  long long n = 0;
  for (const Node& nd : m.nodes) {
    n += static_cast<long long>(nd.weights.size());
    if (nd.op == OpKind::Dense) n += static_cast<long long>(nd.values.size());
    if (nd.trees) {
      for (const auto& t : nd.trees->trees) n += static_cast<long long>(t.nodes.size() + t.leaves.size());
    }
  }
  return n;
}

ProgressLine::ProgressLine() : tty_(isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()) {}

void ProgressLine::show(const std::string& text) {
  if (!tty_ || std::chrono::steady_clock::now() - start_ < std::chrono::seconds(1)) return;
  std::cerr << "\r\033[K" << text << std::flush;
  shown_ = true;
}

void ProgressLine::clear() {
  if (shown_) std::cerr << "\r\033[K" << std::flush;
  shown_ = false;
}

JobSubject load_subject_within_limit(const SubjectSource& source, const Env& env, const std::string& command, bool json,
                                     const nlohmann::json& fields) {
  const double limit = env.options.get_real("time-limit");
  if (limit <= 0) return load_subject(source);
  const double grace = limit_slack(limit);
  const std::string why = fmt::format("the {} s time limit passed while reading the inputs ({}); nothing was searched",
                                      limit, source.model_path);
  nlohmann::json document = fields;
  document.update({{"kind", command}, {"verdict", "inconclusive"}, {"reason", why}, {"model", source.model_path}});
  const std::string answer = json ? document.dump(2) + "\n" : "inconclusive: " + why + "\n";
  const Alarm deadline(seconds_from_now(limit + grace - env.elapsed_seconds()), [&answer] {
    std::fputs(answer.c_str(), stdout);
    std::fflush(stdout);
    std::_Exit(20);
  });
  return load_subject(source);
}

}  // namespace witness::cli
