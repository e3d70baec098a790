#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>

#include "cli/commands.h"
#include "cli/fail.h"
#include "cli/kernel_options.h"
#include "cli/output_options.h"
#include "cli/parse.h"
#include "pipeline/placement.h"
#include "pipeline/prepare.h"
#include "pipeline/triton.h"
#include "runner/launch.h"
#include <algorithm>
#include "device/gpu_info.h"
#include "doctor/doctor.h"
#include "roofline/measure.h"
#include "roofline/svg.h"
#include "util/fs.h"
#include "util/json_io.h"
#include "util/output.h"
#include "util/progress.h"

namespace kopt::cli {

namespace {

int fail(const Error& e) { return report_failure("roofline", e); }

// `kopt roofline --ceilings-only`: measure (or read from the cache) the GPU's ceilings and print them.
int ceilings_only(int gpu_index, bool remeasure, bool quick, const std::string& json_path, const std::string& svg_path) {
  auto info = device::query_gpus();
  if (!info) return fail(info.error());
  if (gpu_index < 0 || gpu_index >= static_cast<int>(info->gpus.size()))
    return fail(input_error("--gpu " + std::to_string(gpu_index) + ": this machine has " +
                            std::to_string(info->gpus.size()) + " GPU(s)"));
  const auto& gpu = info->gpus[static_cast<size_t>(gpu_index)];
  util::set_meta_info(doctor::probe_meta(gpu.name, info->driver_version_text()));
  roofline::CeilingsOptions opts;
  opts.cuda_driver_fallback = info->driver_version_text();
  opts.quick = quick;
  opts.prebuilt_dir = roofline::default_prebuilt_probe_dir();
  if (!remeasure) std::fprintf(stderr, "kopt roofline: ceilings of %s (cached, or measured now: about a minute)\n",
                               gpu.name.c_str());
  auto c = roofline::get_ceilings(gpu, remeasure, opts);
  if (!c) return fail(c.error());
  std::FILE* text = util::report_stream(json_path, svg_path);
  std::fputs(roofline::format_text(*c).c_str(), text);
  std::fprintf(text, "  cache: %s\n", roofline::ceilings_cache_path(roofline::default_ceilings_cache_dir(), gpu.uuid).c_str());
  if (auto st = util::write_json_output(json_path, "ceilings", roofline::to_json(*c)); !st) return fail(st.error());
  if (auto st = util::write_text_output(svg_path, roofline::render_svg(*c, {})); !st) return fail(st.error());
  return 0;
}

// `kopt roofline KERNEL --ref ref.py --DIM=...`: ceilings (cached), time the kernel, place it, chart it.
int kernel_roofline(const Args& args) {
  CLI::App app{"kopt roofline: place a kernel on the measured roofline", "kopt roofline"};
  pipeline::KernelJob job;
  KernelOptionValues v;
  std::string json_path, svg_path;
  bool remeasure = false;
  double max_time_s = runner::RunRequest{}.max_time_s;
  add_kernel_options(app, job, v);
  app.add_flag("--remeasure", remeasure, "measure the ceilings again even when the cache is current");
  add_json_option(app, json_path, "the result");
  app.add_option("--svg", svg_path, "write the roofline chart as SVG to FILE, or to stdout with --svg - (default: in the run "
                 "directory)")->type_name("FILE|-");
  app.add_option("--measure-budget-s", max_time_s, fmt::format("seconds of timing per kernel (default {})", max_time_s));
  add_deprecated_alias(app, "--max-time-s", "--measure-budget-s", max_time_s);
  bool quiet = false;
  app.add_flag("--quiet", quiet, "no progress output (the report is still printed)");
  bool ceilings_only_flag = false, quick = false;
  int gpu_index = -1;
  app.add_flag("--ceilings-only", ceilings_only_flag, "no kernel: only measure (or read from the cache) and print the GPU's ceilings");
  app.add_flag("--quick", quick, "with --ceilings-only: small sizes, a smoke test (not cached)");
  app.add_option("--gpu", gpu_index, "with --ceilings-only: the GPU's index (default 0)");
  app.footer("Without a kernel: kopt roofline --ceilings-only [--remeasure] [--quick] [--gpu N] [--json FILE|-] [--svg FILE|-]");
  Dims dims;
  if (auto rc = parse_args_with_dims(app, args, dims, v.kernel); rc) return *rc;
  util::set_progress_quiet(quiet);
  if (quick || gpu_index >= 0)
    return fail(input_error("--quick and --gpu apply to --ceilings-only; a kernel is placed on GPU 0's roofline"));
  if (auto st = finish_kernel_job(job, v, dims); !st) return fail(st.error());
  if (auto st = check_contract_first("roofline", job); !st) return fail(st.error());
  auto info = device::query_gpus();
  if (!info) return fail(gate_error("needs a GPU: " + info.error().message));
  const auto& gpu = info->gpus[0];
  util::set_meta_info(doctor::probe_meta(gpu.name, info->driver_version_text()));
  auto dir = pipeline::make_run_dir(v.out, "roofline");
  if (!dir) return fail(dir.error());
  auto say = [](const std::string& s) { std::fprintf(stderr, "  %s\n", s.c_str()); };
  std::fprintf(stderr, "kopt roofline %s (%s) on %s -> %s\n", job.kernel.c_str(), format_dims(dims).c_str(), gpu.name.c_str(),
               dir->c_str());
  roofline::CeilingsOptions copts;
  copts.cuda_driver_fallback = info->driver_version_text();
  copts.prebuilt_dir = roofline::default_prebuilt_probe_dir();
  auto ceilings = roofline::get_ceilings(gpu, remeasure, copts);
  if (!ceilings) return fail(ceilings.error());
  util::SystemRunner sys;
  auto prep = pipeline::prepare(job, *dir, sys, false, say);
  if (!prep) return fail(prep.error());
  auto req = pipeline::timing_request(job, *prep, *dir / "result.json", max_time_s);
  auto out = [&] {
    util::Progress progress("  measuring the kernel");
    return runner::run_candidate(req, sys);
  }();
  if (!out.timing) {
    std::fprintf(stderr, "kopt roofline: the kernel is not correct, so it is not placed: %s: %s\n",
                 std::string(runner::status_name(out.status)).c_str(), out.message.c_str());
    return to_int(ExitCode::kValidation);
  }
  auto placed = pipeline::place(*ceilings, prep->manifest, prep->buffer_dtypes, *out.timing, {}, job.kernel.filename().string());
  if (!placed) return fail(placed.error());
  std::FILE* text = util::report_stream(json_path, svg_path);
  std::fputs(roofline::format_text(*placed).c_str(), text);
  if (prep->sizes_guessed) std::fputs("WARNING: buffer sizes were guessed (ref.py has no setup() or shapes)\n", text);
  std::vector<roofline::SvgPoint> points;
  if (auto p = roofline::svg_point(*placed)) points.push_back(*p);
  std::string svg = roofline::render_svg(*ceilings, points);
  if (svg_path.empty()) svg_path = (*dir / "roofline.svg").string();
  if (auto st = util::write_text_output(svg_path, svg); !st) return fail(st.error());
  util::Json j = {{"roofline", roofline::to_json(*placed)}, {"ceilings", roofline::to_json(*ceilings)},
                  {"timing", runner::to_json(*out.timing)}, {"sizes_guessed", prep->sizes_guessed}};
  if (auto st = util::write_json_atomic(*dir / "roofline.json", "roofline", j); !st)
    std::fprintf(stderr, "kopt roofline: warning: the run directory's roofline.json was not written: %s\n", st.error().message.c_str());
  if (auto st = util::write_json_output(json_path, "roofline", j); !st) return fail(st.error());
  if (!util::is_stdout_path(svg_path)) std::fprintf(text, "chart: %s\n", svg_path.c_str());
  return 0;
}

}  // namespace

int cmd_roofline(const Args& args) {
  bool ceilings_mode = std::find(args.begin(), args.end(), "--ceilings-only") != args.end();
  if (!ceilings_mode) return kernel_roofline(args);
  CLI::App app{"kopt roofline --ceilings-only: measure the device's ceilings", "kopt roofline"};
  std::string json_path, svg_path;
  bool ceilings = false, remeasure = false, quick = false;
  int gpu = 0;
  app.add_flag("--ceilings-only", ceilings, "only measure (or read from the cache) and print the GPU's ceilings");
  app.add_flag("--remeasure", remeasure, "measure the ceilings again even when the cache is current");
  app.add_flag("--quick", quick, "small sizes, a smoke test (not cached)");
  app.add_option("--gpu", gpu, "the GPU's index (default 0)");
  add_json_option(app, json_path, "the ceilings");
  app.add_option("--svg", svg_path, "write the roofline chart as SVG to FILE, or to stdout with --svg -")->type_name("FILE|-");
  if (auto rc = parse_args(app, args); rc) return *rc;
  return ceilings_only(gpu, remeasure, quick, json_path, svg_path);
}

}  // namespace kopt::cli
