// Whether this build runs under AddressSanitizer (CI's sanitized pass), for code that must act
// differently there: GCC says so with __SANITIZE_ADDRESS__, clang with __has_feature.
//
//   if (witness::kAddressSanitizer) {
//     // no fork while other threads allocate: ASan's allocator has no fork handler
//   }
#pragma once

namespace witness {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}  // namespace witness
