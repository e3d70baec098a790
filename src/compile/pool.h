#pragma once
// The compile pool: N worker threads, each compiling one candidate at a time through Compiler (a per-job
// timeout comes from CompileRequest::timeout_s). A failed compile is a result; the batch goes on.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compile/request.h"
#include "core/result.h"
#include "util/process.h"

namespace kopt::compile {

inline constexpr uint64_t kDefaultJobMemBytes = 1ull << 30;  // a plain CUDA candidate; CUTLASS needs more

// min(cores, free memory / per-job estimate), at least 1. per_job_mem_bytes 0: cores alone.
int auto_jobs(size_t cores, uint64_t free_mem_bytes, uint64_t per_job_mem_bytes);
// "MemAvailable:   23456789 kB" from /proc/meminfo text, in bytes.
std::optional<uint64_t> parse_mem_available(std::string_view meminfo);
size_t cpu_cores();                           // CPUs this process may run on (sched_getaffinity)
std::optional<uint64_t> mem_available_bytes();  // /proc/meminfo
// auto_jobs for this machine and the largest est_mem_bytes of the requests.
int auto_jobs_for(const std::vector<CompileRequest>& requests);
// --compile-jobs: "auto" -> 0, "N" (N >= 1) -> N; anything else is an input error.
Result<int> parse_jobs(std::string_view text);

// The compile time limit of one candidate. Candidates are variants of the baseline, so one that compiles far longer
// than it is a pathology (a thread tile of 1024 accumulators, a huge loop fully unrolled) that would hold a compile
// job for minutes and measure nothing: 10 times the baseline's compile, at least kMinCandidateCompileS
// (kMinCutlassCandidateCompileS for CUTLASS), at most kMaxCandidateCompileS. A cache hit's time is a lookup's: the floor.
inline constexpr double kMinCandidateCompileS = 60;
inline constexpr double kMinCutlassCandidateCompileS = 180;
inline constexpr double kMaxCandidateCompileS = 600;
double candidate_compile_limit_s(double baseline_compile_ms, bool baseline_cache_hit, bool cutlass);

// The entry functions of a build that spill (ptxas's spill stores or loads), as "name: N bytes spill stores, M
// bytes spill loads"; empty when none does.
std::vector<std::string> spilling_functions(const std::vector<KernelResources>& resources);

struct BatchProgress {
  size_t done = 0, total = 0, cached = 0, failed = 0;
};
// "compiled 3/8 (1 cached, 1 failed)"
std::string format_progress(const BatchProgress& p);
// Called after each candidate, one call at a time (never concurrently).
using ProgressFn = std::function<void(const BatchProgress&, const CompileResult& finished)>;

struct PoolOptions {
  int jobs = 0;      // 0: auto_jobs_for(requests)
  std::string nvcc;  // empty: toolchain::find_nvcc()
};

// Results in the order of the requests. The runner must be safe to call from several threads.
std::vector<CompileResult> compile_batch(const std::vector<CompileRequest>& requests, const PoolOptions& opts,
                                         util::CommandRunner& runner, const ProgressFn& progress = {});

}  // namespace kopt::compile
