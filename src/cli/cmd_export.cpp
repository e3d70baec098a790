#include <cstdio>

#include "cli/commands.h"
#include "cli/parse.h"
#include "report/export.h"
#include "report/run_data.h"
#include "util/fs.h"

namespace kopt::cli {

int cmd_export(const Args& args) {
  CLI::App app{"kopt export: a run's measurements as Kernel Tuner T4 results (JSON) or as CSV", "kopt export"};
  std::string run_dir, format, out = "-";
  app.add_option("RUN_DIR", run_dir, "a run directory (kopt_runs/run_YYYYmmdd_HHMMSS)")->required();
  app.add_option("--format", format, "t4 (Kernel Tuner's T4 results schema 1.0.0) or csv (one row per measured candidate)")->required();
  app.add_option("--out", out, "write to FILE; - (the default) prints to stdout");
  if (auto rc = parse_args(app, args); rc) return *rc;
  auto fail = [](const Error& e) {
    std::fprintf(stderr, "kopt export: %s\n", e.message.c_str());
    return to_int(e.code);
  };
  if (format != "t4" && format != "csv") return fail(input_error("--format must be t4 or csv, not '" + format + "'"));
  auto run = report::load_run(run_dir, {.samples = format == "t4"});
  if (!run) return fail(run.error());
  std::string text = format == "t4" ? report::t4_results(*run).dump(2) + "\n" : report::candidates_csv(*run);
  if (out == "-") {
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  if (auto st = util::write_file_atomic(out, text); !st) return fail(st.error());
  return 0;
}

}  // namespace kopt::cli
