#include "report/html.h"

#include <cctype>

#include "report/run_data.h"
#include "util/fs.h"

namespace kopt::report {

namespace {

// Inline <script> text must not contain "</script" (it would end the element): in JavaScript, written
// "<\/script", which strings and regular expressions read back the same.
std::string script_safe(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    out += s[i];
    if (s[i] == '<' && i + 7 < s.size() && s[i + 1] == '/') {
      std::string word(s.substr(i + 2, 6));
      for (auto& ch : word) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (word == "script") out += '\\';
    }
  }
  return out;
}

// JSON for a <script type="application/json"> element: every '<' (only ever inside a string) as \u003c,
// so neither "</script" nor "<!--" can appear.
std::string json_safe(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

std::string html_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

void fill(std::string& page, std::string_view marker, const std::string& with) {
  auto pos = page.find(marker);
  if (pos != std::string::npos) page.replace(pos, marker.size(), with);
}

}  // namespace

std::string render_html(const util::Json& data, const PageAssets& a) {
  std::string page(a.page_html);
  std::string kernel = data.contains("run") ? data["run"].value("kernel", std::string()) : std::string();
  kernel = kernel.substr(kernel.find_last_of('/') == std::string::npos ? 0 : kernel.find_last_of('/') + 1);
  std::string json = data.dump(-1, ' ', false, util::Json::error_handler_t::replace);
  // Filled in page order, each marker once: a marker's text can never come from the data.
  fill(page, "<!--KOPT_TITLE-->", html_escape("kopt: " + (kernel.empty() ? std::string("run") : kernel)));
  fill(page, "<!--KOPT_STYLE-->", std::string(a.page_css));
  fill(page, "<!--KOPT_CHART_JS-->", script_safe(a.chart_js));
  auto data_at = page.find("<!--KOPT_DATA-->");
  auto js_at = page.find("<!--KOPT_PAGE_JS-->");
  if (data_at != std::string::npos && js_at != std::string::npos && data_at < js_at) {
    page.replace(js_at, std::string_view("<!--KOPT_PAGE_JS-->").size(), script_safe(a.page_js));
    page.replace(data_at, std::string_view("<!--KOPT_DATA-->").size(), json_safe(json));
  }
  return page;
}

Result<std::filesystem::path> write_html(const std::filesystem::path& run_dir) {
  KOPT_TRY_ASSIGN(util::Json data, load_run(run_dir));
  auto path = run_dir / "summary.html";
  KOPT_TRY(util::write_file_atomic(path, render_html(data)));
  return path;
}

}  // namespace kopt::report
