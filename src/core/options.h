// Options are declared once, in a table (name, type, default, range, help); the CLI generates its
// flags from the table and library code reads typed values from an Options object:
//
//   witness::Options opts;                       // every option at its default
//   opts.set("seed", "7");                       // parsed and range-checked, InputError if bad
//   long long seed = opts.get_int("seed");       // the value parsed by set(), of the option's type
//   bool chosen = opts.is_set("time-limit");     // false: still the default
//   for (const witness::OptionSpec& s : witness::option_table()) { /* make a --flag */ }
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/choice.h"
#include "core/error.h"

namespace witness {

struct OptionSpec {
  enum class Type : std::uint8_t { Int, Real, Bool, String };
  std::string name;  // flag name without dashes
  Type type = Type::Int;
  std::string fallback;  // default, as text
  double min = 0;        // range for Int and Real
  double max = 0;
  std::string help;
  std::vector<std::string> allowed;  // String: the values allowed (empty: any)
};

// InputError ("--name: ...") unless `value` is a valid text for the option: a number of the type
// in range, true/false, or one of the allowed strings.
void check_option_value(const OptionSpec& spec, const std::string& value);
// The help text with what is allowed and the default appended, as the CLI shows it.
std::string option_help(const OptionSpec& spec);
// A real as the shortest text that reads back as the same double ("1", "0.3").
std::string number_text(double v);
// Splits a list option "a, b,c" into its names, dropping spaces and empty parts.
std::vector<std::string> split_list(const std::string& text);

// The options shared by all subcommands.
const std::vector<OptionSpec>& option_table();

// One field of a settings struct S as an option: its spec, how to store a checked text in S, and
// how to read the field back as text (for range checks of settings filled in by code, and reports).
// Tables of these declare a layer's options once (fairness/engine.h, fairness/blackbox.h); the CLI
// generates its flags from the specs.
template <typename S>
struct SettingOption {
  OptionSpec spec;
  std::function<void(S&, const std::string&)> store;
  std::function<std::string(const S&)> text;
};

// Checks `value` against the named option's spec and stores it: InputError for a bad value or an
// unknown name. Choice options report through their Choices ("--split: unknown rule 'x' ...").
template <typename S>
void set_setting(const std::vector<SettingOption<S>>& table, S& settings, const std::string& name,
                 const std::string& value) {
  for (const SettingOption<S>& o : table) {
    if (o.spec.name != name) continue;
    if (o.spec.allowed.empty()) check_option_value(o.spec, value);
    o.store(settings, value);
    return;
  }
  throw InputError("unknown option '" + name + "'");
}

// InputError for the first field outside its declared range.
template <typename S>
void check_settings(const std::vector<SettingOption<S>>& table, const S& settings) {
  for (const SettingOption<S>& o : table) check_option_value(o.spec, o.text(settings));
}

// Builders of table rows, one per kind of field.
template <typename S, typename I>
SettingOption<S> count_setting(const char* name, double min, I S::*field, const std::string& help) {
  const double max = std::min(1.0e15, static_cast<double>(std::numeric_limits<I>::max()));
  return {{name, OptionSpec::Type::Int, std::to_string(S{}.*field), min, max, help, {}},
          [field](S& s, const std::string& v) { s.*field = static_cast<I>(std::stod(v)); },
          [field](const S& s) { return std::to_string(s.*field); }};
}
template <typename S>
SettingOption<S> real_setting(const char* name, double min, double max, double S::*field, const std::string& help) {
  auto text = [field](const S& s) { return number_text(s.*field); };
  return {{name, OptionSpec::Type::Real, text(S{}), min, max, help, {}},
          [field](S& s, const std::string& v) { s.*field = std::stod(v); },
          text};
}
template <typename S>
SettingOption<S> flag_setting(const char* name, bool S::*field, const std::string& help) {
  return {{name, OptionSpec::Type::Bool, "false", 0, 0, help, {}},
          [field](S& s, const std::string& v) { s.*field = v == "true"; },
          [field](const S& s) { return std::string(s.*field ? "true" : "false"); }};
}
template <typename S, typename E, std::size_t N>
SettingOption<S> choice_setting(const char* name, const Choices<E, N>& choices, E S::*field, const std::string& help) {
  return {
      {name, OptionSpec::Type::String, choices.name(S{}.*field), 0, 0, help, choices.names()},
      [field, &choices, name](S& s, const std::string& v) { s.*field = choices.parse(v, std::string("--") + name); },
      [field, &choices](const S& s) { return std::string(choices.name(s.*field)); }};
}

// The run options (option_table()), each parsed once when set: reading one is a lookup, not a
// parse. A getter of another type than the option's, or an unknown name, is an InternalError.
class Options {
 public:
  Options();
  void set(const std::string& name, const std::string& value);  // InputError if unknown or out of range
  [[nodiscard]] bool is_set(const std::string& name) const;     // set() was called, even to the default
  [[nodiscard]] long long get_int(const std::string& name) const;
  [[nodiscard]] double get_real(const std::string& name) const;
  [[nodiscard]] bool get_bool(const std::string& name) const;
  [[nodiscard]] const std::string& get_string(const std::string& name) const;

 private:
  struct Value {
    const OptionSpec* spec = nullptr;
    std::string text;
    double number = 0;  // Int and Real
    bool set = false;
  };
  [[nodiscard]] const Value& value(const std::string& name, OptionSpec::Type type) const;
  std::map<std::string, Value, std::less<>> values_;
};

}  // namespace witness
