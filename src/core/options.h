// Options are declared once, in a table (name, type, default, range, help); the CLI generates its
// flags from the table and library code reads typed values from an Options object:
//
//   witness::Options opts;                       // every option at its default
//   opts.set("seed", "7");                       // parsed and range-checked, InputError if bad
//   long long seed = opts.get_int("seed");
//   for (const witness::OptionSpec& s : witness::option_table()) { /* make a --flag */ }
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

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

// The options shared by all subcommands.
const std::vector<OptionSpec>& option_table();

class Options {
 public:
  Options();
  void set(const std::string& name, const std::string& value);  // InputError if unknown or out of range
  [[nodiscard]] long long get_int(const std::string& name) const;
  [[nodiscard]] double get_real(const std::string& name) const;
  [[nodiscard]] bool get_bool(const std::string& name) const;
  [[nodiscard]] const std::string& get_string(const std::string& name) const;

 private:
  [[nodiscard]] const OptionSpec& spec(const std::string& name) const;
  std::map<std::string, std::string> values_;
};

}  // namespace witness
