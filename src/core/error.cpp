#include "core/error.h"

#include <fmt/format.h>

namespace witness {
namespace {

constexpr std::size_t kMaxRun = 200;       // characters of one run without a space (a CSV cell, a name)
constexpr std::size_t kMaxMessage = 4000;  // characters of a whole message

// A message fit to print: control characters (a NUL would end what() early) written as \xNN, a
// run of more than kMaxRun characters without a space and a message over kMaxMessage shortened,
// saying by how much. Errors echo what they read, and what they read may be a 200 MB line.
std::string printable_message(const std::string& text) {
  std::string out;
  std::size_t run = 0;
  std::size_t i = 0;
  for (; i < text.size() && out.size() < kMaxMessage; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    run = (c == ' ' || c == '\n') ? 0 : run + 1;
    if (run > kMaxRun) {
      std::size_t end = i;
      while (end < text.size() && text[end] != ' ' && text[end] != '\n') ++end;
      out += fmt::format("...({} more characters)", end - i);
      i = end - 1;
      run = 0;
      continue;
    }
    if (c < 0x20 && c != '\n' && c != '\t') {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (i < text.size()) out += fmt::format("...({} more characters)", text.size() - i);
  return out;
}

std::string join_parts(const std::string& file, const std::string& where, const std::string& what) {
  std::string out;
  for (const std::string* part : {&file, &where, &what}) {
    if (part->empty()) continue;
    if (!out.empty()) out += ": ";
    out += *part;
  }
  return out;
}

}  // namespace

InputError::InputError(const std::string& message) : Error(printable_message(message)) {}

InputError::InputError(const std::string& file, const std::string& where, const std::string& what)
    : Error(printable_message(join_parts(file, where, what))) {}

}  // namespace witness
