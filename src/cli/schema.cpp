#include "cli/cli.h"
namespace witness::cli {
void add_schema_command(CLI::App& /*app*/) {}
}  // namespace witness::cli
