#pragma once
// What every kernel command does first (bench, roofline, profile, optimize): validate the inputs before any
// GPU work, parse the kernel contract, make the golden data once, and compile the kernel.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compile/request.h"
#include "contract/ephemeral_seed.h"
#include "contract/signature.h"
#include "core/dims.h"
#include "core/result.h"
#include "runner/compare.h"
#include "search/method.h"
#include "util/json_io.h"
#include "util/process.h"

namespace kopt::pipeline {

// The numerics mode is the search's (search/method.h): one enum, one name table.
using search::NumericsMode;

struct KernelJob {
  std::filesystem::path kernel;   // .cu (CUDA, CUTLASS) or .py (Triton, docs/TRITON.md)
  // Triton: the user's kernel.py when `kernel` is kopt's instrumented copy of it (with_instrumented_copy). The golden
  // data comes from its setup(), which the copy leaves as it is, and is keyed by it: the copy's path is a new run
  // directory's each run, so keyed by the copy no run found the golden data the one before it made (golden_source()).
  std::filesystem::path golden_kernel;
  std::filesystem::path ref;      // ref.py
  Dims dims;
  int seeds = 3;
  long long ptr_size = 0;
  NumericsMode numerics = NumericsMode::kReference;
  std::optional<double> atol, rtol;
  std::string arch = "sm_90";
  std::vector<std::string> nvcc_flags;
  std::vector<std::string> include_dirs;
  bool cutlass = false;  // --cutlass-include: a CUTLASS job even when the source does not include <cutlass/..>
  std::map<std::string, std::string> defines;
  std::string compile_jobs = "auto";
  double run_timeout_s = 120;
  // Per compile of a candidate; 0: CompileRequest's default. optimize sets it from the baseline's compile
  // (compile::candidate_compile_limit_s): a point past it is pruned, not waited on.
  double compile_timeout_s = 0;
};

// The file whose setup() makes a Triton kernel's golden data: golden_kernel, else kernel.
const std::filesystem::path& golden_source(const KernelJob& job);

// Checks files, extensions, modes and numbers; never touches the GPU. Errors name what to fix (exit 4).
Status validate(const KernelJob& job);
// sm_90 -> 90, sm_90a / sm_100f -> 90 / 100; nullopt for anything CUDA 13's nvcc does not compile for (sm_999, 90).
std::optional<int> parse_arch_number(const std::string& arch);

struct Prepared {
  contract::KernelSignature signature;
  std::string source_text;
  std::filesystem::path golden_dir;
  util::Json manifest;
  runner::Tolerance tol;          // resolved for the numerics mode
  std::string tol_source;         // "ref.py", "command line", "default", "approximate"
  compile::CompileResult build;   // the kernel itself
  bool sizes_guessed = false;
  std::vector<std::string> buffer_dtypes;
  // Triton (pipeline/triton.h): backend "triton", no build; the kernel file and the baseline run_kernel
  // configuration (annotation defaults, -D overrides) the measuring child passes.
  search::Backend backend = search::Backend::kCuda;  // kCuda (CUTLASS jobs too) or kTriton
  std::filesystem::path kernel;
  util::Json triton_config = util::Json::object();
  // Wall seconds of prepare's steps ("compile", "golden"): bench's and optimize's time accounting.
  std::map<std::string, double> phase_seconds;
  // prepare(..., want_ephemeral): the ephemeral seed (contract/ephemeral_seed.h) made by the harness that made the
  // golden data, or why there is none.
  contract::EphemeralSeedPtr ephemeral;
  std::string ephemeral_reason;
};

using Say = std::function<void(const std::string&)>;

// Tolerance for a numerics mode: command line > ref.py/default; approximate uses the approx_* values.
runner::Tolerance resolve_tolerance(const util::Json& manifest, NumericsMode mode, std::optional<double> atol,
                                    std::optional<double> rtol, std::string* source = nullptr);

// "golden data: from the cache ..." when make_golden placed a cached entry (the manifest's golden_cache); nothing otherwise.
// "golden data: from the cache (made ...)", or "made by this run's harness" when the cache's entry was made after this
// process started (the run's own harness made it moments before: not a hit from an earlier run).
void say_golden_cache(const util::Json& manifest, const Say& say);
// Whether a golden cache entry's "made" stamp (UTC, ISO 8601 to the second) is from after this process started.
bool made_by_this_process(const std::string& made_utc);

// Parses the contract, writes golden data into work_dir/golden, compiles the kernel into work_dir/build.
// `want_ephemeral` (kopt bench; CUDA, CUTLASS and Triton kernels): where the golden data is not cached, the harness that
// makes it (a stream, contract/golden_stream.h, filling the golden cache) also makes the ephemeral seed:
// Prepared::ephemeral.
// `early_build` (kopt optimize): the kernel's build made beside the hardware gate (SystemLab::start_early_work) into the
// build cache; the build here is then that cache entry, and it is reported (and sets the candidates' compile limit) as
// the early build's own nvcc time, not as a cache hit.
Result<Prepared> prepare(const KernelJob& job, const std::filesystem::path& work_dir, util::CommandRunner& runner,
                         bool time_reference, const Say& say, bool want_ephemeral = false,
                         const compile::CompileResult* early_build = nullptr);

// prepare(want_ephemeral)'s golden data through a harness kept open for one more request, the ephemeral seed: only
// where the harness runs anyway (the golden cache lacks `g`'s data), and before anything is timed. Sets p.ephemeral,
// or p.ephemeral_reason; make_golden then places the data from the cache (or makes what the stream could not, and says
// why). `log`: the harness's stderr.
void make_with_ephemeral(const contract::GoldenRequest& g, const std::filesystem::path& log, Prepared& p);

// Compiles the job's kernel (one request, the build cache as every compile): nvcc missing is a gate error (exit 3), a
// kernel that does not compile an input error with nvcc's log (its first 4000 characters).
Result<compile::CompileResult> compile_kernel(const KernelJob& job, const compile::CompileRequest& req,
                                             util::CommandRunner& runner);

// Compile requests for a kernel job with extra defines/flags (candidates, ablations).
// The job that builds a derived space's annotated copy `copy` of job.kernel: the kernel is the copy, and the copy's
// quoted #includes still resolve beside the original (its folder added to the include dirs; CUDA and CUTLASS).
KernelJob with_instrumented_copy(KernelJob job, const std::filesystem::path& copy);

compile::CompileRequest compile_request(const KernelJob& job, const std::string& name, const std::filesystem::path& source,
                                        const std::filesystem::path& out_dir);

// "kopt_runs/<prefix>_YYYYmmdd_HHMMSS" under `out` (a fresh, unique directory).
Result<std::filesystem::path> make_run_dir(const std::filesystem::path& out, const std::string& prefix);

}  // namespace kopt::pipeline
