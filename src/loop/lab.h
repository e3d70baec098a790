#pragma once
// Everything the optimize loop asks of the world outside its own logic: the hardware gate, golden data and the
// baseline build, the device ceilings, compiling, SASS analysis, measuring (the runner) and profiling. The loop
// (optimizer.h) is plain code over this interface: SystemLab does the real work through a util::CommandRunner,
// and a test lab answers from a model of the kernel, so the whole loop runs without a GPU.
#include <filesystem>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compile/pool.h"
#include "contract/golden_maker.h"
#include "contract/golden_stream.h"
#include "core/result.h"
#include "device/gpu_info.h"
#include "pipeline/prepare.h"
#include "profile/profiler.h"
#include "roofline/ceilings.h"
#include "runner/launch.h"
#include "runner/worker.h"
#include "sanitize/sanitizer.h"
#include "sass/analysis.h"
#include "search/candidate.h"
#include "util/json_io.h"
#include "util/process.h"

namespace kopt::loop {

struct HardwareGate {
  bool passed = false;
  std::vector<std::string> failed_required;  // the checks that failed the gate
  util::Json report;                         // doctor's report (env.json, gates/hardware.json)
  device::GpuInfo gpu;                       // the device the run uses (when passed): the first listed
  std::vector<device::GpuInfo> gpus;         // every GPU the driver lists (--gpus chooses among them)
  util::MetaInfo meta;                       // versions every JSON's meta block carries from here on
};

// A check of the hardware gate's that the lab left to run beside the baseline's first checks (the counters probe:
// SystemLab::hardware), as the doctor's report lists it, and whether it fails the gate.
struct DeferredHardwareCheck {
  std::string name;
  bool fails_gate = false;
  util::Json check;  // doctor::to_json(Check)
};

// Golden data wanted at other dims than the job's, into `dir`: a case of the workload matrix or the sanitizer's small
// case (the job's seeds), a held-out shape (kHoldoutSeeds).
struct GoldenWant {
  Dims dims;
  std::filesystem::path dir;
  int seeds = 0;  // 0: the job's (--seeds)
};
// The held-out shapes' seeds (issue 36: "the least work that still catches a tile-multiple-only kernel"): a kernel
// right only at multiples of its tile is wrong at tile_plus_one on any data, so one seed catches it, as three did; the
// sealed seed comes with it as with every golden data. Made after the search, it was what the end waited for.
inline constexpr int kHoldoutSeeds = 1;

class Lab {
 public:
  virtual ~Lab() = default;
  virtual HardwareGate hardware() = 0;
  // What hardware() left running beside the baseline's first checks, waited for (the loop asks before anything is
  // timed or profiled); nullopt where it left nothing.
  virtual std::optional<DeferredHardwareCheck> deferred_hardware_check() { return std::nullopt; }
  // Golden data into run_dir/golden and the baseline build into run_dir/build (or, resuming, what is there).
  virtual Result<pipeline::Prepared> prepare(const std::filesystem::path& run_dir, bool resuming, const pipeline::Say& say) = 0;
  virtual Result<roofline::Ceilings> ceilings(const device::GpuInfo& gpu) = 0;
  virtual std::vector<compile::CompileResult> compile(const std::vector<compile::CompileRequest>& requests, int jobs,
                                                      const compile::ProgressFn& progress) = 0;
  // The kernels' instruction mix and each claimed method's SASS verification (cuobjdump). `kernels`: the
  // functions to analyse (CUDA: those defined in the candidate's source); empty: every function (Triton cubins).
  virtual sass::Analysis analyze_sass(const std::vector<std::filesystem::path>& binaries,
                                      const std::vector<std::string>& kernels) = 0;
  // One measuring run (check, time, paired or profile mode).
  virtual runner::RunOutcome run(const runner::RunRequest& request) = 0;
  virtual Result<profile::ProfileResult> profile(const profile::ProfileRequest& request, profile::ProfilePlan& plan, int top_n) = 0;
  // Golden data at other dims than the job's into `out_dir` (no reference timing): the cases of the workload matrix,
  // the sanitizer's small case, the held-out shapes (issue 18). The manifest back; errors as prepare()'s.
  virtual Result<util::Json> golden(const GoldenWant& want) = 0;
  // The same for several dims at once, made ahead so that golden() finds them ready (the real lab: one harness
  // process for all, into the golden cache; issue 36). Only a saving: golden() still makes what this did not.
  virtual void prefetch_golden(const std::vector<GoldenWant>& requests) { (void)requests; }
  // prefetch_golden(requests), begun in the background beside work that times nothing (the final champion's checks),
  // after what was begun before it (begin_ephemeral_seed); returns at once. The real lab waits for it before anything
  // it times or profiles, and before any other golden data (wait_golden_prefetch). The default: made now.
  virtual void prefetch_golden_in_background(const std::vector<GoldenWant>& requests) { prefetch_golden(requests); }
  virtual void wait_golden_prefetch() {}
  // Begins, in the background and before the run directory exists, what the gates will need and that disturbs no
  // timing: the job's own golden data (prepare()'s, its reference timing included; the real lab: a harness kept open
  // for the run, into the golden cache) and the ceilings probe's build (issue 36). Only a saving: prepare() and
  // ceilings() do what this did not. Returns at once. `instrumented_source`: a derived space's annotated copy of the
  // kernel (what prepare() will build, pipeline::with_instrumented_copy), else nullopt: the kernel itself.
  virtual void start_early_work(const std::optional<std::string>& instrumented_source) { (void)instrumented_source; }
  // Nothing more is wanted (a gate failed before prepare()): what start_early_work began is ended.
  virtual void stop_early_work() {}
  // The ephemeral seed (contract/ephemeral_seed.h) of the golden data at `dims` (the primary case's), made by the
  // run's harness after the search, never written to any file: the final champion's last check. Made now, or taken
  // from begin_ephemeral_seed(dims). An error says why there is none (the check is then recorded as not run). The
  // default: none.
  virtual Result<contract::EphemeralSeedPtr> ephemeral_seed(const Dims& dims) {
    (void)dims;
    return input_error("this lab makes no ephemeral seed");
  }
  // The search is over: the ephemeral seed at `dims` begun now in the background, first in the harness's queue (the
  // final champion's check waits for it; the held-out shapes' golden data, asked for next, only before their timings),
  // beside the final champion's determinism and sanitizer checks, which time nothing. Returns at once; ephemeral_seed
  // (dims) takes it. Only a saving: ephemeral_seed() makes it where this did not. The default: nothing.
  virtual void begin_ephemeral_seed(const Dims& dims) { (void)dims; }
  // The sanitizer gate on one measuring child (sanitize/sanitizer.h run_gate: every tool through the runner).
  virtual sanitize::Verdict sanitize(const sanitize::Request& request) = 0;
  // The job changed before prepare() (a derived space: the kernel is the run directory's instrumented copy).
  virtual void use_job(const pipeline::KernelJob& job) { (void)job; }
  // The run's measuring slots (issue 21), one worker each, after hardware() and before prepare(); a request's
  // `slot` picks one. Never called: one slot on the first GPU (today's path).
  virtual void use_slots(const std::vector<runner::WorkerSpec>& slots) { (void)slots; }
  // Where Nsight Compute profiles are kept across runs (Optimizer::profile; docs/PROFILING.md "The profile
  // cache"); nullopt: none (the default: a model's profiles are free).
  virtual std::optional<std::filesystem::path> profile_cache_dir() const { return std::nullopt; }
  // Where evidence of one kind ("sanitizer": sanitize/verdict_cache.h; "holdout": the held-out shapes' runs) is kept
  // across runs (util/keyed_store.h; docs/GATES.md "Evidence kept across runs"); nullopt: none (the default: every
  // gate and check runs).
  virtual std::optional<std::filesystem::path> evidence_cache_dir(const std::string& kind) const {
    (void)kind;
    return std::nullopt;
  }
};

// The real lab: doctor, the Python golden-data maker, the ceilings cache and probe, nvcc, cuobjdump, the runner
// child and Nsight Compute, every process through `runner`.
class SystemLab final : public Lab {
 public:
  SystemLab(pipeline::KernelJob job, util::CommandRunner& runner) : job_(std::move(job)), runner_(runner) {}
  void use_job(const pipeline::KernelJob& job) override { job_ = job; }
  // util::kopt_cache_dir("profiles"); KOPT_PROFILE_CACHE=off: none.
  std::optional<std::filesystem::path> profile_cache_dir() const override;
  // util::kopt_cache_dir("evidence/KIND"); KOPT_EVIDENCE_CACHE=off: none.
  std::optional<std::filesystem::path> evidence_cache_dir(const std::string& kind) const override;
  HardwareGate hardware() override;  // the counters probe left to run on a thread (deferred_hardware_check)
  std::optional<DeferredHardwareCheck> deferred_hardware_check() override;
  Result<pipeline::Prepared> prepare(const std::filesystem::path& run_dir, bool resuming, const pipeline::Say& say) override;
  Result<roofline::Ceilings> ceilings(const device::GpuInfo& gpu) override;
  std::vector<compile::CompileResult> compile(const std::vector<compile::CompileRequest>& requests, int jobs,
                                              const compile::ProgressFn& progress) override;
  sass::Analysis analyze_sass(const std::vector<std::filesystem::path>& binaries,
                              const std::vector<std::string>& kernels) override;
  runner::RunOutcome run(const runner::RunRequest& request) override;
  Result<profile::ProfileResult> profile(const profile::ProfileRequest& request, profile::ProfilePlan& plan, int top_n) override;
  Result<util::Json> golden(const GoldenWant& want) override;
  void prefetch_golden(const std::vector<GoldenWant>& requests) override;
  void prefetch_golden_in_background(const std::vector<GoldenWant>& requests) override;
  void wait_golden_prefetch() override;
  void start_early_work(const std::optional<std::string>& instrumented_source) override;
  void stop_early_work() override;
  sanitize::Verdict sanitize(const sanitize::Request& request) override;
  // Through the run's golden-data harness (started idle beside the gates where the golden data was cached); when it
  // has none (it could not start, or it ended), one started now: the search is over, so its start and the reference
  // call disturb no timing. begin_ephemeral_seed: the same on the background thread, before the held-out shapes'
  // golden data; ephemeral_seed() then waits for the seed alone, and makes it the old way if that found no harness.
  Result<contract::EphemeralSeedPtr> ephemeral_seed(const Dims& dims) override;
  void begin_ephemeral_seed(const Dims& dims) override;
  // The run's golden-data harness (nullptr: none now), for tests: how it started and what it was asked.
  const contract::GoldenStream* golden_stream() const { return stream_.get(); }
  void use_slots(const std::vector<runner::WorkerSpec>& slots) override;
  ~SystemLab() override;

 private:
  // golden()'s request to the golden-data maker (the job's ref.py, `seeds` (0: the job's), no reference timing, the
  // golden cache).
  Result<contract::GoldenRequest> golden_request(const Dims& dims, const std::filesystem::path& out_dir, int seeds = 0);
  const std::filesystem::path& staging();  // staging_, made on first use
  void prefetch_now(const std::vector<GoldenWant>& requests);  // prefetch_golden's work
  // The ephemeral seed made now through stream_ (started first when it is not running): ephemeral_seed's work.
  Result<contract::EphemeralSeedPtr> make_ephemeral_now(const Dims& dims);
  pipeline::KernelJob job_;
  util::CommandRunner& runner_;
  std::vector<runner::WorkerSpec> slots_ = {runner::WorkerSpec{}};
  // One per slot: serves every check, time and paired run of CUDA/CUTLASS libraries on its GPU once the golden
  // data exists (prepare()).
  std::vector<std::unique_ptr<runner::MeasuringWorker>> workers_;
  // The run's golden-data harness (contract/golden_stream.h), its staging folder under the cache (the job's own data
  // before the run directory exists; removed with the lab), the early request's thread and the probe's build.
  std::unique_ptr<contract::GoldenStream> stream_;
  std::filesystem::path staging_, run_dir_;
  std::future<void> early_, probe_build_;
  std::future<DeferredHardwareCheck> counters_;  // the hardware gate's counters probe, beside the baseline's checks
  // The ceilings measured at the run's start (measure_ceilings_first), before anything of the run touches the GPU;
  // ceilings() returns them for that GPU. prepare() and the early golden request wait for it.
  void measure_ceilings_first();
  std::shared_future<void> early_ceilings_;  // waited for by the early request's thread and the main thread
  std::optional<Result<roofline::Ceilings>> first_ceilings_;
  std::string first_ceilings_uuid_;
  // The baseline's build, made beside the hardware gate into the build cache (CUDA and CUTLASS kernels): prepare()
  // then takes it from the cache and reports its nvcc time (pipeline::prepare's early_build).
  std::future<compile::CompileResult> early_build_;
  // The background work after the search, each task after the one before (begin_ephemeral_seed's, then
  // prefetch_golden_in_background's; on stream_ where it lives): joined by wait_golden_prefetch(), which every call
  // that times, profiles or makes golden data (or could replace stream_) makes first.
  std::future<void> background_;
  // begin_ephemeral_seed's seed and its dims, set by its task (the seed is held in memory only, as ephemeral_seed's;
  // one never asked for is dropped with the lab).
  std::future<Result<contract::EphemeralSeedPtr>> early_seed_;
  Dims early_seed_dims_;
};

}  // namespace kopt::loop
