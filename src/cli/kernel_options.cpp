#include "cli/kernel_options.h"

#include <fmt/format.h>

#include <cstdio>

#include "cli/parse.h"
#include "pipeline/contract_check.h"
#include "toolchain/cutlass.h"

namespace kopt::cli {

void add_kernel_options(CLI::App& app, pipeline::KernelJob& job, KernelOptionValues& v) {
  const pipeline::KernelJob d;  // the defaults, written once (pipeline/prepare.h)
  app.add_option("KERNEL", v.kernel, "the kernel: a .cu exposing extern \"C\" void solve(...), or a Triton .py "
                 "exposing setup() and run_kernel() (docs/TRITON.md)")->required();
  app.add_option("--ref", v.ref, "ref.py: reference(**kwargs), optional setup/shapes/atol/rtol/workload_model")->required();
  app.add_option("--seeds", job.seeds, fmt::format("number of random input sets checked (default {})", d.seeds));
  app.add_option("--ptr-size", job.ptr_size, "elements per buffer when ref.py gives no shapes (else guessed)");
  app.add_option("--numerics-mode", v.numerics,
                 fmt::format("reference | strict | approximate (default {})", search::numerics_mode_name(d.numerics)));
  app.add_option("--atol", v.atol, "absolute tolerance (overrides ref.py)");
  app.add_option("--rtol", v.rtol, "relative tolerance (overrides ref.py)");
  app.add_option("--arch", job.arch, fmt::format("target architecture (default {})", d.arch));
  app.add_option("--nvcc-flag", job.nvcc_flags, "an extra nvcc flag (repeatable)");
  app.add_option("-D", v.defines, "a macro NAME=VALUE for the kernel; for a Triton kernel a run_kernel argument (repeatable)");
  app.add_option("-I", job.include_dirs, "an include directory (repeatable)");
  app.add_option("--cutlass-include", v.cutlass_includes,
                 "CUTLASS headers: the folder holding cutlass/ and cute/ (default: $CUTLASS_PATH/include, else the "
                 "nvidia-cutlass wheel); makes the job a CUTLASS job")
      ->check([](const std::string& dir) {
        return toolchain::cutlass_include_dir_of(dir).empty() ? dir + " holds no cutlass/cutlass.h (nor include/cutlass/cutlass.h)"
                                                              : std::string();
      });
  app.add_option("--run-timeout-s", job.run_timeout_s,
                 fmt::format("seconds before a measuring process is killed (default {})", d.run_timeout_s));
  add_deprecated_alias(app, "--timeout", "--run-timeout-s", job.run_timeout_s);
  app.add_option("--out-dir", v.out, "the folder where kopt_runs/ is created (default .)")->type_name("DIR");
  add_deprecated_alias(app, "--out", "--out-dir", v.out);
}

Status finish_kernel_job(pipeline::KernelJob& job, const KernelOptionValues& v, const Dims& dims) {
  job.kernel = v.kernel;
  job.ref = v.ref;
  job.dims = dims;
  auto mode = search::parse_numerics_mode(v.numerics);
  if (!mode) return input_error("--numerics-mode must be reference, strict or approximate, not '" + v.numerics + "'");
  job.numerics = *mode;
  if (v.atol >= 0) job.atol = v.atol;
  if (v.rtol >= 0) job.rtol = v.rtol;
  for (const auto& d : v.defines) {
    auto eq = d.find('=');
    std::string name = d.substr(0, eq);
    if (name.empty()) return input_error("-D needs NAME or NAME=VALUE, not '" + d + "'");
    job.defines[name] = eq == std::string::npos ? "" : d.substr(eq + 1);
  }
  for (const auto& d : v.cutlass_includes) {  // a CUTLASS tree or its include folder (checked by the option)
    job.include_dirs.push_back(toolchain::cutlass_include_dir_of(d));
    job.cutlass = true;
  }
  if (dims.empty()) return input_error("no dimensions given: add them as --NAME=VALUE (e.g. --N=1048576)");
  return pipeline::validate(job);
}

Status check_contract_first(const std::string& command, const pipeline::KernelJob& job) {
  util::SystemRunner sys;
  auto checked = pipeline::check_contract(job, sys, pipeline::ReferenceRun::kStaticUnlessCached);
  if (!checked && checked.error().code == ExitCode::kOther) {  // the check itself broke: the golden data judges later
    std::fprintf(stderr, "kopt %s: warning: the contract check did not run: %s\n", command.c_str(),
                 checked.error().message.c_str());
    return ok_status();
  }
  KOPT_TRY_ASSIGN(pipeline::ContractCheck c, std::move(checked));
  for (const auto& w : c.harness.value("warnings", util::Json::array()))
    std::fprintf(stderr, "kopt %s: warning: %s\n", command.c_str(), w.get<std::string>().c_str());
  return ok_status();
}

}  // namespace kopt::cli
