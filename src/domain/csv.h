// Internal to the domain layer (use dataset.h and infer.h instead): a small RFC 4180 reader and
// the text helpers that schema, dataset and inference share.
//
//   witness::detail::CsvReader rd = witness::detail::CsvReader::open("data.csv");
//   std::vector<std::string_view> fields;
//   double v = 0;
//   while (rd.next(fields)) {
//     if (!witness::detail::parse_number(witness::detail::trim(fields[0]), v)) { /* bad number at rd.line() */ }
//   }
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace witness::detail {

// Strips ASCII spaces and tabs: raw UCI files write "a, b".
[[nodiscard]] std::string_view trim(std::string_view s);

// Strict number: the whole text (an optional '+' first) is one finite decimal number.
[[nodiscard]] bool parse_number(std::string_view s, double& out);

// Comma-separated records with RFC 4180 quoting ("a ""b""" -> a "b", newlines allowed inside
// quotes), LF or CRLF line ends, a UTF-8 byte order mark and blank lines skipped.
class CsvReader {
 public:
  CsvReader(std::string text, std::string source);
  [[nodiscard]] static CsvReader open(const std::string& path);

  // Reads the next record; false at the end of the text. The views point into the reader's
  // buffer (quotes are undone in place) and stay valid while the reader lives.
  bool next(std::vector<std::string_view>& fields);
  [[nodiscard]] int line() const { return record_line_; }  // 1-based line where the record began
  [[nodiscard]] const std::string& source() const { return source_; }
  [[nodiscard]] std::size_t text_size() const { return text_.size(); }

 private:
  std::string text_;
  std::string source_;
  std::size_t pos_ = 0;
  int line_ = 1;
  int record_line_ = 0;
};

}  // namespace witness::detail
