#include <cstdio>

#include "cli/commands.h"
#include "cli/fail.h"
#include "cli/kernel_options.h"
#include "cli/output_options.h"
#include "cli/parse.h"
#include "pipeline/contract_check.h"
#include "util/output.h"

namespace kopt::cli {

int cmd_check(const Args& args) {
  CLI::App app{"kopt check: the kernel contract without a GPU: solve() (or a Triton kernel's setup/run_kernel), its "
               "annotations, ref.py and the dimensions; then the reference once on the CPU (numpy or torch CPU) to "
               "catch shape and dtype errors", "kopt check"};
  pipeline::KernelJob job;
  KernelOptionValues v;
  std::string json_path;
  bool static_only = false;
  add_kernel_options(app, job, v);
  app.add_flag("--static", static_only, "do not run the reference (only import ref.py and check names)");
  add_json_option(app, json_path, "the check");
  app.footer("Exit 0: contract OK. Exit 4: what to fix is named. Nothing needs a GPU; no run directory is made.");
  Dims dims;
  if (auto rc = parse_args_with_dims(app, args, dims, v.kernel); rc) return *rc;
  auto fail = [](const Error& e) { return report_failure("check", e); };
  if (auto st = finish_kernel_job(job, v, dims); !st) return fail(st.error());
  util::SystemRunner sys;
  auto c = pipeline::check_contract(job, sys, static_only ? pipeline::ReferenceRun::kStatic : pipeline::ReferenceRun::kOnCpu);
  if (!c) return fail(c.error());
  std::fputs(pipeline::format_contract_report(job, *c).c_str(), util::report_stream(json_path));
  util::Json j = {{"kernel", job.kernel.string()}, {"ref", job.ref.string()}, {"dims", dims}, {"backend", search::backend_name(c->backend)},
                  {"entry", c->entry}, {"annotated_params", c->annotated_params},
                  {"annotated_methods", c->annotated_methods}, {"harness", c->harness}, {"status", "ok"}};
  if (auto st = util::write_json_output(json_path, "check", j); !st) return fail(st.error());
  return 0;
}

}  // namespace kopt::cli
