// Whether this test binary runs under AddressSanitizer (CI's sanitized pass): the heaviest loops
// then check fewer cases, several times faster than in a Release build, so that the pass stays
// short; a Release run (scripts/test --no-asan) checks them all.
//
//   for (int seed = 0; seed < witness::test::sized(24, 8); ++seed) check(seed);
#pragma once

#include "core/sanitizer.h"

namespace witness::test {

inline constexpr bool kSanitized = kAddressSanitizer;

// `full` in a Release build, `sanitized` under the sanitizers: the size of a heavy loop.
template <class T>
constexpr T sized(T full, T sanitized) {
  return kSanitized ? sanitized : full;
}

}  // namespace witness::test
