#include "core/error.h"

#include <gtest/gtest.h>

#include <string>

namespace witness {
namespace {

TEST(InputError, EchoedTextIsShortenedAndPrintable) {
  const std::string cell(200'000'000, 'x');
  const InputError huge("data.csv", "row 1 (line 2), column 'age'", "expected a number, got '" + cell + "'");
  const std::string m = huge.what();
  EXPECT_LT(m.size(), 500U);
  EXPECT_NE(m.find("data.csv: row 1 (line 2), column 'age': expected a number, got 'xxx"), std::string::npos) << m;
  EXPECT_NE(m.find("...(199999802 more characters)"), std::string::npos) << m;  // the cell and its quote, less 200
  const InputError nul("q.toml", "", std::string("name 'a\0b'", 10) + " is unknown");
  EXPECT_STREQ(nul.what(), "q.toml: name 'a\\x00b' is unknown");
  std::string words;
  for (int i = 0; i < 2000; ++i) words += "word ";
  EXPECT_LT(std::string(InputError(words).what()).size(), 4100U);
  EXPECT_STREQ(InputError("two\nlines\tkept").what(), "two\nlines\tkept");
}

}  // namespace
}  // namespace witness
