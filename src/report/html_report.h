// The self-contained HTML report: one file with the run's JSON, the renderer and Vega-Lite inlined,
// that opens from a file URL with no network. Also the workbench's static files (witness serve).
//
//   nlohmann::json doc = {{"verdict", "verified"}, {"engine", "auto"}, {"model", "AC1.h5"}};  // a --json document
//   nlohmann::json run = witness::report_envelope("fair", "witness fair AC1.h5 ...", "verified: ...", doc,
//                                                 nlohmann::json::object(), nlohmann::json::array());
//   witness::write_html_report("ac1.html", run);   // InputError naming the file if it cannot
//   std::string html = witness::html_report(doc);   // a plain --json document works too
//   std::string_view js = witness::web_asset("app.js");
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace witness {

// The report's JSON: kind ("fair", "test", "bias"), the command line, the version, the text
// output, the --json document, the schema and the pairs (docs/serve.md, "Report envelope").
[[nodiscard]] nlohmann::json report_envelope(const std::string& kind, const std::string& command,
                                             const std::string& text, nlohmann::json result, nlohmann::json schema,
                                             nlohmann::json pairs);
// A saved run's JSON text (witness report, read from `where`): InputError for text that is not
// JSON, for a number no double holds, and for nesting over 64 levels (refused while parsing: the
// report's writer walks the document recursively).
[[nodiscard]] nlohmann::json parse_saved_run(const std::string& text, const std::string& where);
// The kind of a --json document ("fair", "test", "bias", "query"), or "" if it is none of them.
[[nodiscard]] std::string report_kind(const nlohmann::json& doc);
// The HTML of an envelope, or of a plain --json document of fair, test or bias (InputError, naming
// `where`, for anything else).
[[nodiscard]] std::string html_report(const nlohmann::json& run, const std::string& where = "report");
// Writes html_report(run) to `path`; `where` names the run's source in errors (default: path).
void write_html_report(const std::string& path, const nlohmann::json& run, const std::string& where = "");
// The workbench's files built from web/ ("index.html", "app.js", "style.css", "report.js",
// "report.css"); empty for any other name.
[[nodiscard]] std::string_view web_asset(std::string_view name);
// "witness 0.1.0".
[[nodiscard]] std::string witness_version();

}  // namespace witness
