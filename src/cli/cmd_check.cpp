#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "cli/fail.h"
#include "cli/kernel_options.h"
#include "cli/output_options.h"
#include "cli/parse.h"
#include "pipeline/contract_check.h"
#include "pipeline/prepare.h"
#include "toolchain/tools.h"
#include "util/output.h"

namespace kopt::cli {

namespace fs = std::filesystem;

int cmd_check(const Args& args) {
  CLI::App app{"kopt check: the kernel contract without a GPU: solve() (or a Triton kernel's setup/run_kernel), its "
               "annotations, ref.py and the dimensions; then the reference once on the CPU (numpy or torch CPU) to "
               "catch shape and dtype errors, and a CUDA kernel compiled where nvcc is", "kopt check"};
  pipeline::KernelJob job;
  KernelOptionValues v;
  std::string json_path;
  bool static_only = false;
  add_kernel_options(app, job, v);
  app.add_flag("--static", static_only, "do not run the reference (only import ref.py and check names) nor compile the kernel");
  add_json_option(app, json_path, "the check");
  app.footer("Exit 0: contract OK. Exit 4: what to fix is named. Nothing needs a GPU; no run directory is made.");
  Dims dims;
  if (auto rc = parse_args_with_dims(app, args, dims, v.kernel); rc) return *rc;
  auto fail = [](const Error& e) { return report_failure("check", e); };
  if (auto st = finish_kernel_job(job, v, dims); !st) return fail(st.error());
  util::SystemRunner sys;
  auto c = pipeline::check_contract(job, sys, static_only ? pipeline::ReferenceRun::kStatic : pipeline::ReferenceRun::kOnCpu);
  if (!c) return fail(c.error());
  // The kernel compiled where nvcc is (issue 37 item 2): a kernel that does not build is exit 4 with nvcc's log,
  // before any GPU is looked for. --static and Triton kernels skip it; the build cache keeps a kernel built once.
  util::Json compiled = nullptr;
  std::string compiled_line;
  if (static_only) {
    compiled = {{"skipped", "--static"}};
  } else if (c->backend == search::Backend::kTriton) {
    compiled = {{"skipped", "a Triton kernel compiles when it first runs"}};
  } else if (toolchain::find_nvcc().empty()) {
    compiled = {{"skipped", "nvcc not found"}};
    compiled_line = "  compile    not checked: nvcc not found (bench and optimize need it)\n";
  } else {
    const fs::path out = fs::temp_directory_path() / ("kopt-check-build-" + std::to_string(::getpid()));
    auto built = pipeline::compile_kernel(job, pipeline::compile_request(job, "kernel", job.kernel, out), sys);
    std::error_code ec;
    fs::remove_all(out, ec);
    if (!built) return fail(built.error());
    compiled = {{"arch", job.arch}, {"cache_hit", built->cache_hit}, {"compile_ms", built->compile_ms}};
    compiled_line = fmt::format("  compile    OK for {} ({})\n", job.arch,
                                built->cache_hit ? std::string("the build cache's") : fmt::format("nvcc {:.1f} s", built->compile_ms / 1e3));
  }
  std::fputs((pipeline::format_contract_report(job, *c) + compiled_line).c_str(), util::report_stream(json_path));
  util::Json j = {{"kernel", job.kernel.string()}, {"ref", job.ref.string()}, {"dims", dims}, {"backend", search::backend_name(c->backend)},
                  {"entry", c->entry}, {"annotated_params", c->annotated_params},
                  {"annotated_methods", c->annotated_methods}, {"harness", c->harness}, {"compile", compiled}, {"status", "ok"}};
  if (auto st = util::write_json_output(json_path, "check", j); !st) return fail(st.error());
  return 0;
}

}  // namespace kopt::cli
