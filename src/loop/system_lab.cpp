#include <unistd.h>

#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "compile/pool.h"
#include "contract/golden_maker.h"
#include "contract/sealed_seed.h"
#include "device/gpu_info.h"
#include "doctor/doctor.h"
#include "loop/lab.h"
#include "pipeline/triton.h"
#include "profile/query_metrics.h"
#include "roofline/measure.h"
#include "sass/binaries.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/strings.h"

namespace kopt::loop {

namespace fs = std::filesystem;

HardwareGate SystemLab::hardware() {
  doctor::Options opts;  // the gate's lighter doctor (doctor.h): metadata for Python, a counters pass kept this boot
  opts.import_python_modules = false;
  opts.reuse_counter_check = true;
  // The counters probe (ncu on a one-block kernel, after the ceilings measured first: 1.6-2.8 s, H100 s33-s34) on a
  // thread: the gate's other checks answer now, and the loop waits for it before the baseline's timing (issue 36).
  opts.defer_ncu_counters = true;
  auto rep = doctor::run_doctor(opts);
  if (!rep.gpus.empty() && !counters_.valid())
    counters_ = std::async(std::launch::async, [rep, opts] {
      doctor::Check c = doctor::counters_check(rep, opts);
      return DeferredHardwareCheck{c.name, doctor::fails_gate(c), doctor::to_json(c)};
    });
  HardwareGate g;
  g.passed = rep.passed();
  g.failed_required = rep.failed_required();
  g.report = doctor::to_json(rep);
  if (!rep.gpus.empty()) g.gpu = rep.gpus.front();
  g.gpus = rep.gpus;
  g.meta = doctor::meta_of(rep);
  return g;
}

std::optional<DeferredHardwareCheck> SystemLab::deferred_hardware_check() {
  if (!counters_.valid()) return std::nullopt;
  return counters_.get();
}

SystemLab::~SystemLab() {
  if (counters_.valid()) counters_.wait();
  wait_golden_prefetch();
  stop_early_work();
  if (stream_ && !run_dir_.empty()) {  // the harness's stderr beside the run's other logs
    std::error_code ec;
    fs::copy_file(staging_ / "golden_stream.log", run_dir_ / "golden_stream.log", fs::copy_options::overwrite_existing, ec);
  }
  stream_.reset();
  if (!staging_.empty()) {
    std::error_code ec;
    fs::remove_all(staging_, ec);
  }
}

void SystemLab::measure_ceilings_first() {
  // One GPU only: where there are several, the slot measured on is chosen after the hardware gate.
  auto gpus = device::query_gpus();
  if (!gpus || gpus->gpus.size() != 1) return;
  const device::GpuInfo& gpu = gpus->gpus.front();
  roofline::CeilingsOptions copts;
  copts.cuda_driver_fallback = gpus->driver_version_text();
  copts.prebuilt_dir = roofline::default_prebuilt_probe_dir();
  // A probe that needs nvcc first (3-5 s) is not worth it: the harness's imports end before it would.
  if (roofline::ceilings_cached(gpu, copts) || !roofline::ready_probe(gpu, copts)) return;
  std::lock_guard<std::mutex> lease(util::gpu_lease());
  first_ceilings_ = roofline::get_ceilings(gpu, false, copts);
  first_ceilings_uuid_ = gpu.uuid;
}

void SystemLab::start_early_work(const std::optional<std::string>& instrumented_source) {
  if (stream_ || early_.valid()) return;
  // The ceilings, when this GPU's are not cached (a new machine, a new driver): measured now, first, with the GPU to
  // themselves (3 s, H200), while Python imports torch for the golden data and nvcc builds the baseline. Nothing of
  // the run touches the GPU before they end: the harness below makes no CUDA call until its first request, which
  // waits for them; prepare(), the first GPU work of the main thread, waits for them; the doctor's counters probe
  // takes the same lease (util::gpu_lease). They came after the cases' golden data before (H200: 3.1 s of sgemm
  // 4096^3's 20 s of gates, issue 36).
  early_ceilings_ = std::async(std::launch::async, [this] { measure_ceilings_first(); }).share();
  // The baseline's build (nvcc: about 1 s for a plain kernel, 9-10 s with CUTLASS or FlashInfer's headers, H200
  // machine 2026-12-04), into the build cache while the gate runs; prepare() finds it there. A derived space's copy is
  // built as the run will build it (the same text, the same -I: the same cache key), from the staging folder.
  if (!pipeline::is_triton_kernel(job_.kernel) && !early_build_.valid()) {
    const fs::path copy = staging() / "derived" / job_.kernel.filename();
    const bool ready = !instrumented_source || util::write_file_atomic(copy, *instrumented_source).ok();
    const pipeline::KernelJob job = instrumented_source ? pipeline::with_instrumented_copy(job_, copy) : job_;
    if (ready)  // the request made here: staging() is not for two threads to make
      early_build_ = std::async(std::launch::async, [this, req = pipeline::compile_request(job, "kernel", job.kernel, staging() / "build")] {
        return compile::compile_batch({req}, {1, ""}, runner_).front();
      });
  }
  // The ceilings probe's build (nvcc, 3-4 s cold; a cached build returns at once): ceilings() finds it. Then ncu's outputs.
  probe_build_ = std::async(std::launch::async, [this] {
    early_ceilings_.wait();  // no probe written into the cache while the ceilings first look for one there
    auto gpus = device::query_gpus();
    const std::string nvcc = toolchain::find_nvcc();
    if (!gpus || gpus->gpus.empty() || nvcc.empty()) return;
    std::vector<std::string> warnings;
    roofline::CeilingsOptions defaults;
    const std::string arch = gpus->gpus.front().arch();
    if (!roofline::prebuilt_probe(roofline::default_prebuilt_probe_dir(), arch))
      (void)roofline::build_probe(runner_, nvcc, arch, roofline::default_ceilings_cache_dir() / "probe", defaults.build_timeout_s,
                                  warnings);
    // What the first profile asks ncu first (its version, the chip's metrics: 1.5 s, H200), now: it reads no GPU.
    profile::ProfileRequest known;
    known.ncu_path = toolchain::find_ncu();
    known.chip = profile::chip_for_compute_capability(gpus->gpus.front().cc_major, gpus->gpus.front().cc_minor);
    profile::add_known_ncu_outputs(known);
  });
  auto cache = contract::golden_cache_from_env();
  if (!cache || !*cache) return;  // no golden cache: nothing made early could be found; prepare() makes it
  auto req = golden_request(job_.dims, staging() / "golden");
  if (!req) return;
  req->time_reference = true;  // what prepare() asks, so that its cache key is this one's
  // Already in the cache (a warm run): the harness starts all the same, idle (`--preload imports`: torch imported, no
  // CUDA call, nothing on any GPU; cli.py _preload), so that the end of the run (the ephemeral seed, the held-out
  // shapes' data) does not wait 3-5 s for Python and torch. No request comes while anything is timed: a case the cache
  // lacks is made before the first candidate, the end's requests once the search is over (docs/GATES.md "The gates'
  // early work"). A cold run's harness makes the job's data before the gates: its request is sent once the ceilings
  // measured first are done (at once when there are none), and the harness reads it after its imports, as it did
  // after `--preload cuda` before.
  const bool cached = contract::golden_batch({*req}).todo.empty();
  auto s = contract::GoldenStream::start(staging_ / "golden_stream.log", contract::HarnessPreload::kImports);
  if (!s) return;  // prepare() and the batches run the harness as before
  stream_ = std::move(s).value();
  if (cached) return;
  early_ = std::async(std::launch::async, [this, r = std::move(req).value()]() mutable {
    early_ceilings_.wait();
    stream_->prefetch({std::move(r)});
  });
}

void SystemLab::stop_early_work() {
  if (stream_ && early_.valid()) stream_->abort();  // a request in flight ends with its process
  if (early_.valid()) early_.get();
  if (early_ceilings_.valid()) early_ceilings_.wait();
  if (probe_build_.valid()) probe_build_.get();
  if (early_build_.valid()) early_build_.get();
}

Result<pipeline::Prepared> SystemLab::prepare(const fs::path& run_dir, bool resuming, const pipeline::Say& say) {
  const auto& job = job_;
  run_dir_ = run_dir;
  if (early_ceilings_.valid()) early_ceilings_.wait();  // the ceilings measured first: nothing beside them
  workers_.clear();
  for (size_t i = 0; i < slots_.size(); ++i) {
    workers_.push_back(std::make_unique<runner::MeasuringWorker>(
        run_dir / (i == 0 ? std::string("worker.log") : "worker_" + std::to_string(i) + ".log"), "", slots_[i]));
    // Started now, its CUDA context and pinned staging made while the harness makes the job's golden data (neither
    // times anything): the baseline's check, its first request, no longer waits for them (issue 36). One that does
    // not start is started again by that request, which then says why. A Triton kernel's runs are one-shot children.
    if (!pipeline::is_triton_kernel(job.kernel)) (void)workers_.back()->start();
  }
  if (early_.valid()) {
    early_.get();  // the job's golden data is in the cache now, unless it failed there (make_golden says why)
    std::error_code ec;
    fs::remove_all(staging_ / "golden", ec);
  }
  if (resuming && !pipeline::is_triton_kernel(job.kernel) && fs::exists(run_dir / "golden" / "manifest.json")) {
    pipeline::Prepared p;
    KOPT_TRY_ASSIGN(p.source_text, util::read_file(job.kernel));
    KOPT_TRY_ASSIGN(p.signature, contract::parse_solve_signature(p.source_text, job.kernel.string()));
    KOPT_TRY_ASSIGN(p.manifest, util::read_json(run_dir / "golden" / "manifest.json"));
    p.golden_dir = run_dir / "golden";
    p.sizes_guessed = p.manifest.value("sizes_guessed", false);
    p.tol = pipeline::resolve_tolerance(p.manifest, job.numerics, job.atol, job.rtol, &p.tol_source);
    for (const auto& b : p.manifest.value("buffers", util::Json::array())) p.buffer_dtypes.push_back(b.value("dtype", ""));
    auto builds = compile::compile_batch({pipeline::compile_request(job, "baseline", job.kernel, run_dir / "build")}, {1, ""}, runner_);
    p.build = builds.front();
    if (!p.build.ok()) return input_error("the kernel no longer compiles: " + p.build.log_text);
    say("resumed: golden data reused from " + p.golden_dir.string());
    return p;
  }
  std::optional<compile::CompileResult> early_build;
  if (early_build_.valid()) early_build = early_build_.get();
  return pipeline::prepare(job, run_dir, runner_, true, say, false, early_build ? &*early_build : nullptr);
}

Result<roofline::Ceilings> SystemLab::ceilings(const device::GpuInfo& gpu) {
  wait_golden_prefetch();
  if (early_ceilings_.valid()) early_ceilings_.wait();
  if (first_ceilings_ && gpu.uuid == first_ceilings_uuid_) return *first_ceilings_;  // measured first (or failed so)
  if (probe_build_.valid()) probe_build_.get();
  roofline::CeilingsOptions copts;
  copts.cuda_driver_fallback = util::meta_info().driver;
  copts.prebuilt_dir = roofline::default_prebuilt_probe_dir();
  std::lock_guard<std::mutex> lease(util::gpu_lease());  // not beside the hardware gate's counters probe
  return roofline::get_ceilings(gpu, false, copts);
}

std::vector<compile::CompileResult> SystemLab::compile(const std::vector<compile::CompileRequest>& requests, int jobs,
                                                       const compile::ProgressFn& progress) {
  return compile::compile_batch(requests, {jobs, ""}, runner_, progress);
}

sass::Analysis SystemLab::analyze_sass(const std::vector<fs::path>& binaries, const std::vector<std::string>& kernels) {
  if (kernels.empty()) return sass::analyze_binaries(binaries, {}, "", runner_);
  return sass::analyze(binaries.front(), kernels, "", runner_);
}

runner::RunOutcome SystemLab::run(const runner::RunRequest& request) {
  if (request.mode != runner::RunMode::kCheck && request.mode != runner::RunMode::kCompile) wait_golden_prefetch();
  const size_t slot = request.slot > 0 && static_cast<size_t>(request.slot) < slots_.size() ? static_cast<size_t>(request.slot) : 0;
  if (slot < workers_.size() && runner::MeasuringWorker::serves(request)) return workers_[slot]->run(request);
  if (slots_[slot].env.empty()) return runner::run_candidate(request, runner_);
  auto on_slot = request;  // a one-shot child (Triton, a profile) on the slot's GPU
  for (const auto& [k, v] : slots_[slot].env) on_slot.env.emplace(k, v);
  return runner::run_candidate(on_slot, runner_);
}

void SystemLab::use_slots(const std::vector<runner::WorkerSpec>& slots) {
  if (slots.empty()) return;
  slots_ = slots;
  // Everything else a run starts (golden data, the sanitizer, Nsight Compute, the ceilings probe) runs on the first
  // slot's GPU: kopt's own environment says which, when it is not the first visible one.
  if (auto it = slots_.front().env.find("CUDA_VISIBLE_DEVICES"); it != slots_.front().env.end())
    ::setenv("CUDA_VISIBLE_DEVICES", it->second.c_str(), 1);
}

std::optional<fs::path> SystemLab::profile_cache_dir() const {
  if (util::env_off("KOPT_PROFILE_CACHE")) return std::nullopt;
  return util::kopt_cache_dir("profiles");
}

std::optional<fs::path> SystemLab::evidence_cache_dir(const std::string& kind) const {
  if (util::env_off("KOPT_EVIDENCE_CACHE")) return std::nullopt;
  return util::kopt_cache_dir("evidence") / kind;
}

Result<profile::ProfileResult> SystemLab::profile(const profile::ProfileRequest& request, profile::ProfilePlan& plan, int top_n) {
  wait_golden_prefetch();
  profile::ProfileRequest req = request;
  profile::add_known_ncu_outputs(req);  // ncu's version and the chip's metrics, kept since the early work (or now)
  return profile::profile_call(req, plan, runner_, top_n);
}

Result<contract::GoldenRequest> SystemLab::golden_request(const Dims& dims, const fs::path& out_dir, int seeds) {
  contract::GoldenRequest g;
  g.ref_py = job_.ref;
  g.dims = dims;
  g.seeds = seeds > 0 ? seeds : job_.seeds;
  g.out_dir = out_dir;
  g.ptr_size = job_.ptr_size;
  g.time_reference = false;
  KOPT_TRY_ASSIGN(g.cache, contract::golden_cache_from_env());
  if (pipeline::is_triton_kernel(job_.kernel)) {
    g.triton_kernel = pipeline::golden_source(job_);
  } else {
    KOPT_TRY_ASSIGN(auto text, util::read_file(job_.kernel));
    KOPT_TRY_ASSIGN(g.signature, contract::parse_solve_signature(text, job_.kernel.string()));
  }
  return g;
}

const fs::path& SystemLab::staging() {
  if (staging_.empty()) {
    staging_ = util::kopt_cache_dir("golden_staging") / fmt::format("{}_{}", ::getpid(), contract::new_sealed_token());
    std::error_code ec;
    fs::create_directories(staging_, ec);
  }
  return staging_;
}

Result<contract::EphemeralSeedPtr> SystemLab::ephemeral_seed(const Dims& dims) {
  if (early_seed_.valid()) {
    auto begun = early_seed_.get();  // waits for the seed only, not for the golden data queued after it
    // As it came, but where it found no harness (none could start, or it ended) and the run goes on: then the old way
    // below, a harness started now. The harness's own refusal (kInput) would only be repeated.
    if (early_seed_dims_ == dims && (begun || begun.error().code == ExitCode::kInput || util::interrupted())) return begun;
  }
  wait_golden_prefetch();  // the stream's own (it may be replaced below)
  return make_ephemeral_now(dims);
}

Result<contract::EphemeralSeedPtr> SystemLab::make_ephemeral_now(const Dims& dims) {
  if (early_.valid()) early_.get();
  KOPT_TRY_ASSIGN(auto req, golden_request(dims, staging() / "ephemeral"));
  // The run's harness, else one started now (a request follows at once: CUDA at its start). One found ended by this
  // request (it could not start early, or died since: GoldenStream closes it) is replaced once.
  for (int attempt = 0;; ++attempt) {
    if (!stream_ || !stream_->alive()) {
      stream_.reset();
      KOPT_TRY_ASSIGN(stream_, contract::GoldenStream::start(staging() / "golden_stream.log"));
    }
    auto seed = stream_->make_ephemeral(req);
    if (seed || attempt > 0 || stream_->alive() || util::interrupted()) return seed;
  }
}

void SystemLab::begin_ephemeral_seed(const Dims& dims) {
  if (early_seed_.valid()) return;
  auto made = std::make_shared<std::promise<Result<contract::EphemeralSeedPtr>>>();
  early_seed_ = made->get_future();
  early_seed_dims_ = dims;
  background_ = std::async(std::launch::async, [this, before = std::move(background_), made, dims]() mutable {
    if (before.valid()) before.get();
    made->set_value(make_ephemeral_now(dims));
  });
}

Result<util::Json> SystemLab::golden(const GoldenWant& want) {
  wait_golden_prefetch();
  KOPT_TRY_ASSIGN(auto g, golden_request(want.dims, want.dir, want.seeds));
  return contract::make_golden(g, runner_);
}

void SystemLab::prefetch_golden_in_background(const std::vector<GoldenWant>& requests) {
  // After what was begun before it (the ephemeral seed), on the same thread's turn: the caller does not wait for it.
  background_ = std::async(std::launch::async, [this, before = std::move(background_), requests]() mutable {
    if (before.valid()) before.get();
    prefetch_now(requests);
  });
}

void SystemLab::wait_golden_prefetch() {
  if (background_.valid()) background_.get();
}

void SystemLab::prefetch_golden(const std::vector<GoldenWant>& requests) {
  wait_golden_prefetch();
  prefetch_now(requests);
}

void SystemLab::prefetch_now(const std::vector<GoldenWant>& requests) {
  std::vector<contract::GoldenRequest> all;
  for (const auto& w : requests)
    if (auto g = golden_request(w.dims, w.dir, w.seeds)) all.push_back(std::move(g).value());
  // What it did not make, golden() makes and reports. The run's stream when there is one (no new Python).
  if (stream_ && stream_->alive()) (void)stream_->prefetch(std::move(all));
  else (void)contract::prefetch_golden(std::move(all), runner_);
}

sanitize::Verdict SystemLab::sanitize(const sanitize::Request& request) {
  // compute-sanitizer wraps a one-shot child: the long-lived worker is not the process it must watch.
  // Its tools run at once (SystemRunner is thread-safe; nothing is timed meanwhile).
  sanitize::Request req = request;
  req.concurrent = true;
  return sanitize::run_gate(req, runner_);
}

}  // namespace kopt::loop
