#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "cli/cli.h"
#include "core/error.h"
#include "domain/dataset.h"

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

Schema load_schema_for(const Model& model, const std::string& path, const std::string& box) {
  Schema schema = load_schema(path);
  if (!box.empty()) schema = schema.with_box(box);
  if (schema.model_width() != model.input_width()) {
    throw InputError(path, "",
                     fmt::format("the schema describes {} model inputs, but {} takes {}", schema.model_width(),
                                 model.source, model.input_width()));
  }
  return schema;
}

std::string label_name(const Model& model, int label) {
  const auto& names = model.rule.class_labels;
  if (label >= 0 && static_cast<std::size_t>(label) < names.size()) return names[static_cast<std::size_t>(label)];
  return std::to_string(label);
}

std::string label_name(const Model& model, const Schema& schema, int label) {
  if (!model.rule.class_labels.empty()) return label_name(model, label);
  return label_name(schema, label);
}

std::string label_name(const Schema& schema, int label) {
  const auto& names = schema.label_classes();
  if (label >= 0 && static_cast<std::size_t>(label) < names.size()) return names[static_cast<std::size_t>(label)];
  if (!schema.label().empty()) return schema.label() + "=" + std::to_string(label);
  return std::to_string(label);
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text + ",") {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  return out;
}

void print_json(const nlohmann::json& doc) {
  // Names read from a corrupt file need not be UTF-8: replace bad bytes rather than fail.
  std::cout << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

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

nlohmann::json named_row(const Schema& s, const Eigen::VectorXd& raw) {
  nlohmann::json out = nlohmann::json::object();
  for (int i = 0; i < s.size(); ++i) {
    const Feature& f = s.feature(i);
    // Categories by label, numbers as JSON numbers.
    if (f.kind == FeatureKind::Categorical || f.kind == FeatureKind::Boolean) {
      out[f.name] = s.display(i, raw(i));
    } else if (f.integral()) {
      out[f.name] = static_cast<long long>(raw(i));
    } else {
      out[f.name] = raw(i);
    }
  }
  return out;
}

ProgressLine::ProgressLine() : tty_(isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()) {}

void ProgressLine::show(const std::string& text) {
  if (!tty_ || std::chrono::steady_clock::now() - start_ < std::chrono::seconds(1)) return;
  std::cerr << "\r\033[K" << text << std::flush;
  shown_ = true;
}

PairCsv::PairCsv(const std::string& path, const Schema& schema, const std::vector<int>& prot)
    : path_(path), schema_(schema), prot_(prot), out_(path) {
  if (!out_) throw InputError(path, "", "cannot open for writing");
  std::string header;
  for (int i = 0; i < schema.size(); ++i) header += (i > 0 ? "," : "") + csv_field(schema.feature(i).name);
  for (int f : prot) header += "," + csv_field(schema.feature(f).name + "'");
  out_ << header << ",label,label'\n";
}

void PairCsv::write(const Eigen::VectorXd& raw, const Eigen::VectorXd& raw_prime, const std::string& label,
                    const std::string& label_prime) {
  std::string row;
  for (int i = 0; i < schema_.size(); ++i) row += (i > 0 ? "," : "") + csv_field(schema_.display(i, raw[i]));
  for (int f : prot_) row += "," + csv_field(schema_.display(f, raw_prime[f]));
  out_ << row << ',' << csv_field(label) << ',' << csv_field(label_prime) << '\n';
  ++rows_;
}

void PairCsv::close() {
  out_.close();
  if (!out_) throw InputError(path_, "", "write failed");
}

void ProgressLine::clear() {
  if (shown_) std::cerr << "\r\033[K" << std::flush;
  shown_ = false;
}

}  // namespace witness::cli
