// witness report RUN.json -o OUT.html: the self-contained HTML report of a saved run (the
// --report-json envelope, or a plain --json document of fair, test or bias).
#include <cstdint>
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "core/error.h"
#include "core/file.h"
#include "report/html_report.h"

namespace witness::cli {
namespace {

struct ReportArgs {
  std::string run;
  std::string out;
};

constexpr std::uintmax_t kMaxRunBytes = std::uintmax_t{256} << 20;  // a saved run is a few MB

void run_report(const ReportArgs& args) {
  const nlohmann::json doc = parse_saved_run(read_file(args.run, kMaxRunBytes), args.run);
  write_html_report(args.out, doc, args.run);
  std::cout << "report written to " << args.out << '\n';
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Write the self-contained HTML report of a saved run (--report-json, or --json of fair, test, bias)");
  cmd->add_option("run", args->run, "the run's JSON")->required();
  cmd->add_option("-o,--out", args->out, "the HTML file to write")->required();
  cmd->callback([args] { run_report(*args); });
}

}  // namespace witness::cli
