#pragma once
// The parent side of the runner: starts `kopt __runner` as a child with a timeout and turns what happened
// (a result file, or the way the child died) into a RunOutcome. kopt never runs candidate code in-process.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/compare.h"
#include "runner/outcome.h"
#include "runner/timing_method.h"
#include "util/process.h"

namespace kopt::runner {

// What a runner child does with the libraries: check them on every seed, time one, race several (paired), run
// one seed under a profiler, or (Triton) compile without golden data. The child's `--mode` takes the names.
enum class RunMode { kCheck, kTime, kPaired, kProfile, kCompile };
std::string_view run_mode_name(RunMode m);
std::optional<RunMode> parse_run_mode(std::string_view name);  // the inverse of run_mode_name; nullopt when unknown

struct RunRequest {
  std::vector<std::filesystem::path> libs;  // one, or several for mode "paired"
  std::filesystem::path golden_dir;
  std::filesystem::path result_json;  // where the child writes its result
  RunMode mode = RunMode::kCheck;
  std::optional<Tolerance> tol;       // overrides the golden manifest's
  double timeout_s = 120;
  double max_time_s = 5;              // timing budget inside the child
  double target_ci = 0.01;
  int min_samples = 10;
  int rounds = 40;                    // paired mode: at most this many rounds
  bool race = false;                  // paired mode: stop as soon as the last library is ranked against the first (runner/race.h)
  // Paired mode: the first library passed this run's checks on this golden data already (the champion): it is warmed
  // up, not checked again, and a worker probes it once (`--checked-first`).
  bool checked_first = false;
  L2Mode l2 = L2Mode::kCold;                  // the L2 flushed before every sample or not (timing_method.h)
  std::optional<TimingMethod> timing_method;  // a method to force (tests, comparisons); nullopt: auto (timing_method.h)
  std::filesystem::path dump_outputs; // check mode: the first seed's outputs written here (loop/determinism.h)
  std::string smem_fill;              // check mode: shared memory filled with this pattern before each call (smem_fill.h)
  int max_seeds = 0;                  // check mode: only the first N seeds (0: all); the sanitizer gate uses 1
  // Check mode: the ephemeral seed's memfd (contract/ephemeral_seed.h), inherited by a one-shot child (never the
  // worker: it has loaded candidates) that hands it to its judge and closes its own copy before loading the library;
  // the judge serves that seed in the sealed seed's place (`--ephemeral-fd`). -1: none.
  int ephemeral_fd = -1;
  // Triton (docs/TRITON.md): set triton_kernel and the child is `python3 -m kopt_harness triton-run` on
  // that kernel.py instead of `kopt __runner`; `libs` is then unused. One configuration (the run_kernel
  // keyword arguments: constexpr params, num_warps/num_stages, KOPT_<ID> guards) per slot: one for
  // check/time/profile, several for paired. dump_cubin_dir: where the cubins Triton compiled are written.
  // Mode "compile" (no golden data) calls setup(seed=0, **triton_dims) and run_kernel once; triton_dims an array of
  // objects: once at each, in order (a dimension the kernel takes as tl.constexpr compiles a kernel a value).
  std::filesystem::path triton_kernel;
  std::vector<util::Json> triton_configs;
  std::filesystem::path dump_cubin_dir;
  util::Json triton_dims = util::Json::object();
  // Triton: the Triton cache folder the child uses (`--triton-cache`, made when missing and kept) instead of a fresh
  // one; a candidate's compile-mode child and then its measuring child share it, so the latter finds its kernels
  // compiled (loop/triton_precompile.h). Empty: a fresh one where cubins are dumped, else Triton's own.
  std::filesystem::path triton_cache_dir;
  // Triton, time mode: the golden data of the workload matrix's other cases, checked in the same child after the timed
  // run (`--also-check`: the kernel imported and compiled once, not once a case); each case's verdict in the result's
  // "cases" (case_checks_in(), runner/outcome.h).
  std::vector<std::filesystem::path> also_check;
  // Several GPUs (issue 21): the measuring slot that serves it (-1: the first) and what its child's environment
  // gains (CUDA_VISIBLE_DEVICES of that slot's GPU); neither is part of the child's command line.
  int slot = -1;
  std::map<std::string, std::string> env;
};

// The argv that runs the child (`<kopt> __runner ...`); `kopt_exe` defaults to this executable.
std::vector<std::string> child_argv(const RunRequest& req, const std::string& kopt_exe = "");

// Computes every timing statistic of a correct result from its raw samples (one implementation for every
// backend: the children return samples): o.timing and o.call from details' samples_ms and call_samples_ms, each
// paired library's `timing` from its samples_ms, and o.timing_method; the statistics are written back into
// o.details (`timing`, `call`, `libs[k].timing`), so every consumer of the details reads the same figures.
void fill_timing(RunOutcome& o);

// Interprets a finished child: its result file if present, else its death (signal, timeout).
RunOutcome interpret(const util::ProcessResult& proc, const std::optional<util::Json>& result_json);

RunOutcome run_candidate(const RunRequest& req, util::CommandRunner& runner);

// The run has no verdict because its measuring process died or never started without writing a result: a worker
// lost under it (a GPU fault, a lost node, a kernel that killed its process). On several GPUs such a candidate is
// measured once more on another (issue 21) before it is reported.
bool lost_worker(const RunOutcome& o);

}  // namespace kopt::runner
