#include <cstdio>

#include "cli/commands.h"
#include "cli/fail.h"
#include "cli/output_options.h"
#include "cli/parse.h"
#include "report/export.h"
#include "report/run_data.h"
#include "util/output.h"

namespace kopt::cli {

int cmd_export(const Args& args) {
  CLI::App app{"kopt export: a run's measurements as Kernel Tuner T4 results (JSON) or as CSV", "kopt export"};
  std::string run_dir, format, out = "-", json, csv;
  app.add_option("RUN_DIR", run_dir, "a run directory (kopt_runs/run_YYYYmmdd_HHMMSS)")->required();
  add_json_option(app, json, "Kernel Tuner's T4 results (schema 1.0.0)");
  add_csv_option(app, csv, "one row per measured candidate");
  app.add_option("--format", format, "t4 or csv: the same as --json / --csv, written to --out");
  app.add_option("--out", out, "with --format: write to FILE; - (the default) prints to stdout")->type_name("FILE|-");
  app.footer("Examples: kopt export RUN --json results_t4.json;  kopt export RUN --csv -");
  if (auto rc = parse_args(app, args); rc) return *rc;
  auto fail = [](const Error& e) { return report_failure("export", e); };
  if (!format.empty() && format != "t4" && format != "csv")
    return fail(input_error("--format must be t4 or csv, not '" + format + "'"));
  if (format == "t4" && json.empty()) json = out;
  if (format == "csv" && csv.empty()) csv = out;
  if (json.empty() && csv.empty()) return fail(input_error("say what to write: --json FILE|- (T4 results) or --csv FILE|-"));
  if (util::is_stdout_path(json) && util::is_stdout_path(csv))
    return fail(input_error("--json - and --csv - cannot both print to stdout; give one of them a file"));
  auto run = report::load_run(run_dir, {.samples = !json.empty()});
  if (!run) return fail(run.error());
  if (!json.empty())
    if (auto st = util::write_json_document(json, report::t4_results(*run)); !st) return fail(st.error());
  if (!csv.empty())
    if (auto st = util::write_text_output(csv, report::candidates_csv(*run)); !st) return fail(st.error());
  return 0;
}

}  // namespace kopt::cli
