# Generates report_assets.cpp: Chart.js (the Debian package libjs-chart.js) and the HTML report's own page files
# (src/report/page/) as byte arrays, so kopt writes a self-contained summary.html wherever it runs, with nothing
# installed there. Run by the build (CMakeLists.txt): cmake -DCHART_JS=... -DPAGE_DIR=... -DOUT=... -P this file.
foreach(var CHART_JS PAGE_DIR OUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "embed_report_assets.cmake: ${var} is not set")
  endif()
endforeach()

include("${CMAKE_CURRENT_LIST_DIR}/embed_bytes.cmake")
set(arrays "")
set(members "")
macro(embed name path)
  kopt_embed_bytes(${name} "${path}")
  string(APPEND members "      std::string_view(reinterpret_cast<const char*>(k_${name}), ${${name}_size}),\n")
endmacro()

file(STRINGS "${CHART_JS}" banner LIMIT_COUNT 5)
string(REGEX MATCH "Chart\\.js v([0-9][0-9.]*)" _ "${banner}")
set(chart_version "${CMAKE_MATCH_1}")
if(chart_version STREQUAL "")
  message(FATAL_ERROR "${CHART_JS} does not start with a 'Chart.js vX.Y.Z' banner")
endif()

embed(chart_js "${CHART_JS}")
embed(page_html "${PAGE_DIR}/report.html")
embed(page_js "${PAGE_DIR}/report.js")
embed(page_css "${PAGE_DIR}/report.css")

file(WRITE "${OUT}.tmp"
"// GENERATED at build time by cmake/embed_report_assets.cmake: do not edit.\n"
"// From ${CHART_JS} (Chart.js ${chart_version}, MIT) and src/report/page/.\n"
"#include \"report/assets.h\"\n\n"
"namespace kopt::report {\n\nnamespace {\n${arrays}}  // namespace\n\n"
"const PageAssets& page_assets() {\n"
"  static const PageAssets assets = {\n"
"      \"${chart_version}\",\n"
"${members}"
"  };\n"
"  return assets;\n"
"}\n\n"
"}  // namespace kopt::report\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
