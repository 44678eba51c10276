#include "core/choice.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/error.h"

namespace witness {
namespace {

enum class Shape : std::uint8_t { Box, Ball, Cone };
constexpr Choices<Shape, 3> kShapes{{{{Shape::Box, "box"}, {Shape::Ball, "ball"}, {Shape::Cone, "cone"}}}, "shape"};

TEST(Choices, ParseNameAndListRoundTrip) {
  for (const auto& [value, name] : kShapes.values) {
    EXPECT_EQ(kShapes.parse(name), value);
    EXPECT_STREQ(kShapes.name(value), name);
  }
  EXPECT_EQ(kShapes.list(), "box, ball, cone");
}

TEST(Choices, UnknownValuesNameTheFlagAndTheKnownValues) {
  try {
    (void)kShapes.parse("Box", "--shape");  // case matters
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--shape: unknown shape 'Box' (known: box, ball, cone)");
  }
  EXPECT_THROW((void)kShapes.parse(""), InputError);
}

}  // namespace
}  // namespace witness
