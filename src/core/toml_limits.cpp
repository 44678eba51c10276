#include "core/toml_limits.h"

#include <fmt/format.h>

#include <vector>

#include "core/error.h"

namespace witness {

void check_toml_limits(std::string_view text, const std::string& source) {
  int line = 1;
  std::vector<char> open;  // '[' of arrays and table headers, '{' of inline tables
  bool key = true;         // reading a key (line start, a table header, after '{' or ',' in one)
  bool header = false;     // inside [table] or [[array of tables]]
  int segments = 1;        // of the key being read
  auto fail = [&](const std::string& what) { throw InputError(source, fmt::format("line {}", line), what); };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"' || c == '\'') {  // a string (basic, literal, or multi-line): skipped whole
      const bool multi = text.substr(i, 3) == std::string(3, c);
      const std::size_t start = i + (multi ? 3 : 1);
      std::size_t j = start;
      for (; j < text.size(); ++j) {
        if (text[j] == '\n') {
          if (!multi) break;  // toml++ reports the unterminated string
          ++line;
        } else if (c == '"' && text[j] == '\\') {
          ++j;
          if (j < text.size() && text[j] == '\n') ++line;
        } else if (text[j] == c && (!multi || text.substr(j, 3) == std::string(3, c))) {
          break;
        }
      }
      i = multi && j < text.size() ? j + 2 : j;
      if (i < text.size() && text[i] == '\n') --i;  // the newline is counted below
      continue;
    }
    switch (c) {
      case '#':
        while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
        break;
      case '\n':
        ++line;
        if (open.empty() || open.back() != '[') {
          key = open.empty();
          segments = 1;
        }
        break;
      case '.':
        if (key && ++segments > kTomlMaxKeySegments) {
          fail(fmt::format("a dotted key with more than {} parts", kTomlMaxKeySegments));
        }
        break;
      case '=': key = false; break;
      case '[':
      case '{':
        if (static_cast<int>(open.size()) >= kTomlMaxNesting) {
          fail(fmt::format("arrays and inline tables nested more than {} deep", kTomlMaxNesting));
        }
        header = (c == '[' && open.empty() && key) || (c == '[' && header);
        open.push_back(c);
        key = c == '{' || header;
        if (c == '{' || open.size() == 1) segments = 1;
        break;
      case ']':
      case '}':
        if (!open.empty()) open.pop_back();
        if (open.empty()) header = false;
        break;
      case ',':
        if (!open.empty() && open.back() == '{') {
          key = true;
          segments = 1;
        }
        break;
      default: break;
    }
  }
}

}  // namespace witness
