// JSON text read into a document with its nesting bounded (a hostile file can nest a million
// levels), every error an InputError naming the source:
//
//   nlohmann::json d = witness::parse_json_document(R"({"a": [1, 2]})", "state.json", 16);
//   try {
//     (void)witness::parse_json_document(std::string(100, '['), "deep.json", 16);
//   } catch (const witness::InputError& e) {
//     // deep.json: nested deeper than 16 levels
//   }
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/error.h"

namespace witness {

[[nodiscard]] nlohmann::json parse_json_document(std::string_view text, const std::string& source, int max_depth);

// One line of JSON (no newline inside); invalid UTF-8 in strings is replaced, never thrown on.
[[nodiscard]] std::string json_line(const nlohmann::json& doc);

}  // namespace witness
