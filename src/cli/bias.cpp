#include "cli/cli.h"
namespace witness::cli {
void add_bias_command(CLI::App& /*app*/) {}
}  // namespace witness::cli
