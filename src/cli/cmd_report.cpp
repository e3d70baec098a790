#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "cli/fail.h"
#include "cli/parse.h"
#include "report/html.h"
#include "report/summary.h"

namespace kopt::cli {

int cmd_report(const Args& args) {
  CLI::App app{"kopt report: re-render a run directory's summary.md from its summary.json; --html writes summary.html",
               "kopt report"};
  std::string run_dir;
  bool quiet = false, html = false;
  app.add_option("RUN_DIR", run_dir, "a run directory (kopt_runs/run_YYYYmmdd_HHMMSS)")->required();
  app.add_flag("--html", html, "write RUN_DIR/summary.html: one self-contained page with the charts and tables (docs/REPORT.md)");
  app.add_flag("--quiet", quiet, "write the files without printing");
  if (auto rc = parse_args(app, args); rc) return *rc;
  if (html) {
    // An unfinished run has no summary.json yet: its page is still written, from state.json and the iterations.
    if (std::filesystem::exists(std::filesystem::path(run_dir) / "summary.json")) {
      if (auto md = report::rerender(run_dir); !md) {
        return report_failure("report", md.error());
      }
    }
    auto page = report::write_html(run_dir);
    if (!page) {
      return report_failure("report", page.error());
    }
    if (!quiet) std::printf("%s\n", page->c_str());
    return 0;
  }
  auto md = report::rerender(run_dir);
  if (!md) {
    return report_failure("report", md.error());
  }
  if (!quiet) std::fputs(md->c_str(), stdout);
  return 0;
}

}  // namespace kopt::cli
