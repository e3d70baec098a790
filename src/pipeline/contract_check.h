#pragma once
// The contract without a GPU: what every kernel command checks before it looks for a GPU, and all that
// `kopt check` does. The kernel's entry point (solve() or setup()/run_kernel()), its annotations, ref.py
// (imports, defines reference(), needs only what kopt can supply), the dimensions (every scalar and shape
// name given); optionally the reference run once on the CPU to catch shape and dtype errors.
#include <string>
#include <vector>

#include "core/result.h"
#include "pipeline/prepare.h"
#include "util/json_io.h"
#include "util/process.h"

namespace kopt::pipeline {

enum class ReferenceRun {
  kStatic,  // import ref.py and check names only: allocates nothing, cheap at any dimensions
  kOnCpu,   // also run the reference once on the CPU (numpy or torch CPU); skipped where it cannot run there
  // kStatic, but no harness at all when the golden-data cache holds an entry for exactly this ref.py (and the *.py
  // beside it), signature, dims, seeds and pointer size: the harness made that entry, which it does only after the
  // same checks passed. Saves a Python start and ref.py's imports (2-4 s with torch) on a repeated bench or optimize.
  kStaticUnlessCached,
};

struct ContractCheck {
  search::Backend backend = search::Backend::kCuda;
  std::string entry;            // the entry point, normalised ("void solve(const float* a, ...)")
  size_t annotated_params = 0;  // // @kopt param lines
  size_t annotated_methods = 0;
  util::Json harness = util::Json::object();  // the harness's `check` line (docs/HARNESS.md)
  bool harness_skipped = false;  // kStaticUnlessCached found the golden data cached
};

// Whether the golden-data cache (contract/golden_cache.h) holds an entry for the job's CUDA/CUTLASS golden request
// with the signature written at signature_json (with or without the reference's timing). Triton jobs: false.
bool golden_cached(const KernelJob& job, const contract::KernelSignature& sig, const std::filesystem::path& signature_json);

// The harness argv after `python3 -m kopt_harness` for a job. Pure.
std::vector<std::string> check_argv(const KernelJob& job, const std::string& signature_json, ReferenceRun run);

// Errors name what to fix: input errors (exit 4) for the kernel, ref.py and the dims; a gate error when
// python3 is missing.
Result<ContractCheck> check_contract(const KernelJob& job, util::CommandRunner& runner, ReferenceRun run);

// The short report `kopt check` prints ("contract OK" and what was checked).
std::string format_contract_report(const KernelJob& job, const ContractCheck& c);

}  // namespace kopt::pipeline
