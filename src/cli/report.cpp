// witness report RUN.json -o OUT.html: the self-contained HTML report of a saved run (the
// --report-json envelope, or a plain --json document of fair, test or bias).
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/cli.h"
#include "core/error.h"
#include "report/html_report.h"

namespace witness::cli {
namespace {

struct ReportArgs {
  std::string run;
  std::string out;
};

void run_report(const ReportArgs& args) {
  std::ifstream in(args.run, std::ios::binary);
  if (!in) throw InputError(args.run, "", "cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(args.run, "", std::string("not JSON: ") + e.what());
  }
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
