#include <cstdio>

#include "cli/commands.h"
#include "cli/fail.h"
#include "cli/output_options.h"
#include "cli/parse.h"
#include "report/compare.h"
#include "report/run_data.h"
#include "util/output.h"

namespace kopt::cli {

int cmd_compare(const Args& args) {
  CLI::App app{"kopt compare: two runs side by side (baselines, champions, configurations measured in both), "
               "each with its time ratio B/A and 95% CI, and whether they made the same decisions (docs/REPORT.md)",
               "kopt compare"};
  std::string run_a, run_b, json, csv;
  app.add_option("RUN_A", run_a, "the first run directory (A)")->required();
  app.add_option("RUN_B", run_b, "the second run directory (B)")->required();
  add_json_option(app, json, "the comparison");
  add_csv_option(app, csv, "the table (one row per compared pair)");
  if (auto rc = parse_args(app, args); rc) return *rc;
  auto fail = [](const Error& e) { return report_failure("compare", e); };
  auto a = report::load_run(run_a, {.samples = true});
  if (!a) return fail(a.error());
  auto b = report::load_run(run_b, {.samples = true});
  if (!b) return fail(b.error());
  if (util::is_stdout_path(json) && util::is_stdout_path(csv))
    return fail(input_error("--json - and --csv - cannot both print to stdout; give one of them a file"));
  util::Json cmp = report::compare_runs(*a, *b);
  if (auto st = util::write_text_output(csv, report::compare_csv(cmp)); !st) return fail(st.error());
  if (auto st = util::write_json_output(json, "compare", cmp); !st) return fail(st.error());
  std::fputs(report::format_compare(cmp).c_str(), util::report_stream(json, csv));
  return 0;
}

}  // namespace kopt::cli
