// A guard run on TOML text before toml++ parses it: toml++ descends recursively into dotted keys,
// tables and arrays, so a 40,000-segment key or 40,000 nested brackets overflow the stack (a crash
// of the CLI, or of `witness serve`, which parses schemas and queries in its threads).
//
//   std::string text = "a.b.c = 1\n";
//   witness::check_toml_limits(text, "schema.toml");   // InputError naming the line when too deep
//   // ... then toml::parse(text, "schema.toml")
#pragma once

#include <string>
#include <string_view>

namespace witness {

constexpr int kTomlMaxKeySegments = 64;  // a.b.c...: segments of one dotted key
constexpr int kTomlMaxNesting = 64;      // arrays and inline tables inside one another

// Throws InputError("<source>: line N: ...") when a dotted key has more segments or values nest
// deeper than the limits above. Strings and comments are skipped; other syntax is left to toml++.
void check_toml_limits(std::string_view text, const std::string& source);

}  // namespace witness
