#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "cli/fail.h"
#include "cli/output_options.h"
#include "cli/parse.h"
#include "doctor/doctor.h"
#include "util/output.h"

namespace kopt::cli {

int cmd_doctor(const Args& args) {
  CLI::App app{"kopt doctor: check the GPU, driver and tools kopt needs (the hardware gate)", "kopt doctor"};
  std::string json_path;
  bool no_counters = false;
  add_json_option(app, json_path, "the report (the env.json of a run directory)");
  app.add_flag("--no-counters", no_counters, "do not profile a probe kernel to test counter access");
  if (auto rc = parse_args(app, args); rc) return *rc;

  doctor::Options opts;
  opts.check_ncu_counters = !no_counters;
  auto report = doctor::run_doctor(opts);
  util::set_meta_info(doctor::meta_of(report));
  std::fputs(doctor::format_table(report).c_str(), util::report_stream(json_path));
  if (auto st = util::write_json_output(json_path, "doctor", doctor::to_json(report)); !st) {
    return report_failure("doctor", internal_error(st.error().message));
  }
  return report.passed() ? 0 : to_int(ExitCode::kGate);
}

}  // namespace kopt::cli
