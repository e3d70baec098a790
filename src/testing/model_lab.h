#pragma once
// A lab that answers from a model of the kernel instead of a GPU: the optimize loop runs whole, with its real
// generator, selection, ablation, stopping rules and run directory, on a machine without a GPU (the loop's
// tests). The model gives a configuration's true time from its -D defines (nullopt: the
// configuration computes a wrong answer); measured samples are that time times a small deterministic noise.
// Test-only (src/testing/): linked into kopt_tests through kopt_test_support, never into kopt.
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "loop/lab.h"
#include "roofline/ceilings.h"

namespace kopt::loop {

using Defines = std::map<std::string, std::string>;

struct ModelLabOptions {
  std::function<std::optional<double>(const Defines&)> time_ms;  // the configuration's true median
  std::function<bool(const Defines&)> compiles;                   // false: a compile failure (default: all compile)
  std::function<bool(const Defines&)> compile_times_out;          // true: nvcc ran past the request's timeout
  std::function<bool(const Defines&)> spills;                     // true: ptxas reports spill stores and loads
  // A wrong configuration's share of its output never written (0 < f <= 1): its runs end unwritten_output, with the
  // runner's message (MISMATCH and "N elements never written"). Unset or nullopt: wrong_result.
  std::function<std::optional<double>(const Defines&)> unwritten;
  double noise = 0.005;                                           // relative spread of the samples
  roofline::Ceilings ceilings;
  std::map<std::string, double> metrics;                          // what every profile reports (ncu names, base units)
  bool hardware_passes = true;
  // Issue 18's gates. time_at: the true time at a case's dims (set: wins over time_ms; nullopt: wrong there).
  std::function<std::optional<double>(const Defines&, const Dims&)> time_at;
  // What compute-sanitizer prints for a configuration under a tool, and its exit code (unset or nullopt: the
  // clean report). The lab answers the gate's processes with it (sanitize/sanitizer.h interprets them).
  std::function<std::optional<std::pair<std::string, int>>(const Defines&, sanitize::Tool)> sanitizer_output;
  // The check child's status with shared memory filled (sanitizer.h's fill pass), e.g. "wrong_result" for a
  // kernel that reads shared memory nobody wrote. Unset: the lab skips the fill pass.
  std::function<std::string(const Defines&)> smem_fill_status;
  // Two runs on the same inputs give different outputs (the determinism check's dumps differ).
  std::function<bool(const Defines&)> nondeterministic;
  // golden() at these dims fails as torch's out-of-memory does.
  std::function<bool(const Dims&)> golden_oom;
  int64_t gpu_memory_bytes = 0;
  // Called with every run request before it is answered (a test raises SIGINT from it; an interrupted lab answers
  // kInterrupted, as the child does).
  std::function<void(const runner::RunRequest&)> on_run;
  // Called with the dims of every golden() before it is answered (an interrupted lab's golden data fails).
  std::function<void(const Dims&)> on_golden;
  // GPUs the hardware gate lists (issue 21's --gpus), all of one model.
  int gpus = 1;
  // Each run's noise drawn from its own sequence (the library and the result file) instead of the library's:
  // the samples then do not depend on the order runs are served in, as on several GPUs at once.
  bool noise_per_run = false;
  // The worker of `slot` dies under this configuration (a GPU fault): the run ends with no result, as a killed
  // measuring process's does.
  std::function<bool(const Defines&, int slot)> worker_dies;
  // The same at one case of the workload matrix: the run at these golden data's dims dies on `slot`.
  std::function<bool(const Defines&, int slot, const Dims&)> worker_dies_at;
  // Set: the lab makes an ephemeral seed (a real sealed memfd holding a few bytes), and a check run given it
  // (RunRequest::ephemeral_fd) is wrong_on_ephemeral_seed where this says so. Unset: the lab makes none.
  std::function<bool(const Defines&)> wrong_on_ephemeral;
  // The check run given the ephemeral seed ends ok without judging it (its judge did not start): its result holds no
  // record of that seed.
  bool ephemeral_unjudged = false;
  // The profile cache's folder (Lab::profile_cache_dir); unset: none.
  std::optional<std::filesystem::path> profile_cache_dir;
  // The evidence cache's folder (Lab::evidence_cache_dir: one subfolder a kind); unset: none.
  std::optional<std::filesystem::path> evidence_cache_dir;
  // The golden manifests carry no workload model (ref.py without workload_model()).
  bool no_workload_model = false;
  std::string workload_dtype;  // the workload model's "dtype" (empty: none, the roof inferred from the buffers)
  // The n-th sanitize() call waits (up to 10 s) for the event named n-th here (events' names: "run correctness.json")
  // before it answers, and says in ModelLab::sanitizer_saw whether it came: what ran beside the sanitizer.
  std::vector<std::string> sanitizer_waits_for;
  // What hardware() leaves to run beside the baseline's checks (SystemLab: the counters probe); unset: nothing.
  std::optional<DeferredHardwareCheck> deferred_check;
};

class ModelLab final : public Lab {
 public:
  explicit ModelLab(ModelLabOptions o) : o_(std::move(o)) {}
  std::optional<std::filesystem::path> profile_cache_dir() const override { return o_.profile_cache_dir; }
  std::optional<std::filesystem::path> evidence_cache_dir(const std::string& kind) const override {
    if (!o_.evidence_cache_dir) return std::nullopt;
    return *o_.evidence_cache_dir / kind;
  }
  int profile_calls() const { return profile_calls_; }
  HardwareGate hardware() override;
  std::optional<DeferredHardwareCheck> deferred_hardware_check() override {
    std::lock_guard<std::mutex> lock(mu_);
    events.push_back("deferred_hardware_check");
    auto d = o_.deferred_check;
    o_.deferred_check.reset();  // answered once, as the lab's thread is
    return d;
  }
  Result<pipeline::Prepared> prepare(const std::filesystem::path& run_dir, bool resuming, const pipeline::Say& say) override;
  Result<roofline::Ceilings> ceilings(const device::GpuInfo& gpu) override;
  std::vector<compile::CompileResult> compile(const std::vector<compile::CompileRequest>& requests, int jobs,
                                              const compile::ProgressFn& progress) override;
  sass::Analysis analyze_sass(const std::vector<std::filesystem::path>& binaries,
                              const std::vector<std::string>& kernels) override;
  runner::RunOutcome run(const runner::RunRequest& request) override;
  Result<profile::ProfileResult> profile(const profile::ProfileRequest& request, profile::ProfilePlan& plan, int top_n) override;
  Result<util::Json> golden(const GoldenWant& want) override;
  void prefetch_golden(const std::vector<GoldenWant>& requests) override {
    std::vector<Dims> batch;
    for (const auto& r : requests) batch.push_back(r.dims);
    prefetched.push_back(batch);
  }
  void prefetch_golden_in_background(const std::vector<GoldenWant>& requests) override {
    std::vector<Dims> batch;
    for (const auto& r : requests) {
      batch.push_back(r.dims);
      prefetched_seeds.push_back(r.seeds);
    }
    prefetched_in_background.push_back(batch);
    events.push_back("prefetch_golden_in_background");
  }
  void begin_ephemeral_seed(const Dims& at) override {
    std::lock_guard<std::mutex> lock(mu_);
    begun_ephemeral_seeds.push_back(at);
    runs_before_begin.push_back(runs.size());
    events.push_back("begin_ephemeral_seed");
  }
  void start_early_work(const std::optional<std::string>& instrumented_source) override {
    (void)instrumented_source;
    events.push_back("start_early_work");
  }
  void stop_early_work() override { events.push_back("stop_early_work"); }
  sanitize::Verdict sanitize(const sanitize::Request& request) override;
  Result<contract::EphemeralSeedPtr> ephemeral_seed(const Dims& dims) override;
  void use_job(const pipeline::KernelJob& job) override { kernel = job.kernel; }
  void use_slots(const std::vector<runner::WorkerSpec>& s) override { slots = s; }

  // What the loop asked for, for tests: every compile request's name, and every run's mode.
  std::vector<std::string> compiled;
  std::vector<double> compile_timeouts_s;  // each request's timeout_s, in order
  std::vector<std::string> runs;
  std::vector<std::filesystem::path> results;  // every run's result file
  std::vector<Dims> goldens;              // every golden() call's dims
  std::vector<int> golden_seeds;          // and its seeds (0: the job's)
  std::vector<Dims> ephemeral_seeds;      // every ephemeral_seed() call's dims
  std::vector<Dims> begun_ephemeral_seeds;    // every begin_ephemeral_seed() call's dims (ephemeral_seed() makes them here)
  std::vector<size_t> runs_before_begin;      // for each, how many runs (`runs`) came before it
  std::vector<std::vector<Dims>> prefetched;  // every prefetch_golden() call's dims (it makes nothing here)
  std::vector<std::vector<Dims>> prefetched_in_background;  // every prefetch_golden_in_background() call's dims
  std::vector<int> prefetched_seeds;                        // each background request's seeds, in order (0: the job's)
  std::vector<std::string> sanitized;     // the library of every sanitizer gate run
  std::vector<bool> sanitizer_saw;        // per sanitize() call given an event to wait for: whether it came
  std::vector<std::string> events;        // hardware(), prepare() and the early golden data's calls, in order
  std::vector<size_t> profiled_after;     // for each profile taken, how many runs (`runs`) came before it
  std::vector<std::string> profiled;      // for each profile taken, its name ("baseline", "champion")
  std::vector<int> run_slots;             // every run's slot (its request's), in the order served
  std::vector<runner::WorkerSpec> slots;  // what use_slots() was given
  // Set before prepare(): the kernel, the job's dims and its own defines (the baseline build's).
  std::filesystem::path kernel;
  Dims dims;
  Defines job_defines;

 private:
  std::vector<double> samples(const std::string& lib, double true_ms, int n);
  void write_library(const std::filesystem::path& lib, const Defines& d) const;
  ModelLabOptions o_;
  int profile_calls_ = 0;
  std::mutex mu_;  // the loop measures on several slots at once and compiles on a thread
  std::condition_variable event_cv_;  // an event was recorded by run() (sanitizer_waits_for)
  size_t sanitize_calls_ = 0;
  std::map<std::string, Defines> libs_;  // library path -> the defines it was built with
  std::map<std::string, int> calls_;     // per library: samples drawn so far (the noise's sequence)
  std::map<std::string, Dims> golden_dims_;  // golden directory -> its dims
  std::optional<double> truth(const Defines& d, const std::filesystem::path& golden_dir) const;
  // A wrong configuration's status and message: unwritten_output with the runner's message, or wrong_result.
  std::pair<runner::RunStatus, std::string> wrong_outcome(const Defines& d) const;
  // A per-shape dispatcher's library: the configuration's library its rule picks at the golden data's dims; others: itself.
  std::filesystem::path played_library(const std::filesystem::path& lib, const std::filesystem::path& golden_dir) const;
  std::map<std::string, util::Json> dispatchers_;  // dispatcher library -> its dispatch.json
  util::Json manifest(const Dims& dims) const;
};

}  // namespace kopt::loop
