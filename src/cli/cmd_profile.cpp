#include <fmt/format.h>
#include <chrono>

#include <cstdio>

#include "cli/commands.h"
#include "cli/fail.h"
#include "cli/kernel_options.h"
#include "cli/output_options.h"
#include "cli/parse.h"
#include "device/gpu_info.h"
#include "doctor/doctor.h"
#include "pipeline/prepare.h"
#include "pipeline/triton.h"
#include "profile/profiler.h"
#include "profile/query_metrics.h"
#include "profile/report.h"
#include "runner/launch.h"
#include "toolchain/tools.h"
#include "util/output.h"
#include "util/progress.h"

namespace kopt::cli {

int cmd_profile(const Args& args) {
  CLI::App app{"kopt profile: profile exactly one solve() call with Nsight Compute (adaptive sections)", "kopt profile"};
  pipeline::KernelJob job;
  KernelOptionValues v;
  const profile::ProfileResult profile_defaults;
  int top_n = profile_defaults.top_n;
  std::string cache_control = "all";
  app.footer("Only the kernels of one solve() call are profiled (a cuProfilerStart/Stop range; ncu "
             "--profile-from-start off). Clocks are never locked (--clock-control none).");
  add_kernel_options(app, job, v);
  app.add_option("--ncu-num", top_n, fmt::format("top metrics per axis (default {})", top_n));
  app.add_option("--cache-control", cache_control, "all (flush caches before each replay pass, default) | none");
  std::string json_path;
  bool quiet = false;
  app.add_flag("--quiet", quiet, "no progress output (the report is still printed)");
  add_json_option(app, json_path, "the profile (the analysis, its plan and the profiled call's correctness)");
  Dims dims;
  if (auto rc = parse_args_with_dims(app, args, dims, v.kernel); rc) return *rc;
  util::set_progress_quiet(quiet);
  auto fail = [](const Error& e) { return report_failure("profile", e); };
  if (auto st = finish_kernel_job(job, v, dims); !st) return fail(st.error());
  if (top_n < 1 || top_n > 50) return fail(input_error("--ncu-num must be between 1 and 50"));
  if (cache_control != "all" && cache_control != "none") return fail(input_error("--cache-control must be all or none"));
  if (auto st = check_contract_first("profile", job); !st) return fail(st.error());
  auto info = device::query_gpus();
  if (!info) return fail(gate_error("needs a GPU: " + info.error().message));
  const auto& gpu = info->gpus[0];
  util::set_meta_info(doctor::probe_meta(gpu.name, info->driver_version_text()));
  auto dir = pipeline::make_run_dir(v.out, "profile");
  if (!dir) return fail(dir.error());
  std::fprintf(stderr, "kopt profile %s (%s) on %s -> %s\n", job.kernel.c_str(), format_dims(dims).c_str(),
               gpu.name.c_str(), dir->c_str());
  auto say = [](const std::string& s) { std::fprintf(stderr, "  %s\n", s.c_str()); };
  util::SystemRunner sys;
  auto prep = pipeline::prepare(job, *dir, sys, false, say);
  if (!prep) return fail(prep.error());
  runner::RunRequest rr;
  pipeline::bind_kernel(rr, *prep);  // the library, or the Triton kernel.py and its configuration
  rr.golden_dir = prep->golden_dir;
  rr.result_json = *dir / "profile_run.json";
  rr.mode = runner::RunMode::kProfile;
  rr.tol = prep->tol;
  profile::ProfileRequest req;
  req.target_argv = runner::child_argv(rr);
  req.out_dir = *dir / "profile";
  req.name = "kernel";
  req.ncu_path = toolchain::find_ncu();
  req.chip = profile::chip_for_compute_capability(gpu.cc_major, gpu.cc_minor);
  req.cache_control = cache_control == "all" ? profile::CacheControl::kAll : profile::CacheControl::kNone;
  profile::add_known_ncu_outputs(req);
  profile::ProfilePlan plan;
  say("profiling (pass 1: speed of light, launch, occupancy; pass 2: what the binding axes need)...");
  auto t0 = std::chrono::steady_clock::now();
  auto r = [&] {
    util::Progress progress("  profiling with Nsight Compute");
    return profile::profile_call(req, plan, sys, top_n);
  }();
  double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r) return fail(r.error());
  // The child also checked correctness on the profiled call: a wrong kernel is profiled but reported.
  auto run = util::read_json(rr.result_json);
  std::string run_status = run ? run->value("status", std::string("?")) : "no result";
  std::FILE* text = util::report_stream(json_path);
  std::fputs(profile::format_summary(*r, top_n).c_str(), text);
  std::fprintf(text, "\nprofiled call: correctness %s; profiling took %.1f s; report %s\n", run_status.c_str(), wall_s,
               r->report_path.c_str());
  if (auto st = util::write_json_output(json_path, "profile",
                                        {{"profile", profile::to_json(*r)}, {"correctness", run_status}, {"run_dir", dir->string()}});
      !st)
    return fail(st.error());
  if (auto st = util::write_json_atomic(*dir / "plan.json", "profile_plan", profile::to_json(plan)); !st)
    std::fprintf(stderr, "kopt profile: warning: the run directory's plan.json was not written: %s\n", st.error().message.c_str());
  return runner::parse_status(run_status) == runner::RunStatus::kOk ? 0 : to_int(ExitCode::kValidation);
}

}  // namespace kopt::cli
