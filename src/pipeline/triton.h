#pragma once
// Triton kernels (.py) in the pipeline (docs/TRITON.md): no nvcc; golden data from the kernel's own
// setup() through the harness's Triton mode; the measuring child is `python3 -m kopt_harness triton-run`;
// the SASS is read from the cubins Triton's JIT wrote. What differs from a CUDA kernel is here; prepare()
// and the commands call in with one line each.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/result.h"
#include "pipeline/prepare.h"
#include "runner/launch.h"
#include "search/annotations.h"
#include "search/candidate.h"
#include "util/json_io.h"
#include "util/process.h"

namespace kopt::pipeline {

// A .py kernel is a Triton kernel.
bool is_triton_kernel(const std::filesystem::path& kernel);

// The keyword arguments run_kernel receives for a candidate: its constexprs (params of kind constexpr and
// every KOPT_<ID> guard, 0/1) and its launch options (num_warps, num_stages), in one JSON object.
util::Json triton_config(const search::Candidate& c);

// The baseline configuration from a kernel's annotations: every param at its default (constexpr params by
// name, num_warps / num_stages params under those names), every method guard 0. Then `overrides`
// (-D NAME=VALUE on the command line) replace or add values; each must be an integer.
Result<util::Json> triton_baseline_config(const search::Annotations& ann,
                                          const std::map<std::string, std::string>& overrides = {});

// Reads kernel.py: it must define setup(...) and run_kernel(...) (checked statically, before any Python)
// and its annotations must parse. Returns the annotations; errors are input errors naming file:line.
Result<search::Annotations> read_triton_kernel(const std::string& source_text, const std::string& file_name);

// prepare() for a Triton kernel: reads the source and annotations, makes golden data with
// `golden --triton-kernel` into work_dir/golden. Nothing is compiled (Triton compiles at the first launch,
// inside the measuring child). `want_ephemeral`: as prepare()'s (make_with_ephemeral).
Result<Prepared> prepare_triton(const KernelJob& job, const std::filesystem::path& work_dir,
                                util::CommandRunner& runner, bool time_reference, const Say& say,
                                bool want_ephemeral = false);

// Points a run request at a prepared kernel: the compiled library (CUDA), or the kernel.py and its
// baseline configuration (Triton).
void bind_kernel(runner::RunRequest& req, const Prepared& p);

// The request that checks a prepared kernel on every seed and times it (kopt bench, kopt roofline).
runner::RunRequest timing_request(const KernelJob& job, const Prepared& p, const std::filesystem::path& result_json,
                                  double max_time_s);

// The installed modules a Triton check's kernel import loaded (its result's `installed_imports`, one a line), kept in
// `dir` under their content's hash, for the fork server to import before it forks the next children
// (python/kopt_harness/preload.py; the child's KOPT_TRITON_PRELOAD, triton_preload_env). Empty: none named, or the
// file could not be written (the children then import them themselves, as before).
std::filesystem::path keep_triton_preload(const util::Json& result_json, const std::filesystem::path& dir);
// The environment variable that hands that file to the fork server's client.
inline constexpr const char* kTritonPreloadEnv = "KOPT_TRITON_PRELOAD";

// The cubins a Triton run wrote with dump_cubin_dir set: the `cubins` list of its result JSON
// ([{"file", "kernel", ...}]), as paths. Empty when the run dumped none.
std::vector<std::filesystem::path> triton_cubins(const util::Json& result_json);

}  // namespace kopt::pipeline
