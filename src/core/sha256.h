// SHA-256 (FIPS 180-4), for content hashes of what a saved state's answer depends on: the model,
// the schema with its rules, a split's layout.
//
//   witness::Sha256 h;
//   h.add("abc");
//   h.add_number(3.5);                       // a double's 8 bytes, little-endian
//   std::string hex = h.hex();               // 64 lowercase hex digits; the hash is then finished
//   std::string same = witness::sha256_hex("abc");  // ba7816bf...
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace witness {

class Sha256 {
 public:
  Sha256();
  void add(const void* data, std::size_t n);
  void add(std::string_view text);
  // A string with its length first, so that ("ab", "c") and ("a", "bc") hash apart.
  void add_field(std::string_view text);
  void add_number(double v);
  void add_integer(std::int64_t v);
  [[nodiscard]] std::string hex();

 private:
  void block(const unsigned char* p);
  std::array<std::uint32_t, 8> state_;
  std::array<unsigned char, 64> buffer_{};
  std::size_t used_ = 0;
  std::uint64_t bytes_ = 0;
  bool finished_ = false;
};

[[nodiscard]] std::string sha256_hex(std::string_view data);

}  // namespace witness
