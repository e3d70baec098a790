#pragma once
// Triton candidates compiled before they are measured (docs/TRITON.md "Compiled before measured"). Triton compiles a
// configuration at its first launch (JIT): 2-4 s of one CPU core a configuration of a real project's kernel
// (liger_geglu on an H100, 2026-12-07), which each measuring child used to pay in turn while the GPU idled. Before a
// batch is measured, one compile-mode child a candidate (setup() at the primary case and one launch: nothing checked,
// nothing timed) runs, several at once, each into the candidate's own Triton cache folder; the candidate's measuring
// child then uses that folder and finds its kernels compiled. Nothing is timed while they run: the batch's measuring
// starts after the last has ended. A child that fails or runs past its limit costs only the saving: the measuring
// child compiles as before, and its verdict is the verdict.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runner/launch.h"

namespace kopt::loop {

// Whether batches are compiled ahead: KOPT_TRITON_PRECOMPILE set to a value that is not an off word (1, on). Off by
// default until it has run on a GPU (written 2026-12-07 in a session whose device calls were refused; docs/TRITON.md).
bool triton_precompile_on();

// Host memory a compile-mode child holds (torch, triton and a CUDA context, forked from the harness's server).
inline constexpr uint64_t kTritonCompileChildHostBytes = 2ull << 30;
// GPU memory a child holds besides setup()'s buffers (its CUDA context and torch's allocator).
inline constexpr uint64_t kTritonCompileChildGpuBytes = 1ull << 30;
// The longest a batch waits for a compile child: nothing of the batch is timed before the last has ended, so one
// pathological configuration (liger_geglu's 65536-wide block at one warp: ~80 s of ptxas) would hold every other
// candidate; past this it is killed, and its measuring child compiles it as before.
inline constexpr double kTritonCompileChildLimitS = 30;

// How many compile-mode children run at once: one a core (`jobs_option` > 0, --compile-jobs N: at most N), no more
// than the candidates, than host memory holds at kTritonCompileChildHostBytes each, or than half the GPU's memory
// holds at the primary case's working set plus kTritonCompileChildGpuBytes each (0 bytes: unknown, not a limit).
// 0 when compiling ahead would save nothing: fewer than two candidates.
int triton_precompile_jobs(size_t candidates, int jobs_option, size_t cores, uint64_t host_free_bytes, uint64_t gpu_memory_bytes,
                           uint64_t working_set_bytes);

// Runs every request through `run` (given its index too), at most `jobs` at once (each call on a thread of its own);
// the outcomes in the requests' order. `run` must be safe to call from several threads.
std::vector<runner::RunOutcome> run_each(const std::vector<runner::RunRequest>& requests, int jobs,
                                         const std::function<runner::RunOutcome(size_t, const runner::RunRequest&)>& run);

// The folder a Triton child that is given no cache folder of its own compiles into, as Triton resolves it from the
// environment the child inherits: TRITON_CACHE_DIR, else TRITON_HOME/.triton/cache, else HOME/.triton/cache; nullopt
// when none is set. `env` reads a variable (empty or null: unset).
std::optional<std::filesystem::path> triton_default_cache_dir(const std::function<const char*(const char*)>& env);

// Copies the entries of a candidate's cache folder (one folder a compiled kernel, named by Triton's hash of everything
// it was compiled from) into `to`, skipping entries `to` has already; a cache, so a failure copies less and is no
// error. Returns how many entries were copied. After a batch was compiled ahead, the runs that take Triton's default
// cache (a finalist's paired runs against the champion, its checks) then find the candidate compiled.
size_t copy_triton_cache_entries(const std::filesystem::path& from, const std::filesystem::path& to);

}  // namespace kopt::loop
