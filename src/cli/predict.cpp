#include "cli/cli.h"
namespace witness::cli {
void add_predict_command(CLI::App& /*app*/) {}
}  // namespace witness::cli
