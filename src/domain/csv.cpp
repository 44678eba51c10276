#include "domain/csv.h"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/file.h"

namespace witness::detail {

std::string_view trim(std::string_view s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  return s.substr(b, e - b);
}

bool parse_number(std::string_view s, double& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty() || s.front() == '+' || s.front() == ' ') return false;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && ptr == end && std::isfinite(out);
}

CsvReader::CsvReader(std::string text, std::string source) : text_(std::move(text)), source_(std::move(source)) {
  if (text_.starts_with("\xEF\xBB\xBF")) pos_ = 3;  // UTF-8 byte order mark, as Excel writes it
}

CsvReader CsvReader::open(const std::string& path) { return CsvReader(read_file(path), path); }

bool CsvReader::next(std::vector<std::string_view>& fields) {
  fields.clear();
  const std::size_t n = text_.size();
  // Blank lines carry no record (pandas' skip_blank_lines), which also covers a trailing newline.
  while (pos_ < n) {
    if (text_[pos_] == '\n') {
      ++pos_;
      ++line_;
    } else if (text_[pos_] == '\r' && (pos_ + 1 == n || text_[pos_ + 1] == '\n')) {
      ++pos_;
    } else {
      break;
    }
  }
  if (pos_ >= n) return false;
  record_line_ = line_;
  std::size_t r = pos_;
  while (true) {
    std::size_t q = r;
    while (q < n && (text_[q] == ' ' || text_[q] == '\t')) ++q;
    if (q < n && text_[q] == '"') {
      const int open_line = line_;
      const std::size_t start = q;
      std::size_t w = q;
      r = q + 1;
      while (true) {
        if (r >= n) {
          throw InputError(source_, fmt::format("line {}", open_line), "unterminated quoted field");
        }
        const char c = text_[r];
        if (c == '"') {
          if (r + 1 < n && text_[r + 1] == '"') {
            text_[w++] = '"';
            r += 2;
            continue;
          }
          ++r;
          break;
        }
        if (c == '\n') ++line_;
        text_[w++] = c;
        ++r;
      }
      fields.emplace_back(text_.data() + start, w - start);
      while (r < n && (text_[r] == ' ' || text_[r] == '\t')) ++r;
      if (r < n && text_[r] != ',' && text_[r] != '\n' && text_[r] != '\r') {
        throw InputError(source_, fmt::format("line {}", line_),
                         fmt::format("unexpected '{}' after a closing quote (write \"\" for a quote inside "
                                     "a quoted field)",
                                     text_[r]));
      }
    } else {
      const std::size_t start = r;
      while (r < n && text_[r] != ',' && text_[r] != '\n' && text_[r] != '\r') ++r;
      fields.emplace_back(text_.data() + start, r - start);
    }
    if (r < n && text_[r] == ',') {
      ++r;
      continue;
    }
    if (r < n && text_[r] == '\r') ++r;
    if (r < n && text_[r] == '\n') {
      ++r;
      ++line_;
    }
    pos_ = r;
    return true;
  }
}

}  // namespace witness::detail
