// The HTML report: the run's JSON is embedded so that no string in it can end the script block,
// the renderer and its styles are inlined, and documents that are not fair/test/bias runs are
// refused naming their source.
#include "report/html_report.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "report/rows.h"

namespace witness {
namespace {

TEST(HtmlReport, EmbedsTheRunSafely) {
  const nlohmann::json doc = {{"verdict", "witness"},
                              {"engine", "auto"},
                              {"model", "</script><script>alert(1)</script>.h5"},
                              {"reason", "<!-- a comment -->"}};
  const std::string html = html_report(doc);
  const std::size_t data = html.find("<script type=\"application/json\" id=\"witness-run\">");
  ASSERT_NE(data, std::string::npos);
  const std::size_t end = html.find("</script>", data);
  ASSERT_NE(end, std::string::npos);
  const std::string block = html.substr(data, end - data);
  // The JSON block ends only where the report ends it, and reads back as the document.
  const std::string json = block.substr(block.find('>') + 1);
  const nlohmann::json back = nlohmann::json::parse(json);
  EXPECT_EQ(back["result"], doc);
  EXPECT_EQ(back["kind"], "fair");
  EXPECT_EQ(json.find('<'), std::string::npos);
  // The title shows the model name escaped.
  EXPECT_NE(html.find("<title>witness fair report: &lt;/script&gt;"), std::string::npos);
}

TEST(HtmlReport, InlinesTheRendererWithoutEndingItsScript) {
  const std::string_view js = web_asset("report.js");
  ASSERT_GT(js.size(), 1000U);
  EXPECT_FALSE(web_asset("index.html").empty());
  EXPECT_FALSE(web_asset("app.js").empty());
  EXPECT_TRUE(web_asset("secret.txt").empty());
  const std::string html = html_report({{"method", "adf"}, {"generated", 10}});
  // Exactly the two script elements the report opens: its data and its renderer.
  std::size_t closes = 0;
  for (std::size_t at = html.find("</script"); at != std::string::npos; at = html.find("</script", at + 1)) ++closes;
  EXPECT_EQ(closes, 2U);
  EXPECT_EQ(html.find("<script src"), std::string::npos);
}

TEST(HtmlReport, KnowsEachKindOfRun) {
  EXPECT_EQ(report_kind({{"verdict", "verified"}, {"engine", "dual"}}), "fair");
  EXPECT_EQ(report_kind({{"method", "adf"}, {"generated", 1}}), "test");
  EXPECT_EQ(report_kind({{"bias_percent", 1.0}}), "bias");
  EXPECT_EQ(report_kind({{"queries", nlohmann::json::array()}}), "query");
  EXPECT_EQ(report_kind(nlohmann::json::array()), "");
  try {
    (void)html_report({{"queries", nlohmann::json::array()}}, "run.json");
    FAIL() << "a query run has no report";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("run.json"), std::string::npos);
  }
  EXPECT_THROW((void)html_report({{"witness_report", 1}, {"kind", "poem"}, {"result", {}}}), InputError);
}

TEST(HtmlReport, EnvelopeCarriesTheRun) {
  const nlohmann::json env = report_envelope("bias", "witness bias m.onnx", "Bias% of m: 1%\n", {{"bias_percent", 1.0}},
                                             nlohmann::json::object(), nlohmann::json::array());
  EXPECT_EQ(env["witness_report"], 1);
  EXPECT_EQ(env["kind"], "bias");
  EXPECT_EQ(env["version"], witness_version());
  EXPECT_EQ(env["created"].get<std::string>().size(), 20U);  // 2026-11-25T02:00:00Z
  EXPECT_EQ(percent(0.0123), "1.23%");
  EXPECT_EQ(percent(0.9999999), "99.99999%");
}

}  // namespace
}  // namespace witness
