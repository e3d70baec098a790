#include "report/html.h"

#include <gtest/gtest.h>

#include "report/run_data.h"
#include "testing/test_support.h"
#include "util/fs.h"

namespace kopt::report {
namespace {

namespace fs = std::filesystem;
using util::Json;

TEST(Html, TheAssetsAreEmbedded) {
  const auto& a = page_assets();
  EXPECT_FALSE(a.chart_js_version.empty());
  EXPECT_NE(a.chart_js.find("Chart.js v" + std::string(a.chart_js_version)), std::string::npos);
  EXPECT_GT(a.chart_js.size(), 100000u);
  for (const char* marker : {"<!--KOPT_TITLE-->", "<!--KOPT_STYLE-->", "<!--KOPT_CHART_JS-->", "<!--KOPT_DATA-->", "<!--KOPT_PAGE_JS-->"})
    EXPECT_NE(a.page_html.find(marker), std::string::npos) << marker;
  EXPECT_NE(a.page_js.find("kopt-data"), std::string::npos);
}

TEST(Html, ThePageIsSelfContainedAndItsDataCannotEndTheScript) {
  Json data = {{"schema", kReportDataSchema},
               {"run", {{"kernel", "/x/<b>k.cu"}}},
               {"notes", Json::array({"</script><script>alert(1)</script>", "<!-- x", std::string("bad \xff utf-8")})}};
  std::string page = render_html(data);
  for (const char* marker : {"<!--KOPT_TITLE-->", "<!--KOPT_STYLE-->", "<!--KOPT_CHART_JS-->", "<!--KOPT_DATA-->", "<!--KOPT_PAGE_JS-->"})
    EXPECT_EQ(page.find(marker), std::string::npos) << marker;
  // Nothing to fetch: no external script, stylesheet, image or font.
  for (const char* ref : {"<script src", "<link", "<img", "url(", "@import"}) EXPECT_EQ(page.find(ref), std::string::npos) << ref;
  // The data: one JSON document in its own element, every '<' escaped, so it holds exactly what was given.
  auto open = page.find("<script type=\"application/json\" id=\"kopt-data\">");
  ASSERT_NE(open, std::string::npos);
  auto body = open + std::string("<script type=\"application/json\" id=\"kopt-data\">").size();
  auto close = page.find("</script>", body);
  Json back = Json::parse(page.substr(body, close - body));
  EXPECT_EQ(back["notes"][0], "</script><script>alert(1)</script>");
  EXPECT_EQ(back["notes"][1], "<!-- x");
  EXPECT_EQ(back["notes"][2], "bad \xef\xbf\xbd utf-8");  // replaced, not fatal
  EXPECT_NE(page.find("<title>kopt: &lt;b&gt;k.cu</title>"), std::string::npos);
  // Exactly the page's four </script> (Chart.js, data, page script) and no other.
  size_t scripts = 0;
  for (auto p = page.find("</script"); p != std::string::npos; p = page.find("</script", p + 1)) ++scripts;
  EXPECT_EQ(scripts, 3u);
}

TEST(Html, WritesSummaryHtmlIntoTheRunDirectory) {
  fs::path copy = fs::path(::testing::TempDir()) / "kopt_report_html_run";
  fs::remove_all(copy);
  fs::copy(fs::path(testing_support::test_data_dir()) / "report" / "run_sgemm_h200", copy, fs::copy_options::recursive);
  auto path = write_html(copy);
  ASSERT_TRUE(path) << path.error().message;
  EXPECT_EQ(*path, copy / "summary.html");
  auto text = util::read_file(*path);
  ASSERT_TRUE(text);
  EXPECT_NE(text->find("\"champion_id\":\"i2c1\""), std::string::npos);
  EXPECT_LT(text->size(), 600u * 1024);  // Chart.js (~200 KB), the page and this run's data
  auto bad = write_html(copy / "nope");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ExitCode::kInput);
}

}  // namespace
}  // namespace kopt::report
