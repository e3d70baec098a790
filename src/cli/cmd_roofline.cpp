#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "cli/parse.h"
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

}  // namespace

int cmd_roofline(const Args& args) {
  CLI::App app{"kopt roofline: measure the device's ceilings and place a kernel on the roofline", "kopt roofline"};
  std::string kernel, ref, json_path, svg_path;
  bool ceilings = false, remeasure = false, quick = false;
  int gpu = 0;
  app.add_option("kernel", kernel, "the kernel (.cu or Triton .py)");
  app.add_option("--ref", ref, "the Python reference (ref.py), with workload_model() for the real roofline");
  app.add_flag("--ceilings-only", ceilings, "only measure (or read from the cache) and print the GPU's ceilings");
  app.add_flag("--remeasure", remeasure, "measure the ceilings again even when the cache is current");
  app.add_flag("--quick", quick, "with --ceilings-only: small sizes, a smoke test (not cached)");
  app.add_option("--gpu", gpu, "the GPU's index (default 0)");
  app.add_option("--json", json_path, "write the result as JSON");
  app.add_option("--svg", svg_path, "write the roofline chart as SVG");
  Dims dims;
  if (auto rc = parse_args_with_dims(app, args, dims); rc) return *rc;
  if (ceilings) return ceilings_only(gpu, remeasure, quick, json_path, svg_path);
  if (kernel.empty()) {
    std::fprintf(stderr, "kopt roofline: give a kernel (kopt roofline KERNEL --ref ref.py --M=...), or "
                         "--ceilings-only to measure the GPU's ceilings\n");
    return to_int(ExitCode::kInput);
  }
  // Placing a kernel needs the runner (timing) and the golden data (the workload model): the lead wires
  // roofline::get_ceilings + roofline::analyze here once they exist.
  return not_available("roofline KERNEL", "placing a kernel needs the runner, not wired yet; "
                                          "'kopt roofline --ceilings-only' works now");
}

}  // namespace kopt::cli
