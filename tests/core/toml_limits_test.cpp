#include "core/toml_limits.h"

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"

namespace witness {
namespace {

std::string dotted(int parts) {
  std::string key = "a";
  for (int i = 1; i < parts; ++i) key += ".a";
  return key;
}

std::string refusal(const std::string& text) {
  try {
    check_toml_limits(text, "q.toml");
  } catch (const InputError& e) {
    EXPECT_EQ(e.exit_code(), 2);
    return e.what();
  }
  return "";
}

TEST(TomlLimits, OrdinaryFilesPass) {
  const std::string text =
      "# a schema\nname = \"adult\"\nlabel_classes = [\"<=50K\", \">50K\"]\n"
      "weights = [0.5, 1.25, 3.75, 1e-3, 2.5e+7]\n[boxes.narrow.age]\nmin = 1.5\n"
      "[[features]]\nname = \"a.b.c\"\nvalues = [[1, 2], [3, 4]]\npoint = { x = 1.5, y.z = 2.5 }\n"
      "text = '''\nmany.dots.in.a.string.are.not.keys\n'''\n" +
      dotted(kTomlMaxKeySegments) + " = 1\n";
  EXPECT_EQ(refusal(text), "");
  // Numbers in one long array are values, not keys.
  std::string many = "v = [";
  for (int i = 0; i < 10000; ++i) many += "0.5, ";
  EXPECT_EQ(refusal(many + "1.5]\n"), "");
}

TEST(TomlLimits, DeepKeysAndNestingAreRefusedWithTheirLine) {
  EXPECT_NE(refusal("x = 1\n" + dotted(40000) + " = 1\n").find("q.toml: line 2: a dotted key"), std::string::npos);
  EXPECT_NE(refusal("[" + dotted(100) + "]\n").find("line 1: a dotted key"), std::string::npos);
  EXPECT_NE(refusal("[[" + dotted(100) + "]]\n").find("a dotted key"), std::string::npos);
  EXPECT_NE(refusal("p = { " + dotted(100) + " = 1 }\n").find("a dotted key"), std::string::npos);
  EXPECT_NE(refusal("p = {x = 1, " + dotted(100) + " = 1 }\n").find("a dotted key"), std::string::npos);
  EXPECT_NE(refusal("v = " + std::string(40000, '[')).find("nested more than"), std::string::npos);
  EXPECT_NE(refusal("v = " + std::string(40000, '{')).find("nested more than"), std::string::npos);
}

}  // namespace
}  // namespace witness
