#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "cli/kernel_options.h"
#include "cli/parse.h"
#include "pipeline/placement.h"
#include "pipeline/prepare.h"
#include "pipeline/triton.h"
#include "runner/launch.h"
#include <algorithm>
#include "device/gpu_info.h"
#include "roofline/measure.h"
#include "roofline/svg.h"
#include "util/fs.h"
#include "util/json_io.h"

namespace kopt::cli {

namespace {

int fail(const Error& e) {
  std::fprintf(stderr, "kopt roofline: %s\n", e.message.c_str());
  return to_int(e.code);
}

// `kopt roofline --ceilings-only`: measure (or read from the cache) the GPU's ceilings and print them.
int ceilings_only(int gpu_index, bool remeasure, bool quick, const std::string& json_path, const std::string& svg_path) {
  auto info = device::query_gpus();
  if (!info) return fail(info.error());
  if (gpu_index < 0 || gpu_index >= static_cast<int>(info->gpus.size()))
    return fail(input_error("--gpu " + std::to_string(gpu_index) + ": this machine has " +
                            std::to_string(info->gpus.size()) + " GPU(s)"));
  const auto& gpu = info->gpus[static_cast<size_t>(gpu_index)];
  util::set_meta_info({gpu.name, info->driver_version_text(), "", ""});
  roofline::CeilingsOptions opts;
  opts.cuda_driver_fallback = info->driver_version_text();
  opts.quick = quick;
  if (!remeasure) std::fprintf(stderr, "kopt roofline: ceilings of %s (cached, or measured now: about a minute)\n",
                               gpu.name.c_str());
  auto c = roofline::get_ceilings(gpu, remeasure, opts);
  if (!c) return fail(c.error());
  std::fputs(roofline::format_text(*c).c_str(), stdout);
  std::printf("  cache: %s\n", roofline::ceilings_cache_path(roofline::default_ceilings_cache_dir(), gpu.uuid).c_str());
  if (!json_path.empty()) {
    if (auto st = util::write_json_atomic(json_path, "ceilings", roofline::to_json(*c)); !st) return fail(st.error());
  }
  if (!svg_path.empty()) {
    if (auto st = util::write_file_atomic(svg_path, roofline::render_svg(*c, {})); !st) return fail(st.error());
  }
  return 0;
}

// `kopt roofline KERNEL --ref ref.py --DIM=...`: ceilings (cached), time the kernel, place it, chart it.
int kernel_roofline(const Args& args) {
  CLI::App app{"kopt roofline: place a kernel on the measured roofline", "kopt roofline"};
  pipeline::KernelJob job;
  KernelOptionValues v;
  std::string json_path, svg_path;
  bool remeasure = false;
  double max_time_s = 5;
  add_kernel_options(app, job, v);
  app.add_flag("--remeasure", remeasure, "measure the ceilings again even when the cache is current");
  app.add_option("--json", json_path, "write the result as JSON");
  app.add_option("--svg", svg_path, "write the roofline chart as SVG (default: in the run directory)");
  app.add_option("--max-time-s", max_time_s, "timing budget in seconds (default 5)");
  app.footer("Without a kernel: kopt roofline --ceilings-only [--remeasure] [--quick] [--json F] [--svg F]");
  Dims dims;
  if (auto rc = parse_args_with_dims(app, args, dims); rc) return *rc;
  if (auto st = finish_kernel_job(job, v, dims); !st) return fail(st.error());
  auto info = device::query_gpus();
  if (!info) return fail(gate_error("needs a GPU: " + info.error().message));
  const auto& gpu = info->gpus[0];
  util::set_meta_info({gpu.name, info->driver_version_text(), "", ""});
  auto dir = pipeline::make_run_dir(v.out, "roofline");
  if (!dir) return fail(dir.error());
  auto say = [](const std::string& s) { std::fprintf(stderr, "  %s\n", s.c_str()); };
  std::fprintf(stderr, "kopt roofline %s (%s) on %s -> %s\n", job.kernel.c_str(), format_dims(dims).c_str(), gpu.name.c_str(),
               dir->c_str());
  roofline::CeilingsOptions copts;
  copts.cuda_driver_fallback = info->driver_version_text();
  auto ceilings = roofline::get_ceilings(gpu, remeasure, copts);
  if (!ceilings) return fail(ceilings.error());
  util::SystemRunner sys;
  auto prep = pipeline::prepare(job, *dir, sys, false, say);
  if (!prep) return fail(prep.error());
  auto req = pipeline::timing_request(job, *prep, *dir / "result.json", max_time_s);
  auto out = runner::run_candidate(req, sys);
  if (!out.timing) {
    std::fprintf(stderr, "kopt roofline: the kernel is not correct, so it is not placed: %s: %s\n",
                 std::string(runner::status_name(out.status)).c_str(), out.message.c_str());
    return to_int(ExitCode::kValidation);
  }
  auto placed = pipeline::place(*ceilings, prep->manifest, prep->buffer_dtypes, *out.timing, {}, job.kernel.filename().string());
  if (!placed) return fail(placed.error());
  std::fputs(roofline::format_text(*placed).c_str(), stdout);
  if (prep->sizes_guessed) std::puts("WARNING: buffer sizes were guessed (ref.py has no setup() or shapes)");
  std::vector<roofline::SvgPoint> points;
  if (auto p = roofline::svg_point(*placed)) points.push_back(*p);
  std::string svg = roofline::render_svg(*ceilings, points);
  if (svg_path.empty()) svg_path = (*dir / "roofline.svg").string();
  if (auto st = util::write_file_atomic(svg_path, svg); !st) return fail(st.error());
  util::Json j = {{"roofline", roofline::to_json(*placed)}, {"ceilings", roofline::to_json(*ceilings)},
                  {"timing", runner::to_json(*out.timing)}, {"sizes_guessed", prep->sizes_guessed}};
  (void)util::write_json_atomic(*dir / "roofline.json", "roofline", j);
  if (!json_path.empty())
    if (auto st = util::write_json_atomic(json_path, "roofline", j); !st) return fail(st.error());
  std::printf("chart: %s\n", svg_path.c_str());
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
  app.add_option("--json", json_path, "write the ceilings as JSON");
  app.add_option("--svg", svg_path, "write the roofline chart as SVG");
  if (auto rc = parse_args(app, args); rc) return *rc;
  return ceilings_only(gpu, remeasure, quick, json_path, svg_path);
}

}  // namespace kopt::cli
