// The named values of an enum, declared once: parsing (with one error wording), printing, and the
// list of allowed values that CLI help and error messages show.
//
//   enum class Color : std::uint8_t { Red, Green };
//   constexpr witness::Choices<Color, 2> kColors{{{{Color::Red, "red"}, {Color::Green, "green"}}}, "color"};
//   const Color c = kColors.parse("green", "--color");   // InputError "--color: unknown color 'x' (known: ...)"
//   const std::string name = kColors.name(c);              // "green"
//   const std::string help = kColors.list();               // "red, green"
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"

namespace witness {

template <typename E, std::size_t N>
struct Choices {
  std::array<std::pair<E, const char*>, N> values;
  const char* noun;  // what a value is called in messages ("rule", "method", ...)

  // `flag` (e.g. "--split") prefixes the error; empty: no prefix.
  [[nodiscard]] E parse(std::string_view text, std::string_view flag = {}) const {
    for (const auto& [value, name] : values)
      if (text == name) return value;
    std::string message = flag.empty() ? std::string() : std::string(flag) + ": ";
    message += std::string("unknown ") + noun + " '" + std::string(text) + "' (known: " + list() + ")";
    throw InputError(message);
  }
  [[nodiscard]] const char* name(E value) const {
    for (const auto& [v, name] : values)
      if (v == value) return name;
    return "?";
  }
  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [value, name] : values) out.emplace_back(name);
    return out;
  }
  [[nodiscard]] std::string list() const {
    std::string out;
    for (const auto& [value, name] : values) {
      if (!out.empty()) out += ", ";
      out += name;
    }
    return out;
  }
};

}  // namespace witness
