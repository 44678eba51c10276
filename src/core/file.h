// Whole-file reads with the error every loader wants:
//
//   #include "core/error.h"
//   try {
//     std::string text = witness::read_file("model.json");
//   } catch (const witness::InputError& e) {
//     std::cerr << e.what() << '\n';   // model.json: cannot open: No such file or directory
//   }
#pragma once

#include <string>

namespace witness {

// Reads a whole file; throws InputError naming it when it is missing, a directory or unreadable.
std::string read_file(const std::string& path);

}  // namespace witness
