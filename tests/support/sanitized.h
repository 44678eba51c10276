// Whether this test binary runs under AddressSanitizer (CI's sanitized pass): the heaviest loops
// then check fewer cases, several times faster than in a Release build, so that the pass stays
// short; a Release run (scripts/test --no-asan) checks them all.
//
//   for (int seed = 0; seed < (witness::test::kSanitized ? 8 : 24); ++seed) check(seed);
#pragma once

#include "core/sanitizer.h"

namespace witness::test {

inline constexpr bool kSanitized = kAddressSanitizer;

}  // namespace witness::test
