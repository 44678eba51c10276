// The web front-end's built files (web/build.mjs writes them into the build folder), linked into
// the binary with the assembler's .incbin so that witness serve and the HTML report need no files
// beside the executable.
#include <string_view>

#include "report/html_report.h"

// Each asset is a hidden global byte range [NAME_begin, NAME_end).
#define WITNESS_INCBIN(sym, file)                                                                               \
  __asm__(".pushsection .rodata\n.balign 16\n.globl " #sym "_begin\n.hidden " #sym "_begin\n" #sym              \
          "_begin:\n.incbin \"" WITNESS_WEB_DIR "/" file "\"\n.globl " #sym "_end\n.hidden " #sym "_end\n" #sym \
          "_end:\n.byte 0\n.popsection\n")

WITNESS_INCBIN(witness_web_index_html, "index.html");
WITNESS_INCBIN(witness_web_app_js, "app.js");
WITNESS_INCBIN(witness_web_style_css, "style.css");
WITNESS_INCBIN(witness_web_report_js, "report.js");
WITNESS_INCBIN(witness_web_report_css, "report.css");

extern "C" {
extern const char witness_web_index_html_begin[], witness_web_index_html_end[];
extern const char witness_web_app_js_begin[], witness_web_app_js_end[];
extern const char witness_web_style_css_begin[], witness_web_style_css_end[];
extern const char witness_web_report_js_begin[], witness_web_report_js_end[];
extern const char witness_web_report_css_begin[], witness_web_report_css_end[];
}

namespace witness {

std::string_view web_asset(std::string_view name) {
  auto range = [](const char* begin, const char* end) {
    return std::string_view(begin, static_cast<std::size_t>(end - begin));
  };
  if (name == "index.html") return range(witness_web_index_html_begin, witness_web_index_html_end);
  if (name == "app.js") return range(witness_web_app_js_begin, witness_web_app_js_end);
  if (name == "style.css") return range(witness_web_style_css_begin, witness_web_style_css_end);
  if (name == "report.js") return range(witness_web_report_js_begin, witness_web_report_js_end);
  if (name == "report.css") return range(witness_web_report_css_begin, witness_web_report_css_end);
  return {};
}

}  // namespace witness
