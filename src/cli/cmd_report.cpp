#include <cstdio>

#include "cli/commands.h"
#include "cli/parse.h"
#include "report/summary.h"

namespace kopt::cli {

int cmd_report(const Args& args) {
  CLI::App app{"kopt report: re-render a run directory's summary.md from its summary.json", "kopt report"};
  std::string run_dir;
  bool quiet = false;
  app.add_option("RUN_DIR", run_dir, "a run directory (kopt_runs/run_YYYYmmdd_HHMMSS)")->required();
  app.add_flag("--quiet", quiet, "write summary.md without printing it");
  if (auto rc = parse_args(app, args); rc) return *rc;
  auto md = report::rerender(run_dir);
  if (!md) {
    std::fprintf(stderr, "kopt report: %s\n", md.error().message.c_str());
    return to_int(md.error().code);
  }
  if (!quiet) std::fputs(md->c_str(), stdout);
  return 0;
}

}  // namespace kopt::cli
