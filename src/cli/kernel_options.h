#pragma once
// The options every kernel command shares (KERNEL, --ref, dims, seeds, tolerances, compile flags).
#include <CLI/CLI.hpp>
#include <string>

#include "pipeline/prepare.h"

namespace kopt::cli {

struct KernelOptionValues {
  std::string kernel, ref, numerics = "reference", out = ".";
  double atol = -1, rtol = -1;
  std::vector<std::string> defines;  // NAME=VALUE
  std::vector<std::string> cutlass_includes;  // --cutlass-include
};

void add_kernel_options(CLI::App& app, pipeline::KernelJob& job, KernelOptionValues& v);
// Turns parsed values into the job (numerics mode, tolerances, defines). Errors name the bad option.
Status finish_kernel_job(pipeline::KernelJob& job, const KernelOptionValues& v, const Dims& dims);

// The contract (the kernel's entry point and annotations, ref.py, the dims) checked statically before the
// command looks for a GPU (pipeline/contract_check.h): a broken contract is exit 4 on any machine. Its
// warnings (an unused dimension) go to stderr as "kopt CMD: warning: ...".
Status check_contract_first(const std::string& command, const pipeline::KernelJob& job);

}  // namespace kopt::cli
