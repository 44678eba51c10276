#include "core/options.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

#include "core/error.h"

namespace witness {

const std::vector<OptionSpec>& option_table() {
  using T = OptionSpec::Type;
  static const std::vector<OptionSpec> table = {
      {"seed", T::Int, "1", 0, 9.0e15, "random seed; the same seed gives the same result", {}},
      {"threads", T::Int, "0", 0, 1024, "worker threads (0 = all cores)", {}},
      {"time-limit", T::Real, "0", 0, 1.0e9, "wall-clock limit in seconds (0 = none)", {}},
      {"memory-limit",
       T::Real,
       "0",
       0,
       1.0e9,
       "resident memory in MiB past which the run stops as at its time limit (0 = none)",
       {}},
      {"verbose", T::Int, "0", 0, 3, "log detail on stderr (0 = errors only)", {}},
      {"stats", T::Bool, "false", 0, 0, "print every counter of the run on stderr at the end", {}},
  };
  return table;
}

namespace {

double number_of(const OptionSpec& s, const std::string& text) {
  const bool numeric = s.type == OptionSpec::Type::Int || s.type == OptionSpec::Type::Real;
  return numeric ? std::stod(text) : 0.0;
}

}  // namespace

Options::Options() {
  for (const OptionSpec& s : option_table()) values_[s.name] = Value{&s, s.fallback, number_of(s, s.fallback), false};
}

const Options::Value& Options::value(const std::string& name, OptionSpec::Type type) const {
  const auto it = values_.find(name);
  if (it == values_.end()) throw InternalError("unknown option '" + name + "'");
  if (it->second.spec->type != type) throw InternalError("option '" + name + "' read as another type");
  return it->second;
}

void check_option_value(const OptionSpec& s, const std::string& value) {
  if (s.type == OptionSpec::Type::Int || s.type == OptionSpec::Type::Real) {
    std::size_t used = 0;
    double v = std::numeric_limits<double>::quiet_NaN();
    try {
      v = std::stod(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != value.size() || !std::isfinite(v) || (s.type == OptionSpec::Type::Int && v != std::floor(v))) {
      throw InputError(fmt::format("--{}: expected {}, got '{}'", s.name,
                                   s.type == OptionSpec::Type::Int ? "an integer" : "a number", value));
    }
    if (v < s.min || v > s.max) {
      throw InputError(fmt::format("--{}: {} is outside [{:.15g}, {:.15g}]", s.name, value, s.min, s.max));
    }
  } else if (s.type == OptionSpec::Type::Bool && value != "true" && value != "false") {
    throw InputError(fmt::format("--{}: expected true or false, got '{}'", s.name, value));
  } else if (s.type == OptionSpec::Type::String && !s.allowed.empty() &&
             std::find(s.allowed.begin(), s.allowed.end(), value) == s.allowed.end()) {
    throw InputError(fmt::format("--{}: unknown value '{}' (known: {})", s.name, value, fmt::join(s.allowed, ", ")));
  }
}

std::string number_text(double v) { return fmt::format("{}", v); }

std::string option_help(const OptionSpec& s) {
  std::string help = s.help;
  if (!s.allowed.empty()) help += fmt::format(" (one of: {})", fmt::join(s.allowed, ", "));
  if (s.type != OptionSpec::Type::Bool) help += " [default " + s.fallback + "]";
  return help;
}

void Options::set(const std::string& name, const std::string& value) {
  const auto it = values_.find(name);
  if (it == values_.end()) throw InternalError("unknown option '" + name + "'");
  const OptionSpec& s = *it->second.spec;
  check_option_value(s, value);
  it->second = Value{&s, value, number_of(s, value), true};
}

bool Options::is_set(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) throw InternalError("unknown option '" + name + "'");
  return it->second.set;
}

long long Options::get_int(const std::string& name) const {
  return static_cast<long long>(value(name, OptionSpec::Type::Int).number);
}

double Options::get_real(const std::string& name) const { return value(name, OptionSpec::Type::Real).number; }

bool Options::get_bool(const std::string& name) const { return value(name, OptionSpec::Type::Bool).text == "true"; }

const std::string& Options::get_string(const std::string& name) const {
  return value(name, OptionSpec::Type::String).text;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (const char c : text + ",") {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  return out;
}

}  // namespace witness
