// Whether this test binary runs under AddressSanitizer (CI's sanitized pass): the heaviest loops
// then check fewer cases, several times faster than in a Release build, so that the pass stays
// short; a Release run (scripts/test --no-asan) checks them all.
//
//   for (int seed = 0; seed < witness::test::sized(24, 8); ++seed) check(seed);
//   for (const char* profile : witness::test::sampled(kProfiles, 4)) check(profile);
#pragma once

#include <cstddef>
#include <iterator>
#include <type_traits>
#include <vector>

#include "core/sanitizer.h"

namespace witness::test {

inline constexpr bool kSanitized = kAddressSanitizer;

// `full` in a Release build, `sanitized` under the sanitizers: the size of a heavy loop.
template <class T>
constexpr T sized(T full, T sanitized) {
  return kSanitized ? sanitized : full;
}

// Every item in a Release build; under the sanitizers every `step`-th, from the first.
template <class Range>
auto sampled(const Range& items, std::size_t step) {
  std::vector<std::decay_t<decltype(*std::begin(items))>> out;
  std::size_t k = 0;
  for (const auto& item : items) {
    if (k++ % sized<std::size_t>(1, step) == 0) out.push_back(item);
  }
  return out;
}

}  // namespace witness::test
