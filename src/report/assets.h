#pragma once
// What summary.html is made of, embedded into kopt at build time (cmake/embed_report_assets.cmake): Chart.js
// from the Debian package libjs-chart.js, and the page's own template, script and style (src/report/page/).
#include <string_view>

namespace kopt::report {

struct PageAssets {
  std::string_view chart_js_version;  // "3.9.1"
  std::string_view chart_js;          // chart.min.js (UMD build: defines window.Chart)
  std::string_view page_html;         // the template, with the markers html.cpp fills
  std::string_view page_js;           // renders the charts and tables from the embedded data
  std::string_view page_css;
};

const PageAssets& page_assets();

}  // namespace kopt::report
