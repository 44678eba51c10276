#include "core/error.h"

namespace witness {
namespace {
std::string join_parts(const std::string& file, const std::string& where, const std::string& what) {
  std::string out;
  for (const std::string* part : {&file, &where, &what}) {
    if (part->empty()) continue;
    if (!out.empty()) out += ": ";
    out += *part;
  }
  return out;
}
}  // namespace

InputError::InputError(const std::string& file, const std::string& where, const std::string& what)
    : Error(join_parts(file, where, what)) {}

}  // namespace witness
