#include "report/html_report.h"

#include <fmt/format.h>

#include <cctype>
#include <chrono>
#include <ctime>
#include <fstream>

#include "core/error.h"
#include "core/file.h"
#include "report/rows.h"

namespace witness {

std::string witness_version() { return "witness " WITNESS_VERSION; }

nlohmann::json report_envelope(const std::string& kind, const std::string& command, const std::string& text,
                               nlohmann::json result, nlohmann::json schema, nlohmann::json pairs) {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char created[32];
  std::strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return {{"witness_report", 1},      {"kind", kind}, {"command", command},          {"version", witness_version()},
          {"created", created},       {"text", text}, {"result", std::move(result)}, {"schema", std::move(schema)},
          {"pairs", std::move(pairs)}};
}

nlohmann::json parse_saved_run(const std::string& text, const std::string& where) {
  constexpr int kMaxDepth = 64;  // a saved run nests a handful of levels
  try {
    return nlohmann::json::parse(text, [&](int depth, nlohmann::json::parse_event_t, const nlohmann::json&) {
      if (depth > kMaxDepth) throw InputError(where, "", fmt::format("JSON nested more than {} deep", kMaxDepth));
      return true;
    });
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for "1e400"
    throw InputError(where, "", std::string("not JSON: ") + e.what());
  }
}

std::string report_kind(const nlohmann::json& doc) {
  if (!doc.is_object()) return "";
  if (doc.contains("verdict") && doc.contains("engine")) return "fair";
  if (doc.contains("method") && doc.contains("generated")) return "test";
  if (doc.contains("bias_percent")) return "bias";
  if (doc.contains("queries")) return "query";
  return "";
}

namespace {

// Text inside <title> and the like.
std::string escape_html(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// A script's text made safe to inline: "</script" would end the element and "<!--" would change
// how the parser reads it. "<\/" reads as "</" inside JS strings and regular expressions.
std::string inline_script(std::string_view js) {
  std::string out;
  out.reserve(js.size() + 64);
  for (std::size_t i = 0; i < js.size(); ++i) {
    if (js[i] == '<' && i + 1 < js.size() && (js[i + 1] == '/' || js[i + 1] == '!')) {
      const std::string_view rest = js.substr(i + 1, 7);
      std::string lower(rest);
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower.rfind("/script", 0) == 0 || lower.rfind("!--", 0) == 0) {
        out += "<\\";
        continue;
      }
    }
    out += js[i];
  }
  return out;
}

}  // namespace

std::string html_report(const nlohmann::json& run, const std::string& where) {
  nlohmann::json envelope = run;
  if (!run.is_object() || !run.contains("witness_report")) {
    const std::string kind = report_kind(run);
    if (kind.empty() || kind == "query")
      throw InputError(where, "", "not a report or a --json document of witness fair, test or bias");
    envelope = {{"witness_report", 1}, {"kind", kind}, {"result", run}};
  }
  const nlohmann::json& result = envelope.value("result", nlohmann::json::object());
  // value("kind", "") would throw nlohmann's type_error for a kind that is not a string.
  const auto kind_it = envelope.find("kind");
  const std::string kind = kind_it != envelope.end() && kind_it->is_string() ? kind_it->get<std::string>() : "";
  if (kind != "fair" && kind != "test" && kind != "bias")
    throw InputError(where, "", fmt::format("unknown report kind '{}' (fair, test or bias)", kind));
  std::string model =
      result.contains("model") && result["model"].is_string() ? result["model"].get<std::string>() : std::string();
  // '<' only occurs inside JSON strings, where \u003c reads the same: no "</script>" can end the block.
  std::string data = json_text(envelope);
  std::string safe;
  safe.reserve(data.size());
  for (char c : data) {
    if (c == '<') {
      safe += "\\u003c";
    } else {
      safe += c;
    }
  }
  std::string html;
  html.reserve(safe.size() + web_asset("report.js").size() + 4096);
  html += "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  html += "<title>" + escape_html(fmt::format("witness {} report{}", kind, model.empty() ? "" : ": " + model)) +
          "</title>\n<style>\n";
  html += web_asset("report.css");
  html += "\n</style></head>\n<body><div id=\"report\"></div>\n<script type=\"application/json\" id=\"witness-run\">\n";
  html += safe;
  html += "\n</script>\n<script>\n";
  html += inline_script(web_asset("report.js"));
  html += "\n</script>\n</body></html>\n";
  return html;
}

void write_html_report(const std::string& path, const nlohmann::json& run, const std::string& where) {
  write_file(path, html_report(run, where.empty() ? path : where));
}

}  // namespace witness
