#include "runner/child.h"

#include <dlfcn.h>
#include <ffi.h>
#include <unistd.h>

#include <functional>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>
#include <span>
#include <thread>
#include <tuple>

#include "device/cuda_driver.h"
#include "runner/compare.h"
#include "runner/device_golden.h"
#include "runner/fatal.h"
#include "runner/fresh_inputs.h"
#include "runner/golden.h"
#include "runner/golden_store.h"
#include "runner/launch.h"
#include "runner/outcome.h"
#include "runner/paired.h"
#include "runner/race.h"
#include "runner/sealed.h"
#include "runner/shared_buffer.h"
#include "runner/smem_fill.h"
#include "runner/stats.h"
#include "runner/threads.h"
#include "runner/timer.h"
#include "runner/timing_method.h"
#include "util/fs.h"
#include "util/memfd.h"

namespace kopt::runner {

namespace {

using contract::DType;
using contract::ParamKind;
using device::DriverApi;

struct Options {
  std::vector<std::string> libs;
  std::string golden;
  std::string out;
  RunMode mode = RunMode::kCheck;  // check | time | paired | profile (compile is the Triton child's alone)
  double atol = -1, rtol = -1;
  double max_time_s = 5;
  int min_samples = 10;
  int max_samples = 2000;
  double target_ci = 0.01;
  int rounds = 40;
  bool race = false;         // paired: stop once the last library is ranked against the first (runner/race.h)
  bool checked_first = false;  // paired: the first library passed this run's checks on this golden data already
  int seed_for_timing = -1;  // default: the first seed
  L2Mode l2 = L2Mode::kCold;           // cold | warm (runner/timing_method.h)
  std::optional<TimingMethod> timing_method;  // a method to force (tests, side-by-side comparisons); nullopt: auto
  std::string dump_outputs;  // check mode: the first seed's outputs as a safetensors file (the determinism check)
  std::string smem_fill;     // check mode: fill shared memory with this 32-bit pattern before each call (smem_fill.h)
  int max_seeds = 0;         // check mode: only the first N seeds (0: every seed); the sanitizer gate's runs use 1
  // The ephemeral seed's memfd, inherited (contract/ephemeral_seed.h): handed to the judge, which serves it in the
  // sealed seed's place, and closed here before any candidate is loaded. -1: none.
  int ephemeral_fd = -1;
};

// A race decides after 6 rounds at the earliest (runner/race.h): every library's first audit falls in them.
constexpr int kPairedAuditWindow = 6;

// The first check of each library looks at its outputs twice, this far apart (outputs_changed_after_return).
constexpr double kSettleMs = 5;

std::string settle_message(const std::string& second_look) {
  return "the outputs changed after solve() returned and the device was synchronised: right at the first look, not " +
         std::to_string(static_cast<int>(kSettleMs)) + " ms later (" + second_look + ")";
}

// Under a CUDA tool injected into this process (compute-sanitizer, Nsight Compute: CUDA_INJECTION64_PATH), the tool's
// own threads may start during a call: the threads rule is off there (those runs gate nothing on timing; the
// candidate's own check and time runs apply it).
bool thread_rule_applies() {
  static const bool applies = [] {
    const char* v = std::getenv("CUDA_INJECTION64_PATH");
    return !(v && *v);
  }();
  return applies;
}

// KOPT_FRESH_INPUTS=0 times every call on the first seed's inputs, as before 2026-12-03 (for side-by-side comparisons
// with tools that time one input); unset or 1: fresh inputs and audits (runner/fresh_inputs.h).
bool fresh_inputs_enabled() {
  const char* v = std::getenv("KOPT_FRESH_INPUTS");
  return !(v && std::string_view(v) == "0");
}

// The forced method of --timing-method, or nullopt for auto (validated in child_main).
std::optional<TimingMethod> forced_method(const Options& o) { return o.timing_method; }

// What a worker remembers between requests: the probe figures of libraries it may trust (the first library of a
// paired run the loop marked checked: the champion, raced against candidate after candidate). Keyed by the library,
// its file's size and modification time, the golden directory and the timing options.
struct ProbeCache {
  std::map<std::string, ProbeFigures> figures;
  static std::string key(const std::string& lib, const Options& o) {
    std::error_code ec;
    auto size = std::filesystem::file_size(lib, ec);
    auto mtime = std::filesystem::last_write_time(lib, ec).time_since_epoch().count();
    return lib + "|" + std::to_string(size) + "|" + std::to_string(mtime) + "|" + o.golden + "|" + std::string(l2_name(o.l2)) +
           "|" + (o.timing_method ? std::string(method_name(*o.timing_method)) : std::string("auto"));
  }
};

// The judge and the seal of a measuring process (runner/sealed.h), made before any candidate is loaded.
struct Sealing {
  std::unique_ptr<JudgeClient> judge;  // null: no judge (its error in judge_error)
  std::string judge_error;
  SealState seal;
  bool ephemeral = false;  // the judge serves the ephemeral seed in the sealed seed's place (--ephemeral-fd)
  // Where checks on the host download every buffer: pinned, kept for the process's life, and (a memfd) shared with
  // the judge, which reads the sealed seed's outputs there (runner/shared_buffer.h). Never null.
  std::unique_ptr<SharedBuffer> staging;
  util::Json to_json(const Golden& g) const {
    // The ephemeral seed was never on disk: out of reach with its judge alone, Landlock or not.
    const bool out_of_reach = judge && (ephemeral || (seal.sealed && g.sealed.has_value()));
    util::Json j = {{"sealed_seed", g.sealed.has_value()}, {"judge", judge != nullptr}, {"landlock", seal.to_json()},
                    {"out_of_reach", out_of_reach}};
    if (ephemeral) j["ephemeral_seed"] = true;
    if (!out_of_reach)
      j["reason"] = !judge      ? "no judge process: " + judge_error
                    : !g.sealed ? "the golden data has no sealed seed (made by an older kopt, or by hand)"
                                : "the sealed seed is on disk where the candidate could open it: " + seal.off_reason;
    return j;
  }
};

// KOPT_SEAL=off: no judge and no seal (a diagnostic; the results say the answer key was within reach).
bool sealing_enabled() {
  const char* v = std::getenv("KOPT_SEAL");
  return !(v && std::string_view(v) == "off");
}

// Starts the judge, then seals this process away from the sealed seeds. Before any candidate is loaded.
// `ephemeral_fd` >= 0: the judge gets the ephemeral seed's memfd and this process closes its own copy; not dumpable
// while it holds it (no process of the user opens it through /proc/PID/fd). KOPT_SEAL=off turns the seal off, not
// that judge.
Sealing start_sealing(int ephemeral_fd = -1) {
  Sealing s;
  s.ephemeral = ephemeral_fd >= 0;
  if (!sealing_enabled() && !s.ephemeral) {
    s.judge_error = "turned off by KOPT_SEAL=off";
    s.seal.off_reason = s.judge_error;
    s.staging = std::make_unique<SharedBuffer>(false);
    return s;
  }
  const bool was_dumpable = s.ephemeral ? util::set_dumpable(false) : true;
  auto j = JudgeClient::spawn("", ephemeral_fd);
  if (s.ephemeral) {
    ::close(ephemeral_fd);
    if (was_dumpable) util::set_dumpable(true);
  }
  if (j) s.judge = std::move(j).value();
  else s.judge_error = j.error().message;
  if (!sealing_enabled()) {
    s.seal.off_reason = "turned off by KOPT_SEAL=off";
    s.staging = std::make_unique<SharedBuffer>(s.judge != nullptr);
    return s;
  }
  s.staging = std::make_unique<SharedBuffer>(s.judge != nullptr);
  s.seal = seal_away(sealed_root());
  return s;
}

// Pins the staging buffer (and each larger one) where the driver can: a download into pinned memory is a direct
// copy, into pageable memory a copy through the driver's own staging. With a context current.
void pin_staging(const Sealing& s, const DriverApi& api) {
  if (!api.cuMemHostRegister || !api.cuMemHostUnregister) return;
  s.staging->set_pinning({[&api](void* p, size_t n) { return api.cuMemHostRegister(p, n, 0) == CUDA_SUCCESS; },
                          [&api](void* p) { api.cuMemHostUnregister(p); }});
}

class Child {
 public:
  Child(const Options& o, const DriverApi& api, GoldenEntry& golden, ProbeCache& probes, DeviceGolden* resident,
        JudgeClient* judge, SharedBuffer& staging)
      : opt_(o),
        api_(api),
        g_(golden.golden()),
        seeds_(golden),
        probes_(probes),
        resident_(resident),
        judge_(judge),
        staging_(staging) {}
  ~Child() {
    // A worker loads many libraries over its life. One that left threads running stays loaded: unloading it would
    // pull its code from under them (the process ends soon after: run_request says so, the worker restarts).
    for (void* h : handles_)
      if (!left_threads_.count(h)) ::dlclose(h);
  }

  util::Json run();
  bool left_threads() const { return !left_threads_.empty(); }
  // Forgets which libraries passed the sealed seed in this process: the next request checks every library there
  // as a one-shot child would (a warm bench worker's requests, runner/warm.h).
  static void forget_sealed_passes() { sealed_passed().clear(); }

 private:
  struct Lib {
    std::string path;
    std::string identity;  // path, size and modification time when loaded: the sealed seed's pass is keyed by it
    void* handle = nullptr;
    void* solve = nullptr;
    int (*get_last_error)() = nullptr;  // cudaGetLastError from the library's own runtime, when exported
    std::vector<long> load_threads;     // threads loading it started that were still running after a settle delay
  };
  struct Bound {  // one seed's device buffers and argument values
    std::map<std::string, CUdeviceptr> dptr;
    std::map<std::string, const std::vector<unsigned char>*> uploaded;  // inputs (and in-out initial values)
    const contract::TensorMap* tensors = nullptr;  // the seed's golden tensors (the GoldenEntry owns them)
    std::shared_ptr<const ResidentSeed> resident;  // the same on the GPU (runner/device_golden.h), or null
    std::vector<CUdeviceptr> spacers;
    bool sealed = false;  // the sealed seed's inputs: its outputs go to the judge (runner/sealed.h)
    util::Json bind_ms = util::Json::object();  // bind_seed's steps: load, allocate, resident, upload (ms)
  };
  // What a check on the GPU found (verify_on_gpu): everything passed; a difference (examined on the host); it could
  // not check there; the resident golden data changed.
  enum class GpuCheck { kDone, kDiffers, kOnHost, kCorrupted };
  // An audit (runner/fresh_inputs.h) that found wrong outputs: ends the timed series.
  struct AuditFailed {
    RunStatus status;
    std::string message;
  };

  void check(CUresult r, const std::string& what) { check_cuda(api_, r, what); }
  Lib load_lib(const std::string& path);
  Bound bind_seed(int seed, std::mt19937_64& rng);
  // The sealed seed's inputs in new buffers (its expected outputs stay with the judge).
  Bound bind_sealed(std::mt19937_64& rng);
  // Device buffers (each after a spacer of random size) for every pointer, nothing uploaded yet, at an address set
  // no earlier Bound of this process had: the allocator hands freed addresses out again, and a kernel that remembers
  // by pointer would then see "fresh" buffers it has seen (an audit's re-check in fresh buffers relies on them).
  Bound allocate(std::mt19937_64& rng);
  Bound allocate_once(std::mt19937_64& rng);
  bool sealed_available() const { return judge_ && (g_.sealed.has_value() || ephemeral()); }
  // The judge serves the ephemeral seed in the sealed seed's place (--ephemeral-fd): results name it so.
  bool ephemeral() const { return opt_.ephemeral_fd >= 0; }
  const std::map<std::string, std::vector<unsigned char>>& sealed_inputs();
  void free_bound(Bound& b);
  void reset_outputs(Bound& b);
  void call(const Lib& lib, Bound& b);
  util::Json verify(Bound& b, Tolerance tol, RunStatus& status, std::string& message);
  util::Json verify_on_host(Bound& b, Tolerance tol, RunStatus& status, std::string& message);
  // Every pointer buffer of `b` downloaded into the staging buffer, by name (page-aligned, in parameter order).
  std::map<std::string, std::span<unsigned char>> download(Bound& b);
  // The judge's verdict on the sealed seed's outputs (in the staging buffer), folded into status and message; the
  // outputs are then wiped from the staging buffer, which every later candidate of this process can read.
  util::Json judge_sealed(std::map<std::string, std::span<unsigned char>>& outputs, Tolerance tol, RunStatus& status,
                          std::string& message, util::Json& judge_record);
  GpuCheck verify_on_gpu(Bound& b, Tolerance tol, util::Json& out);
  // call() then verify(); when the check on the GPU found the resident golden data changed, the call is made
  // again, from the host's copy, and checked on the host. `before` runs before each call (the shared-memory fill).
  // `settle`: after the check, wait kSettleMs and look at the outputs once more (outputs_changed_after_return);
  // every call is also watched for host threads it leaves running (threads_left_running).
  util::Json call_and_verify(const Lib& lib, Bound& b, Tolerance tol, RunStatus& status, std::string& message,
                             const std::function<void()>& before = {}, bool settle = false);
  // The same device buffers as `b`, seen with another seed's golden data (an audit's inputs and expected outputs).
  Bound view_with_seed(const Bound& b, int seed);
  // The inputs of `b` as InputRotation takes them.
  std::vector<RotatedBuffer> rotated_buffers(const Bound& b) const;
  // An audit's check of the outputs the timed call just wrote into `view`'s buffers; on a failure the same seed is
  // checked again in fresh buffers, which tells a kernel wrong on that seed (its own status) from one whose outputs
  // depended on what it saw before (wrong_on_fresh_inputs). Throws AuditFailed.
  void check_audit(const Lib& lib, Bound& view, Tolerance tol, int sample, std::mt19937_64& rng);
  // Before timed sample `sample`: when the schedule makes it an audit, the held seed's inputs and poisoned outputs
  // in the same buffers (true); otherwise fresh inputs. Synchronous: outside the sample.
  bool before_sample(AuditSchedule& schedule, int sample, std::optional<Bound>& view,
                     std::optional<InputRotation>& rotation) {
    const bool audit = view && schedule.audit(sample);
    if (audit) reset_outputs(*view);
    else if (rotation) rotation->refresh();
    return audit;
  }
  // A library no timed call audited (too few samples or rounds): the held seed once, untimed, in the same buffers.
  void late_audit(const Lib& lib, Bound& b, Bound& view, Tolerance tol, int sample, std::mt19937_64& rng) {
    reset_outputs(view);
    call(lib, b);
    check_audit(lib, view, tol, sample, rng);
  }
  // The audits' seed: the sealed seed where there is one (its inputs are new to the kernel when the first audit shows
  // them, and its expected outputs out of its reach); otherwise the last public one, held back from the checks
  // before timing when there are two or more (with one seed, the audits use it: a kernel that remembers by pointer
  // still fails them).
  // The sealed seed's check is the judge's (every buffer downloaded, the outputs copied and compared on the host by
  // another process: milliseconds to 0.1 s at 16M floats, against a millisecond on the GPU), so a library's audits use it until it has passed there once in this process
  // (a check run's sealed seed or an audit), at this golden data; its later audits use the last public seed, checked
  // on the GPU. What the sealed seed proves (right on inputs whose expected outputs it cannot read) holds for the
  // library from then on; what the later audits catch (outputs that depend on what it saw before) needs no secret.
  int audit_seed() const { return g_.seeds.back(); }
  bool audit_seed_held() const { return g_.seeds.size() >= 2; }
  int seed_id(const Bound& view, int seed) const { return view.sealed ? (ephemeral() ? kEphemeralSeedId : kSealedSeedId) : seed; }
  std::string seed_text(const Bound& view) const {
    return view.sealed ? "the sealed seed" : "seed " + std::to_string(audit_seed());
  }
  // Whether this library's next audit is on the sealed seed (it has not passed there at this golden data yet).
  bool wants_sealed(const Lib& lib) const { return sealed_available() && !sealed_passed().count(sealed_key(lib)); }
  bool all_sealed(const std::vector<Lib>& libs, const std::vector<size_t>& which) const {
    for (size_t k : which)
      if (wants_sealed(libs[k])) return false;
    return true;
  }
  void sealed_pass(const Lib& lib) { sealed_passed().insert(sealed_key(lib)); }
  std::string sealed_key(const Lib& lib) const;
  // Libraries (path, size, modification time) and golden data whose sealed seed passed in this process.
  static std::set<std::string>& sealed_passed() {
    static std::set<std::string> passed;
    return passed;
  }
  // The views an audit uses: the same buffers as `b` with the sealed seed's inputs (where some library of `libs`
  // wants it) and with the last public seed's.
  struct AuditViews {
    std::optional<Bound> sealed, plain;
    std::optional<Bound>& for_lib(const Child& c, const Lib& lib) { return sealed && c.wants_sealed(lib) ? sealed : plain; }
  };
  AuditViews audit_views(const Bound& b, const std::vector<const Lib*>& libs);
  Bound audit_fresh(const Bound& view, std::mt19937_64& rng) { return view.sealed ? bind_sealed(rng) : bind_seed(audit_seed(), rng); }
  void dump_outputs(Bound& b, const std::string& path);
  std::vector<Region> written_regions(const Bound& b) const;
  void time_one(const Lib& lib, Bound& b, Tolerance tol, std::mt19937_64& rng, util::Json& result, RunStatus& status,
                std::string& message);
  void run_paired(Tolerance tol, std::mt19937_64& rng, util::Json& result, RunStatus& status, std::string& message);
  TimerConfig timer_config() const { return {opt_.l2}; }

  const Options& opt_;
  const DriverApi& api_;
  const Golden& g_;
  GoldenEntry& seeds_;
  ProbeCache& probes_;
  DeviceGolden* resident_;  // null: every check on the host
  JudgeClient* judge_;      // null: no sealed seed is checked
  SharedBuffer& staging_;   // the host buffer checks download into (Sealing::staging)
  std::set<std::vector<CUdeviceptr>> used_addresses_;  // every Bound's buffer addresses, in parameter order
  int sealed_audits_ = 0;    // audits on the sealed seed that passed, in this request
  // The first passing audit's check of each kind (check_audit): the held seed's and the sealed seed's records in
  // a time run's "seeds".
  util::Json audit_record_, sealed_audit_record_;
  std::vector<void*> handles_;
  std::set<void*> left_threads_;  // libraries whose calls left threads running (never unloaded)
};

// A result's phases_ms: lap(name) records the milliseconds since the previous lap (or the clock's start) under name.
class PhaseClock {
 public:
  explicit PhaseClock(util::Json& phases) : phases_(phases) {}
  void operator()(const char* name) {
    const auto now = std::chrono::steady_clock::now();
    phases_[name] = std::chrono::duration<double, std::milli>(now - since_).count();
    since_ = now;
  }

 private:
  util::Json& phases_;
  std::chrono::steady_clock::time_point since_ = std::chrono::steady_clock::now();
};

Child::Lib Child::load_lib(const std::string& path) {
  Lib lib;
  lib.path = path;
  {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    const auto mtime = std::filesystem::last_write_time(path, ec).time_since_epoch().count();
    lib.identity = path + '\n' + std::to_string(size) + '\n' + std::to_string(mtime);
  }
  const auto threads_before = live_threads();
  lib.handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  lib.load_threads = still_running(started_since(threads_before, live_threads()), kThreadSettleMs);
  if (!lib.handle) throw Fatal{RunStatus::kLoadError, std::string("cannot load ") + path + ": " + ::dlerror()};
  handles_.push_back(lib.handle);
  lib.solve = ::dlsym(lib.handle, "solve");
  if (!lib.solve) throw Fatal{RunStatus::kLoadError, path + " has no exported solve() (is it extern \"C\"?)"};
  lib.get_last_error = reinterpret_cast<int (*)()>(::dlsym(lib.handle, "cudaGetLastError"));
  return lib;
}

Child::Bound Child::allocate(std::mt19937_64& rng) {
  constexpr int kAttempts = 8;  // then the addresses are taken as they come (the allocator has nothing else free)
  std::vector<Bound> aside;     // address sets seen before, held until a new one is found
  for (int attempt = 1;; ++attempt) {
    Bound b = allocate_once(rng);
    std::vector<CUdeviceptr> addresses;
    for (const auto& p : g_.signature.params)
      if (p.kind == ParamKind::kPointer) addresses.push_back(b.dptr.at(p.name));
    if (used_addresses_.insert(addresses).second || attempt == kAttempts) {
      for (auto& a : aside) free_bound(a);
      return b;
    }
    aside.push_back(std::move(b));
  }
}

Child::Bound Child::allocate_once(std::mt19937_64& rng) {
  Bound b;
  for (const auto& p : g_.signature.params) {
    if (p.kind != ParamKind::kPointer) continue;
    const BufferSpec& spec = g_.buffers.at(p.name);
    // A spacer of random size before each buffer: every seed sees different addresses, so a kernel that
    // caches results by pointer fails.
    CUdeviceptr spacer = 0;
    check(api_.cuMemAlloc(&spacer, 256 * (1 + rng() % 4096)), "cuMemAlloc (spacer)");
    b.spacers.push_back(spacer);
    CUdeviceptr d = 0;
    size_t bytes = static_cast<size_t>(std::max<int64_t>(spec.nbytes, 1));
    check(api_.cuMemAlloc(&d, bytes), "cuMemAlloc " + p.name + " (" + std::to_string(bytes) + " bytes)");
    b.dptr[p.name] = d;
  }
  return b;
}

const std::map<std::string, std::vector<unsigned char>>& Child::sealed_inputs() {
  auto in = judge_->inputs(g_.dir);
  if (!in) throw Fatal{RunStatus::kLoadError, "the sealed seed: " + in.error().message};
  return **in;
}

Child::Bound Child::bind_sealed(std::mt19937_64& rng) {
  const auto& in = sealed_inputs();
  Bound b = allocate(rng);
  b.sealed = true;
  for (const auto& [name, spec] : g_.buffers) {
    if (spec.role == BufferRole::kOutput) continue;
    auto it = in.find(name);
    if (it == in.end() || static_cast<int64_t>(it->second.size()) != spec.nbytes)
      throw Fatal{RunStatus::kLoadError, "the judge's sealed seed lacks input " + name};
    b.uploaded[name] = &it->second;
  }
  reset_outputs(b);
  return b;
}

Child::AuditViews Child::audit_views(const Bound& b, const std::vector<const Lib*>& libs) {
  AuditViews views;
  views.plain = view_with_seed(b, audit_seed());
  bool any = false;
  for (const Lib* lib : libs) any = any || wants_sealed(*lib);
  if (!any) return views;
  Bound v;
  v.dptr = b.dptr;  // the same buffers: a kernel that remembers by pointer sees the pointers it saw before
  v.sealed = true;
  for (const auto& [name, bytes] : sealed_inputs()) v.uploaded[name] = &bytes;
  views.sealed = std::move(v);
  return views;
}

std::string Child::sealed_key(const Lib& lib) const { return lib.identity + '\n' + g_.dir.string(); }

Child::Bound Child::bind_seed(int seed, std::mt19937_64& rng) {
  util::Json steps = util::Json::object();
  PhaseClock lap(steps);
  auto tensors = seeds_.seed(seed);
  if (!tensors) throw Fatal{RunStatus::kLoadError, tensors.error().message};
  lap("load");  // from disk on the seed's first use in this process, else nothing
  Bound b = allocate(rng);
  lap("allocate");
  b.tensors = *tensors;
  if (resident_) b.resident = resident_->get(resident_key(g_.dir, seed), **tensors);
  lap("resident");  // the seed's upload to the GPU's golden store on first use
  for (const auto& p : g_.signature.params) {
    if (p.kind != ParamKind::kPointer) continue;
    const BufferSpec& spec = g_.buffers.at(p.name);
    if (is_read(spec.role)) {
      auto it = b.tensors->find("in." + p.name);
      if (it == b.tensors->end()) throw Fatal{RunStatus::kLoadError, "golden seed " + std::to_string(seed) + " lacks in." + p.name};
      if (static_cast<int64_t>(it->second.data.size()) != spec.nbytes)
        throw Fatal{RunStatus::kLoadError, "golden in." + p.name + " has the wrong size"};
      b.uploaded[p.name] = &it->second.data;
    }
    if (is_written(spec.role)) {
      if (!b.tensors->count("out." + p.name))
        throw Fatal{RunStatus::kLoadError, "golden seed " + std::to_string(seed) + " lacks out." + p.name};
    }
  }
  reset_outputs(b);
  lap("upload");
  b.bind_ms = std::move(steps);
  return b;
}

void Child::reset_outputs(Bound& b) {
  for (const auto& p : g_.signature.params) {
    if (p.kind != ParamKind::kPointer) continue;
    const BufferSpec& spec = g_.buffers.at(p.name);
    auto up = b.uploaded.find(p.name);
    const ResidentTensor* r = nullptr;
    if (b.resident)
      if (auto it = b.resident->tensors.find("in." + p.name); it != b.resident->tensors.end()) r = &it->second;
    if (up != b.uploaded.end() && r) {
      check(api_.cuMemcpyDtoD(b.dptr[p.name], r->ptr, up->second->size()), "copy " + p.name + " from the GPU's golden data");
    } else if (up != b.uploaded.end()) {
      check(api_.cuMemcpyHtoD(b.dptr[p.name], up->second->data(), up->second->size()), "upload " + p.name);
    } else {
      check(api_.cuMemsetD8(b.dptr[p.name], poison_byte(spec.dtype), static_cast<size_t>(spec.nbytes)), "poison " + p.name);
    }
  }
  check(api_.cuCtxSynchronize(), "synchronize after upload");
}

void Child::free_bound(Bound& b) {
  // Outputs are cleared before the memory goes back: a library loaded later in this process may be handed the same
  // memory by an allocation of its own, and the last outputs there may be a right library's on the sealed seed
  // (whose inputs it is given). A memset of each output: microseconds.
  for (auto& [n, d] : b.dptr)
    if (auto it = g_.buffers.find(n); it != g_.buffers.end() && is_written(it->second.role) && it->second.nbytes > 0)
      api_.cuMemsetD8(d, 0, static_cast<size_t>(it->second.nbytes));
  for (auto& [n, d] : b.dptr) api_.cuMemFree(d);
  for (auto d : b.spacers) api_.cuMemFree(d);
  b.dptr.clear();
  b.spacers.clear();
}

void Child::call(const Lib& lib, Bound& b) {
  const auto& params = g_.signature.params;
  std::vector<ffi_type*> types;
  union Value {
    void* p;
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f32;
    double f64;
  };
  std::vector<Value> values(params.size());
  std::vector<void*> args(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& p = params[i];
    Value& v = values[i];
    if (p.kind == ParamKind::kPointer) {
      v.p = reinterpret_cast<void*>(b.dptr[p.name]);
      types.push_back(&ffi_type_pointer);
    } else {
      double x = g_.scalars.at(p.name);
      switch (p.dtype) {
        case DType::kI32: v.i32 = static_cast<int32_t>(x); types.push_back(&ffi_type_sint32); break;
        case DType::kU32: v.u32 = static_cast<uint32_t>(x); types.push_back(&ffi_type_uint32); break;
        case DType::kI64: v.i64 = static_cast<int64_t>(x); types.push_back(&ffi_type_sint64); break;
        case DType::kU64: v.u64 = static_cast<uint64_t>(x); types.push_back(&ffi_type_uint64); break;
        case DType::kF32: v.f32 = static_cast<float>(x); types.push_back(&ffi_type_float); break;
        case DType::kF64: v.f64 = x; types.push_back(&ffi_type_double); break;
        default: throw Fatal{RunStatus::kLoadError, "unsupported scalar type for " + p.name};
      }
    }
    args[i] = &v;
  }
  ffi_cif cif;
  if (ffi_prep_cif(&cif, FFI_DEFAULT_ABI, static_cast<unsigned>(params.size()), &ffi_type_void, types.data()) != FFI_OK)
    throw Fatal{RunStatus::kInternal, "libffi could not prepare the call to solve()"};
  ffi_call(&cif, FFI_FN(lib.solve), nullptr, args.data());
  if (lib.get_last_error) {
    int e = lib.get_last_error();
    if (e != 0) throw Fatal{RunStatus::kCudaError, "solve() left a CUDA runtime error (cudaError " + std::to_string(e) + ", e.g. a failed launch)"};
  }
}

util::Json Child::verify(Bound& b, Tolerance tol, RunStatus& status, std::string& message) {
  util::Json out = util::Json::object();
  bool differed = false;
  if (b.resident) {
    GpuCheck g = verify_on_gpu(b, tol, out);
    if (g == GpuCheck::kDone) return out;  // everything passed: status and message stay as they are
    if (g == GpuCheck::kCorrupted) return {{"corrupted", true}};
    differed = g == GpuCheck::kDiffers;
  }
  RunStatus host_status = RunStatus::kOk;
  std::string host_message;
  util::Json h = verify_on_host(b, tol, host_status, host_message);
  if (host_status != RunStatus::kOk) {
    if (status == RunStatus::kOk || (status == RunStatus::kInputModified && host_status != RunStatus::kInputModified)) {
      status = host_status;
      message = host_message;
    }
  } else if (differed) {
    // Both looks came after solve() returned and the device was synchronised; the first (on the GPU) found a
    // difference the second (on the host, later) did not: work finished after the call. Not a second chance.
    h["outputs_changed_after_return"] = true;
    if (status == RunStatus::kOk) {
      status = RunStatus::kOutputsChangedAfterReturn;
      message = "the outputs differed from the reference when checked on the GPU right after solve() returned and "
                "the device was synchronised, and matched when read again on the host: work finished after the call "
                "returned (a host thread or process left running?)";
    }
  }
  return h;
}

// Every input unchanged and every output within tolerance, decided on the GPU: kDone with `out` as the host's check
// would write it. Any difference (kOnHost) is examined on the host, which names the first bad element; a golden
// buffer whose checksum changed since its upload (kCorrupted) means the resident data cannot be trusted.
Child::GpuCheck Child::verify_on_gpu(Bound& b, Tolerance tol, util::Json& out) {
  DeviceCompare* dc = resident_ ? resident_->compare() : nullptr;
  if (!dc) return GpuCheck::kOnHost;
  check(api_.cuCtxSynchronize(), "synchronize after solve()");  // device-wide: catches work on any stream
  util::Json outputs = util::Json::object(), inputs = util::Json::object();
  for (const auto& p : g_.signature.params) {
    if (p.kind != ParamKind::kPointer) continue;
    const BufferSpec& spec = g_.buffers.at(p.name);
    const bool input = spec.role == BufferRole::kInput;
    auto it = b.resident->tensors.find((input ? "in." : "out.") + p.name);
    if (it == b.resident->tensors.end()) return GpuCheck::kOnHost;
    const ResidentTensor& r = it->second;
    if (r.bytes != spec.nbytes || r.dtype != spec.dtype) return GpuCheck::kOnHost;
    if (input) {
      DeviceEquality e = dc->equal(spec.dtype, r.ptr, b.dptr.at(p.name), r.numel);
      if (e.reference_sum != r.sum) return GpuCheck::kCorrupted;
      if (e.differing > 0) return GpuCheck::kDiffers;
      inputs[p.name] = {{"unchanged", true}, {"first_changed_index", -1}};
    } else {
      DeviceComparison c = dc->compare(spec.dtype, r.ptr, b.dptr.at(p.name), r.numel, tol);
      if (c.expected_sum != r.sum) return GpuCheck::kCorrupted;
      if (!c.result.ok) return GpuCheck::kDiffers;
      outputs[p.name] = to_json(c.result);
    }
  }
  out["outputs"] = outputs;
  out["inputs"] = inputs;
  out["checked_on"] = "gpu";
  return GpuCheck::kDone;
}

util::Json Child::call_and_verify(const Lib& lib, Bound& b, Tolerance tol, RunStatus& status, std::string& message,
                                  const std::function<void()>& before, bool settle) {
  if (before) before();
  const auto threads_before = live_threads();
  call(lib, b);
  util::Json v = verify(b, tol, status, message);
  if (!v.contains("corrupted")) {
    // Outputs final when solve() returns (docs/RUNNER.md): no thread it started may still run, and a second look
    // after a settle delay sees what the first saw.
    auto threads = thread_rule_applies() ? still_running(started_since(threads_before, live_threads()), kThreadSettleMs)
                                         : std::vector<long>{};
    if (thread_rule_applies()) threads.insert(threads.end(), lib.load_threads.begin(), lib.load_threads.end());
    if (!threads.empty()) {
      left_threads_.insert(lib.handle);
      v["threads_left_running"] = describe_threads(threads);
      // Outputs unwritten or wrong while a thread it started still runs: the thread is the cause, and the verdict
      // says so (with pinned downloads the host's look can come before the thread's late work lands).
      if (status == RunStatus::kOk || status == RunStatus::kUnwrittenOutput || status == RunStatus::kWrongResult) {
        status = RunStatus::kThreadsLeftRunning;
        message = "solve() returned leaving " + describe_threads(threads) + " running" +
                  (lib.load_threads.empty() ? "" : " (started while its library was loaded)") +
                  ": work done after the call returns is neither checked nor timed";
      }
    }
    if ((status == RunStatus::kUnwrittenOutput || status == RunStatus::kWrongResult) && !v.contains("threads_left_running")) {
      // Wrong when read at once, right a moment later: work that landed after the call returned. Said as such (a
      // rejection either way: a look later never makes a failed call pass).
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(kSettleMs));
      RunStatus again = RunStatus::kOk;
      std::string again_message;
      util::Json second = verify(b, tol, again, again_message);
      if (again == RunStatus::kOk && !second.contains("corrupted")) {
        v["outputs_changed_after_return"] = true;
        status = RunStatus::kOutputsChangedAfterReturn;
        message = "the outputs were " + std::string(status_name(RunStatus::kUnwrittenOutput)) + " or wrong when read right "
                  "after solve() returned and the device was synchronised, and right " + std::to_string(static_cast<int>(kSettleMs)) +
                  " ms later: work finished after the call returned (a host thread or process left running?)";
      }
    }
    if (settle && status == RunStatus::kOk) {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(kSettleMs));
      RunStatus again = RunStatus::kOk;
      std::string again_message;
      util::Json second = verify(b, tol, again, again_message);
      v["settle_ms"] = kSettleMs;
      if (again != RunStatus::kOk || second.contains("corrupted")) {
        v["outputs_changed_after_return"] = true;
        status = RunStatus::kOutputsChangedAfterReturn;
        message = settle_message(again_message);
      }
    }
    return v;
  }
  // A kernel wrote into the resident golden data (out of bounds): drop it all and check this call again from the
  // host's copy. Every Bound's resident tensors are gone with it, so they all go back to the host's.
  resident_->corrupted();
  b.resident.reset();
  reset_outputs(b);
  if (before) before();
  call(lib, b);
  v = verify_on_host(b, tol, status, message);
  v["golden_on_gpu_corrupted"] = true;
  return v;
}

util::Json Child::verify_on_host(Bound& b, Tolerance tol, RunStatus& status, std::string& message) {
  util::Json out = util::Json::object();
  util::Json outputs = util::Json::object(), inputs = util::Json::object();
  std::map<std::string, std::span<unsigned char>> sealed_outputs;  // for the judge
  check(api_.cuCtxSynchronize(), "synchronize after solve()");  // device-wide: catches work on any stream
  const auto t0 = std::chrono::steady_clock::now();
  auto host = download(b);
  const double download_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& p : g_.signature.params) {
    if (p.kind != ParamKind::kPointer) continue;
    const BufferSpec& spec = g_.buffers.at(p.name);
    const std::span<unsigned char> got = host.at(p.name);
    if (spec.role == BufferRole::kInput) {
      const auto& up = *b.uploaded.at(p.name);
      bool same = parallel_equal(up.data(), got.data(), up.size());
      int64_t first = -1;
      if (!same)
        for (size_t i = 0; i < up.size(); ++i)
          if (up[i] != got[i]) {
            first = static_cast<int64_t>(i / contract::dtype_size(spec.dtype));
            break;
          }
      inputs[p.name] = {{"unchanged", same}, {"first_changed_index", first}};
      if (!same && status == RunStatus::kOk) {
        status = RunStatus::kInputModified;
        message = "input " + p.name + " was modified by the kernel (first changed element " + std::to_string(first) + ")";
      }
    } else if (b.sealed) {
      sealed_outputs.emplace(p.name, got);
    } else {
      const auto& expected = b.tensors->at("out." + p.name);
      auto c = compare(spec.dtype, spec.shape, expected.data.data(), got.data(), expected.numel(), tol);
      outputs[p.name] = to_json(c);
      if (!c.ok && (status == RunStatus::kOk || status == RunStatus::kInputModified)) {
        bool unwritten = c.still_poisoned > 0 && spec.role == BufferRole::kOutput;
        status = unwritten ? RunStatus::kUnwrittenOutput : RunStatus::kWrongResult;
        message = "output " + p.name + ": " + c.summary();
      }
    }
  }
  if (b.sealed) {
    util::Json record = {{"download_ms", download_ms}};
    outputs = judge_sealed(sealed_outputs, tol, status, message, record);
    out["judge"] = record;
  }
  out["outputs"] = outputs;
  out["inputs"] = inputs;
  out["checked_on"] = b.sealed ? "judge" : "host";
  return out;
}

std::map<std::string, std::span<unsigned char>> Child::download(Bound& b) {
  constexpr size_t kAlign = 4096;  // each buffer on its own pages: whole-page copies
  size_t total = 0;
  for (const auto& p : g_.signature.params)
    if (p.kind == ParamKind::kPointer)
      total += (static_cast<size_t>(g_.buffers.at(p.name).nbytes) + kAlign - 1) / kAlign * kAlign;
  if (auto st = staging_.reserve(std::max<size_t>(total, 1)); !st)
    throw Fatal{RunStatus::kInternal, "the host buffer checks download into: " + st.error().message};
  std::map<std::string, std::span<unsigned char>> host;
  size_t offset = 0;
  for (const auto& p : g_.signature.params) {
    if (p.kind != ParamKind::kPointer) continue;
    const size_t n = static_cast<size_t>(g_.buffers.at(p.name).nbytes);
    std::span<unsigned char> dst(staging_.data() + offset, n);
    check(api_.cuMemcpyDtoH(dst.data(), b.dptr[p.name], n), "download " + p.name);
    host.emplace(p.name, dst);
    offset += (n + kAlign - 1) / kAlign * kAlign;
  }
  return host;
}

util::Json Child::judge_sealed(std::map<std::string, std::span<unsigned char>>& outputs, Tolerance tol, RunStatus& status,
                               std::string& message, util::Json& judge_record) {
  // Outputs right on the sealed seed, left in the staging buffer, would be an answer key for the next library this
  // process loads (they come from the sealed seed's inputs, which every library sees): wiped whatever the judge says.
  struct Wipe {
    std::map<std::string, std::span<unsigned char>>& outputs;
    ~Wipe() {
      for (auto& [name, bytes] : outputs) parallel_zero(bytes.data(), bytes.size());
    }
  } wipe{outputs};
  std::map<std::string, JudgeClient::Bytes> bytes(outputs.begin(), outputs.end());
  const auto t0 = std::chrono::steady_clock::now();
  auto v = judge_->judge(g_.dir, tol, bytes, &staging_);
  if (!v) throw Fatal{RunStatus::kInternal, "the sealed seed could not be judged: " + v.error().message};
  judge_record["round_trip_ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  judge_record["transport"] = v->transport;
  judge_record["pinned"] = staging_.pinned();
  judge_record["judge_ms"] = v->judge_ms;
  if (!judge_->shared_refusal().empty()) judge_record["shared_refused"] = judge_->shared_refusal();
  if (v->status != RunStatus::kOk && (status == RunStatus::kOk || status == RunStatus::kInputModified)) {
    status = v->status != RunStatus::kWrongResult ? v->status
             : ephemeral()                        ? RunStatus::kWrongOnEphemeralSeed
                                                  : RunStatus::kWrongOnSealedSeed;
    message = v->message;
  }
  return v->outputs;
}

void Child::dump_outputs(Bound& b, const std::string& path) {
  contract::TensorMap out;
  for (const auto& p : g_.signature.params) {
    if (p.kind != ParamKind::kPointer) continue;
    const BufferSpec& spec = g_.buffers.at(p.name);
    if (spec.role == BufferRole::kInput) continue;
    contract::Tensor t;
    t.dtype = spec.dtype;
    t.shape = spec.shape;
    t.data.resize(static_cast<size_t>(spec.nbytes));
    check(api_.cuMemcpyDtoH(t.data.data(), b.dptr[p.name], t.data.size()), "download " + p.name);
    out["out." + p.name] = std::move(t);
  }
  auto st = util::write_file_atomic(path, contract::serialize_safetensors(out));
  if (!st) throw Fatal{RunStatus::kInternal, "--dump-outputs: " + st.error().message};
}

std::vector<Region> Child::written_regions(const Bound& b) const {
  std::vector<Region> out;
  for (const auto& p : g_.signature.params) {
    if (p.kind != ParamKind::kPointer) continue;
    const BufferSpec& spec = g_.buffers.at(p.name);
    if (is_written(spec.role)) out.push_back({b.dptr.at(p.name), static_cast<size_t>(std::max<int64_t>(spec.nbytes, 0))});
  }
  return out;
}

Child::Bound Child::view_with_seed(const Bound& b, int seed) {
  Bound v;
  v.dptr = b.dptr;  // the same buffers: a kernel that remembers by pointer sees the pointers it saw before
  auto tensors = seeds_.seed(seed);
  if (!tensors) throw Fatal{RunStatus::kLoadError, tensors.error().message};
  v.tensors = *tensors;
  if (resident_) v.resident = resident_->get(resident_key(g_.dir, seed), **tensors);
  for (const auto& p : g_.signature.params) {
    if (p.kind != ParamKind::kPointer) continue;
    const BufferSpec& spec = g_.buffers.at(p.name);
    if (is_read(spec.role)) {
      auto it = v.tensors->find("in." + p.name);
      if (it == v.tensors->end() || static_cast<int64_t>(it->second.data.size()) != spec.nbytes)
        throw Fatal{RunStatus::kLoadError, "golden seed " + std::to_string(seed) + " lacks in." + p.name};
      v.uploaded[p.name] = &it->second.data;
    }
  }
  return v;
}

std::vector<RotatedBuffer> Child::rotated_buffers(const Bound& b) const {
  std::vector<RotatedBuffer> out;
  for (const auto& p : g_.signature.params) {
    if (p.kind != ParamKind::kPointer) continue;
    const BufferSpec& spec = g_.buffers.at(p.name);
    if (!is_read(spec.role)) continue;
    out.push_back({b.dptr.at(p.name), static_cast<uint64_t>(std::max<int64_t>(spec.nbytes, 0)),
                   contract::dtype_size(spec.dtype), rotates(spec.dtype)});
  }
  return out;
}

void Child::check_audit(const Lib& lib, Bound& view, Tolerance tol, int sample, std::mt19937_64& rng) {
  RunStatus st = RunStatus::kOk;
  std::string msg;
  util::Json v = verify(view, tol, st, msg);
  if (st == RunStatus::kOk && !v.contains("corrupted")) {
    if (view.sealed) {
      sealed_pass(lib);
      ++sealed_audits_;
    }
    util::Json& record = view.sealed ? sealed_audit_record_ : audit_record_;
    if (record.is_null()) {  // the audit seed's check, as the seeds before timing are recorded
      record = v;
      record["seed"] = seed_id(view, audit_seed());
      if (view.sealed) record["sealed"] = true;
      record["checked_during_timing"] = true;
    }
    return;
  }
  // The same seed in fresh buffers, checked as any seed is: wrong there too is the kernel's plain verdict.
  Bound fresh = audit_fresh(view, rng);
  RunStatus again = RunStatus::kOk;
  std::string again_msg;
  call_and_verify(lib, fresh, tol, again, again_msg);
  free_bound(fresh);
  if (again != RunStatus::kOk) throw AuditFailed{again, "on " + seed_text(view) + ": " + again_msg};
  throw AuditFailed{RunStatus::kWrongOnFreshInputs,
                    "timed call " + std::to_string(sample + 1) + " was audited on " + seed_text(view) +
                        "'s inputs, which it had not seen, in the buffers every timed call used, and was wrong (" +
                        (msg.empty() ? std::string("the golden data on the GPU changed") : msg) +
                        "); the same inputs in fresh buffers are right: its outputs depend on what it saw before "
                        "(memoised or stale outputs)"};
}

// Time mode: the series (runner/timer.h) and its result fields. `timing` holds the GPU time's statistics (the
// ranking figure, launch excluded with the blocker), `call` the host-observed time per call.
void Child::time_one(const Lib& lib, Bound& b, Tolerance tol, std::mt19937_64& rng, util::Json& result,
                     RunStatus& status, std::string& message) {
  Timer timer(api_, timer_config());
  // Fresh inputs between timed calls, and audits on the held-back seed (runner/fresh_inputs.h).
  const bool fresh = fresh_inputs_enabled();
  std::optional<InputRotation> rotation;
  if (fresh) rotation.emplace(api_, rotated_buffers(b), rng());
  AuditViews views;
  if (fresh) views = audit_views(b, {&lib});
  std::optional<Bound>* view = &views.plain;  // this sample's: the sealed seed's until it passed there
  AuditSchedule schedule(rng());
  int sample = -1;
  bool auditing = false;
  SampleHooks hooks;
  hooks.before = [&] {
    view = &views.for_lib(*this, lib);
    auditing = before_sample(schedule, ++sample, *view, rotation);
  };
  int plain_audits = 0;
  hooks.after = [&] {
    if (!auditing) return;
    check_audit(lib, **view, tol, sample, rng);
    if (!(*view)->sealed) ++plain_audits;
  };
  hooks.before_call = [&] {
    if (rotation) rotation->refresh();
  };
  SeriesOptions o;
  o.max_time_s = opt_.max_time_s;
  o.min_samples = opt_.min_samples;
  o.max_samples = opt_.max_samples;
  o.target_ci = opt_.target_ci;
  o.forced = forced_method(opt_);
  TimedSeries s;
  try {
    s = time_series(timer, [&] { call(lib, b); }, [&] { reset_outputs(b); }, written_regions(b), o, fresh ? &hooks : nullptr);
  } catch (const AuditFailed& a) {
    status = a.status;
    message = a.message;
    result["fresh_inputs"] = {{"failed_audit_at_sample", sample + 1}};
    return;
  }
  // A series too short for an audit of each kind (--max-samples below the window, or its audits all on the sealed
  // seed): what no timed call showed it is checked untimed, in the same buffers, all the same (the held seed's
  // check is on the GPU: a millisecond).
  if (views.plain) {
    try {
      if (wants_sealed(lib) && views.sealed) late_audit(lib, b, *views.sealed, tol, sample, rng);
      if (plain_audits == 0 && (audit_seed_held() || schedule.audits() == 0)) late_audit(lib, b, *views.plain, tol, sample, rng);
    } catch (const AuditFailed& a) {
      status = a.status;
      message = a.message;
      return;
    }
  }
  result["timing"] = to_json(compute_stats(s.gpu_ms));
  result["call"] = to_json(compute_stats(s.call_ms));
  result["samples_ms"] = s.gpu_ms;
  result["call_samples_ms"] = s.call_ms;
  result["timing_method"] = method_name(s.decision.method);
  result["l2"] = l2_name(timer.l2());
  result["timing_info"] = series_info_json(s, timer.l2(), timer.blocker_error());
  if (timer.l2() == L2Mode::kCold) {
    result["timing_info"]["l2_flush"] = flush_kind_name(timer.flush_kind());
    result["timing_info"]["code_flush"] = timer.code_flush();
  }
  result["timing_info"]["device_state"] = timer.device_state_json();
  result["timing_info"]["fresh_inputs"] = {
      {"enabled", fresh},
      {"rotated", rotation && rotation->any_rotated()},
      {"refreshes", rotation ? rotation->refreshes() : 0},
      {"audits", schedule.audits()},
      {"audit_seed", fresh ? util::Json(sealed_audits_ > 0 ? kSealedSeedId : audit_seed()) : util::Json(nullptr)},
      {"sealed_audits", sealed_audits_},
      // Every library's output was checked on the sealed seed: in these audits or earlier in this process.
      {"audit_seed_sealed", fresh && sealed_available() && !wants_sealed(lib)}};
  result["event_samples_ms"] = s.event_ms;
  for (const char* k : {"gpu_clock", "gpu_clock_off_reason", "event_median_ms", "busy_median_ms", "kernels_per_call"})
    if (result["timing_info"].contains(k)) result[k] = result["timing_info"][k];
}

void Child::run_paired(Tolerance tol, std::mt19937_64& rng, util::Json& result, RunStatus& status, std::string& message) {
  // Each library is loaded and checked once on fresh poison (the first seed); a failure is the library's own
  // (runner/paired.h) as long as the context survives it. Then each correct library is warmed up and probed
  // (runner/timer.h), all are timed with one method (the most conservative any needs: runner/timing_method.h),
  // in interleaved rounds: each round times every correct library once, in a shuffled order, on the same buffers.
  // Where a paired run's wall time goes (result's phases_ms): loading, checking, probing, the timed rounds.
  util::Json phases = util::Json::object();
  PhaseClock lap(phases);
  std::vector<PairedEntry> entries(opt_.libs.size());
  std::vector<Lib> libs(opt_.libs.size());
  for (size_t k = 0; k < libs.size(); ++k) {
    entries[k].lib = opt_.libs[k];
    try {
      libs[k] = load_lib(opt_.libs[k]);
    } catch (const Fatal& f) {
      entries[k].status = f.status;
      entries[k].message = f.message;
    }
  }
  Bound b = bind_seed(g_.seeds.front(), rng);
  Timer timer(api_, timer_config());
  lap("load");
  for (size_t k = 0; k < libs.size(); ++k) {
    if (entries[k].status != RunStatus::kOk) continue;
    try {
      // The champion the loop checked already in this run (--checked-first) is only warmed up: checking it again
      // before every race was a third of a race's wall time at sgemm 4096^3 (issue 16).
      const bool trusted = k == 0 && opt_.checked_first && libs.size() >= 2;
      if (trusted) {
        entries[k].check = {{"skipped", "checked earlier in this run on this golden data (--checked-first)"}};
      } else {
        reset_outputs(b);
        entries[k].check = call_and_verify(libs[k], b, tol, entries[k].status, entries[k].message, {}, true);
      }
      for (int i = trusted ? 0 : 1; i < 3 && entries[k].status == RunStatus::kOk; ++i) {  // 3 warm-up calls in all
        call(libs[k], b);
        check(api_.cuCtxSynchronize(), "warm-up");
      }
    } catch (Fatal& f) {
      // A launch the runtime refused (too many resources, a bad configuration) leaves the context usable;
      // an illegal access or a trap does not, and ends the child naming the library.
      if (api_.cuCtxSynchronize() != CUDA_SUCCESS) {
        f.lib = libs[k].path;
        throw;
      }
      entries[k].status = f.status;
      entries[k].message = f.message;
    }
  }
  lap("check");
  // A race ranks the last library (the candidate) against the first (the proven champion): the candidate is also
  // checked on every other seed, as a time run checks it.
  // The held-back seed (runner/fresh_inputs.h) is the audits' in the rounds, not checked here.
  const bool fresh = fresh_inputs_enabled();
  const size_t other_seeds_end = g_.seeds.size() - (fresh && audit_seed_held() ? 1 : 0);
  if (opt_.race && libs.size() >= 2 && entries.back().status == RunStatus::kOk) {
    for (size_t s = 1; s < other_seeds_end && entries.back().status == RunStatus::kOk; ++s) {
      Bound other = bind_seed(g_.seeds[s], rng);
      try {
        util::Json v = call_and_verify(libs.back(), other, tol, entries.back().status, entries.back().message);
        v["seed"] = g_.seeds[s];
        entries.back().check["seeds"].push_back(v);
      } catch (Fatal& f) {
        if (api_.cuCtxSynchronize() != CUDA_SUCCESS) {
          f.lib = libs.back().path;
          throw;
        }
        entries.back().status = f.status;
        entries.back().message = f.message;
      }
      free_bound(other);
    }
    if (entries.back().status != RunStatus::kOk && !entries.back().message.empty())
      entries.back().message = "on another seed: " + entries.back().message;
  }
  lap("other_seeds");
  std::vector<size_t> order = timed_libs(entries);
  // Probe each library alone; the common method is the most conservative one.
  std::vector<double> bound_ms(libs.size(), 0);
  std::vector<TimingMethod> methods;
  for (size_t k : order) {
    try {
      // A trusted champion's figures are probed once per worker; every other library is probed in every run.
      const bool cacheable = k == 0 && opt_.checked_first && libs.size() >= 2;
      const std::string key = cacheable ? ProbeCache::key(libs[k].path, opt_) : std::string();
      auto hit = cacheable ? probes_.figures.find(key) : probes_.figures.end();
      ProbeFigures f = hit != probes_.figures.end()
                           ? hit->second
                           : timer.probe([&] { call(libs[k], b); }, [&] { reset_outputs(b); }, written_regions(b),
                                         forced_method(opt_));
      if (cacheable && hit == probes_.figures.end()) probes_.figures[key] = f;
      if (cacheable) entries[k].probe_reused = hit != probes_.figures.end();
      MethodDecision d = decide_method(f);
      if (d.method == TimingMethod::kBlocked && !timer.blocker_available())
        d = {TimingMethod::kEventsDefaultStream, FallbackReason::kBlockerUnavailable};
      bound_ms[k] = watchdog_bound_ms(f.return_ms);
      methods.push_back(d.method);
      entries[k].timing_info = {{"probe_method", method_name(d.method)},
                                {"fallback_reason", reason_name(d.reason)},
                                {"probe_event_median_ms", f.event_ms},
                                {"probe_host_median_ms", f.host_ms},
                                {"probe_blocked_median_ms", f.blocked_ms},
                                {"probe_reused", entries[k].probe_reused},
                                {"probe_cost_ms", entries[k].probe_reused ? util::Json(nullptr) : probe_cost_json(f)}};
    } catch (Fatal& f) {
      f.lib = libs[k].path;
      throw;
    }
  }
  TimingMethod method = common_method(methods);
  lap("probe");
  // Fresh inputs before every sample and audits on the held seed, per library (runner/fresh_inputs.h).
  std::optional<InputRotation> rotation;
  if (fresh && !order.empty()) rotation.emplace(api_, rotated_buffers(b), rng());
  AuditViews views;
  if (fresh && !order.empty()) {
    std::vector<const Lib*> timed;
    for (size_t k : order) timed.push_back(&libs[k]);
    views = audit_views(b, timed);
  }
  std::vector<AuditSchedule> schedules;
  for (size_t k = 0; k < libs.size(); ++k) schedules.emplace_back(rng(), kPairedAuditWindow);
  std::vector<int> samples_of(libs.size(), -1), plain_audits(libs.size(), 0);
  auto audit_failed = [&](size_t k, const AuditFailed& a) {
    entries[k].status = a.status;
    entries[k].message = a.message;
    entries[k].clear();  // a wrong library is not timed
  };
  // One clock for every library of the run: any sample without a span turns them all to their event figures.
  SeriesClock run_clock(timer.kernel_clock() ? GpuClock::kCuptiActivity : GpuClock::kEvents, timer.clock_off_reason(), 0);
  auto to_events = [&] {
    for (auto& e : entries) e.to_events();
  };
  auto t0 = std::chrono::steady_clock::now();
  int rounds = 0, releases = 0;
  for (; rounds < opt_.rounds && !order.empty(); ++rounds) {
    std::shuffle(order.begin(), order.end(), rng);
    bool restart = false, failed = false;
    for (size_t k : order) {
      GpuSample g;
      bool auditing = false;
      try {
        do {
          std::optional<Bound>& view = views.for_lib(*this, libs[k]);
          auditing = before_sample(schedules[k], ++samples_of[k], view, rotation);
          g = timer.sample([&] { call(libs[k], b); }, method, bound_ms[k]);
          if (auditing) {
            check_audit(libs[k], *view, tol, samples_of[k], rng);
            if (!view->sealed) ++plain_audits[k];
          }
        } while (g.discarded() && ++releases < kMaxWatchdogReleases);
      } catch (const AuditFailed& a) {
        audit_failed(k, a);
        failed = true;
        continue;
      } catch (Fatal& f) {
        f.lib = libs[k].path;
        throw;
      }
      if (g.discarded()) {  // a library waits on the GPU after all: every library again, without the blocker
        restart = true;
        break;
      }
      if (run_clock.add(g.clock == GpuClock::kCuptiActivity) == SeriesClock::Step::kSwitchToEvents) to_events();
      entries[k].add(run_clock.clock() == GpuClock::kCuptiActivity, g.gpu_ms, g.event_ms, g.busy_ms, g.kernels);
    }
    if (failed) {  // a library an audit found wrong leaves the rounds; in a race the candidate's verdict is given
      order = timed_libs(entries);
      if (opt_.race || order.empty()) {
        ++rounds;
        break;
      }
    }
    if (restart) {
      method = TimingMethod::kEventsDefaultStream;
      for (auto& e : entries) e.clear();
      rounds = -1;
      t0 = std::chrono::steady_clock::now();
      continue;
    }
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (opt_.race && order.size() >= 2 && entries.size() >= 2 && entries.front().status == RunStatus::kOk &&
        entries.back().status == RunStatus::kOk) {
      RaceRule rule;
      rule.max_rounds = opt_.rounds;
      rule.max_time_s = opt_.max_time_s;
      if (race_state(entries.front().gpu_ms, entries.back().gpu_ms, rule, el) != RaceState::kContinue) {
        ++rounds;
        break;
      }
    }
    if (rounds >= 10 && el > opt_.max_time_s) { ++rounds; break; }
  }
  // A library the rounds never audited (too few rounds) is checked on the held seed in the same buffers, untimed.
  // And one whose audits were all on the sealed seed: the held seed, checked on the GPU (a millisecond).
  if (views.plain)
    for (size_t k : timed_libs(entries)) {
      try {
        if (wants_sealed(libs[k]) && views.sealed) late_audit(libs[k], b, *views.sealed, tol, samples_of[k], rng);
        if (plain_audits[k] == 0 && (audit_seed_held() || schedules[k].audits() == 0))
          late_audit(libs[k], b, *views.plain, tol, samples_of[k], rng);
      } catch (const AuditFailed& a) {
        audit_failed(k, a);
      } catch (Fatal& f) {
        f.lib = libs[k].path;
        throw;
      }
    }
  lap("rounds");
  result["device_state"] = timer.device_state_json();
  util::Json audits = util::Json::array();
  for (const auto& sc : schedules) audits.push_back(sc.audits());
  result["fresh_inputs"] = {{"enabled", fresh},
                            {"rotated", rotation && rotation->any_rotated()},
                            {"refreshes", rotation ? rotation->refreshes() : 0},
                            {"audits_per_lib", audits},
                            {"audit_seed", fresh ? util::Json(sealed_audits_ > 0 ? kSealedSeedId : audit_seed()) : util::Json(nullptr)},
                            {"sealed_audits", sealed_audits_},
                            // Every timed library's output was checked on the sealed seed (here or earlier).
                            {"audit_seed_sealed", fresh && sealed_available() && all_sealed(libs, timed_libs(entries))}};
  result["phases_ms"] = phases;
  result["rounds"] = rounds;
  result["timing_method"] = method_name(method);
  result["l2"] = l2_name(timer.l2());
  result["gpu_clock"] = clock_name(run_clock.clock());
  if (run_clock.clock() == GpuClock::kEvents) {
    result["gpu_clock_off_reason"] = off_reason_name(run_clock.off_reason());
    std::string text(describe(run_clock.off_reason()));
    if (run_clock.off_reason() == ClockOffReason::kUnavailable) text += ": " + timer.clock_error();
    result["gpu_clock_off_reason_text"] = text;
  }
  result["cupti_missing"] = run_clock.missing();
  result["libs"] = paired_libs_json(entries);
  std::tie(status, message) = paired_status(entries);
  free_bound(b);
}

util::Json Child::run() {
  util::Json result = {{"status", "internal_error"}, {"message", ""}, {"mode", run_mode_name(opt_.mode)}};
  Tolerance tol = g_.tol;
  if (opt_.atol >= 0) tol.atol = opt_.atol;
  if (opt_.rtol >= 0) tol.rtol = opt_.rtol;
  result["tolerance"] = {{"atol", tol.atol}, {"rtol", tol.rtol}};
  std::mt19937_64 rng(static_cast<uint64_t>(::getpid()) * 2654435761ull + 17);

  RunStatus status = RunStatus::kOk;
  std::string message;
  if (opt_.mode == RunMode::kPaired) {
    run_paired(tol, rng, result, status, message);
  } else {
    // Where the child's wall goes (result's phases_ms; its start, the CUDA context and the golden data, is the
    // rest of the launcher's wall_ms): loading, checking each seed, timing, the recheck.
    util::Json phases = util::Json::object();
    PhaseClock lap(phases);
    const Lib lib = load_lib(opt_.libs.front());
    lap("load");
    std::optional<SmemFill> filler;
    uint32_t pattern = 0;
    if (!opt_.smem_fill.empty()) {
      pattern = parse_fill_pattern(opt_.smem_fill).value_or(0);
      CUdevice dev = 0;
      check(api_.cuDeviceGet(&dev, 0), "cuDeviceGet");
      filler.emplace(api_, dev);
      result["smem_fill"] = {{"pattern", opt_.smem_fill}, {"bytes_per_block", filler->bytes_per_block()}};
    }
    util::Json seeds = util::Json::array();
    // Time mode holds the last seed back for the timed series' audits (runner/fresh_inputs.h): its inputs are new to
    // the kernel when the first audit checks them.
    const int held = opt_.mode == RunMode::kTime && fresh_inputs_enabled() && audit_seed_held() ? audit_seed() : -1;
    for (int seed : g_.seeds) {
      if (held >= 0 && seed == held) continue;
      const auto bind_start = std::chrono::steady_clock::now();
      Bound b = bind_seed(seed, rng);
      const auto verify_start = std::chrono::steady_clock::now();
      util::Json v = call_and_verify(lib, b, tol, status, message, [&] {
        if (filler) filler->fill(pattern);
      }, seeds.empty());
      v["bind_ms"] = std::chrono::duration<double, std::milli>(verify_start - bind_start).count();
      v["bind_steps_ms"] = b.bind_ms;
      v["verify_ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - verify_start).count();
      v["seed"] = seed;
      seeds.push_back(v);
      if (!opt_.dump_outputs.empty() && seed == g_.seeds.front()) dump_outputs(b, opt_.dump_outputs);
      free_bound(b);
      if (opt_.mode == RunMode::kProfile) break;  // one seed is enough to profile
      if (opt_.max_seeds > 0 && static_cast<int>(seeds.size()) >= opt_.max_seeds) break;
    }
    // The sealed seed, checked by the judge: in a check run, and in a time run whose series has no audits.
    const bool check_sealed = opt_.mode == RunMode::kCheck || (opt_.mode == RunMode::kTime && !fresh_inputs_enabled());
    if (status == RunStatus::kOk && check_sealed && sealed_available() && opt_.max_seeds == 0) {
      Bound b = bind_sealed(rng);
      util::Json v = call_and_verify(lib, b, tol, status, message, [&] {
        if (filler) filler->fill(pattern);
      });
      v["seed"] = ephemeral() ? kEphemeralSeedId : kSealedSeedId;
      v[ephemeral() ? "ephemeral" : "sealed"] = true;
      seeds.push_back(v);
      if (status == RunStatus::kOk) sealed_pass(lib);
      if (status != RunStatus::kOk) message = (ephemeral() ? "on the ephemeral seed: " : "on the sealed seed: ") + message;
      free_bound(b);
    }
    result["seeds"] = seeds;
    lap("check");
    if (status == RunStatus::kOk && opt_.mode == RunMode::kTime) {
      int seed = opt_.seed_for_timing >= 0 ? opt_.seed_for_timing : g_.seeds.front();
      Bound b = bind_seed(seed, rng);
      time_one(lib, b, tol, rng, result, status, message);
      lap("time");
      if (!audit_record_.is_null() && audit_seed_held()) result["seeds"].push_back(audit_record_);
      if (!sealed_audit_record_.is_null()) result["seeds"].push_back(sealed_audit_record_);
      // Re-check correctness after timing, on fresh poison.
      if (status == RunStatus::kOk) {
        reset_outputs(b);
        RunStatus recheck = RunStatus::kOk;
        std::string recheck_msg;
        result["recheck"] = call_and_verify(lib, b, tol, recheck, recheck_msg);
        if (recheck != RunStatus::kOk) {
          status = recheck;
          message = "after timing: " + recheck_msg;
        }
      }
      free_bound(b);
      lap("recheck");
    }
    result["phases_ms"] = phases;
    if (status == RunStatus::kOk && opt_.mode == RunMode::kProfile) {
      Bound b = bind_seed(g_.seeds.front(), rng);
      call(lib, b);  // warm-up outside the profiled range
      check(api_.cuCtxSynchronize(), "warm-up");
      reset_outputs(b);
      check(api_.cuProfilerStart(), "cuProfilerStart");
      call(lib, b);
      check(api_.cuCtxSynchronize(), "synchronize");
      check(api_.cuProfilerStop(), "cuProfilerStop");
      free_bound(b);
    }
  }
  result["status"] = status_name(status);
  result["message"] = message;
  return result;
}

}  // namespace

namespace {

// Parses a __runner command line (a one-shot child's, or one worker request's). Nullopt after printing the
// problem (an input error), or after printing the help for --help (*help_shown set; a worker passes none: its
// stdout carries its replies, so --help is an input error there).
std::optional<Options> parse_options(const std::vector<std::string>& args, const char* who, bool* help_shown = nullptr) {
  CLI::App app{"kopt __runner: the measuring child process (internal)", "kopt __runner"};
  Options o;
  std::string mode = "check", l2 = "cold";
  app.add_option("--lib", o.libs, "candidate shared library (repeat for --mode paired)")->required();
  app.add_option("--golden", o.golden, "golden data directory")->required();
  app.add_option("--out", o.out, "result JSON path")->required();
  app.add_option("--mode", mode, "check | time | paired | profile");
  app.add_option("--atol", o.atol);
  app.add_option("--rtol", o.rtol);
  app.add_option("--max-time-s", o.max_time_s);
  app.add_option("--min-samples", o.min_samples);
  app.add_option("--max-samples", o.max_samples);
  app.add_option("--target-ci", o.target_ci);
  app.add_option("--rounds", o.rounds);
  app.add_flag("--race", o.race);
  app.add_flag("--checked-first", o.checked_first,
               "paired: the first library passed this run's checks on this golden data already: warm it up, do not "
               "check it again, and reuse its probe within a worker");
  app.add_option("--dump-outputs", o.dump_outputs, "check mode: write the first seed's outputs to this safetensors file");
  app.add_option("--smem-fill", o.smem_fill,
                 "check mode: fill every SM's shared memory with this 32-bit hex pattern before each call (the sanitizer "
                 "gate's test for reads of shared memory nobody wrote)");
  app.add_option("--l2", l2, "cold (flush the L2 before every sample, the default) | warm");
  app.add_option("--ephemeral-fd", o.ephemeral_fd,
                 "check mode: the ephemeral seed's memfd, inherited: the judge serves it in the sealed seed's place");
  app.add_option("--max-seeds", o.max_seeds, "check mode: only the first N seeds (0, the default: every seed)")
      ->check(CLI::NonNegativeNumber);
  std::string timing_method = "auto";
  app.add_option("--timing-method", timing_method,
                 "auto (the default) | events_blocked | events_default_stream | events_with_device_sync_before_stop");
  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    app.parse(rev);
  } catch (const CLI::CallForHelp&) {
    if (!help_shown) {  // a worker's request: its stdout carries the replies
      std::fprintf(stderr, "%s: --help is not a request\n", who);
      return std::nullopt;
    }
    std::fputs(app.help().c_str(), stdout);
    *help_shown = true;
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: %s\n", who, e.what());
    return std::nullopt;
  }
  auto run_mode = parse_run_mode(mode);
  if (!run_mode || *run_mode == RunMode::kCompile) {
    std::fprintf(stderr, "%s: --mode %s: expected check, time, paired or profile\n", who, mode.c_str());
    return std::nullopt;
  }
  o.mode = *run_mode;
  if (!o.smem_fill.empty() && (!parse_fill_pattern(o.smem_fill) || o.mode != RunMode::kCheck)) {
    std::fprintf(stderr, "%s: --smem-fill %s: expected a 32-bit hex word (e.g. 0xffffffff), in --mode check\n", who,
                 o.smem_fill.c_str());
    return std::nullopt;
  }
  auto l2_mode = parse_l2(l2);
  if (!l2_mode) {
    std::fprintf(stderr, "%s: --l2 %s: expected cold or warm\n", who, l2.c_str());
    return std::nullopt;
  }
  o.l2 = *l2_mode;
  if (auto m = parse_method(timing_method);
      timing_method != "auto" && (!m || (*m != TimingMethod::kBlocked && *m != TimingMethod::kEventsDefaultStream &&
                                         *m != TimingMethod::kDeviceSyncBeforeStop))) {
    std::fprintf(stderr,
                 "%s: --timing-method %s: expected auto, events_blocked, events_default_stream or "
                 "events_with_device_sync_before_stop\n",
                 who, timing_method.c_str());
    return std::nullopt;
  } else if (timing_method != "auto") {
    o.timing_method = m;
  }
  return o;
}

void write_result(const Options& o, const util::Json& j) {
  auto st = util::write_json_atomic(o.out, "runner_result", j);
  if (!st) std::fprintf(stderr, "kopt __runner: %s\n", st.error().message.c_str());
}

// cuInit and the primary context of device 0 (CUDA_VISIBLE_DEVICES picks it).
void init_device(const DriverApi& d) {
  CUresult r = d.cuInit(0);
  if (r != CUDA_SUCCESS) throw Fatal{RunStatus::kCudaError, "cuInit: " + device::error_text(d, r)};
  CUdevice dev;
  CUcontext ctx;
  if ((r = d.cuDeviceGet(&dev, 0)) != CUDA_SUCCESS) throw Fatal{RunStatus::kCudaError, "cuDeviceGet: " + device::error_text(d, r)};
  if ((r = d.cuDevicePrimaryCtxRetain(&ctx, dev)) != CUDA_SUCCESS || (r = d.cuCtxSetCurrent(ctx)) != CUDA_SUCCESS)
    throw Fatal{RunStatus::kCudaError, "primary context: " + device::error_text(d, r)};
  remember_device_defaults(d);  // before any candidate library can change them
}

// One request on an initialised device: the result and the exit code a one-shot child would give.
std::pair<util::Json, int> run_request(const Options& o, const DriverApi& d, GoldenEntry& golden, ProbeCache& probes,
                                       DeviceGolden& resident, const Sealing& sealing) {
  const util::Json answer_key = sealing.to_json(golden.golden());
  try {
    // Where a request's wall goes beyond the run's own phases (result's request_ms): making the child, its run, and
    // its end (unloading every library it loaded).
    using SteadyClock = std::chrono::steady_clock;
    auto ms = [](SteadyClock::time_point a, SteadyClock::time_point b) {
      return std::chrono::duration<double, std::milli>(b - a).count();
    };
    util::Json result;
    bool left_threads = false;
    const auto t0 = SteadyClock::now();
    SteadyClock::time_point t1, t2;
    {
      Child child(o, d, golden, probes, &resident, sealing.judge.get(), *sealing.staging);
      t1 = SteadyClock::now();
      result = child.run();
      t2 = SteadyClock::now();
      left_threads = child.left_threads();
    }
    result["request_ms"] = {{"construct", ms(t0, t1)}, {"run", ms(t1, t2)}, {"release", ms(t2, SteadyClock::now())}};
    // Threads a library left running may still write anywhere in this process: a worker does not serve on.
    if (left_threads) result["restart_worker"] = true;
    // Where the checks ran (docs/RUNNER.md "Checks on the GPU").
    result["golden_on_gpu"] = {{"enabled", resident.enabled()},   {"bytes", resident.bytes()},
                               {"uploads", resident.uploads()},   {"corruptions", resident.corruptions()},
                               {"off_reason", resident.disabled_reason()}};
    result["answer_key"] = answer_key;
    return {result, 0};
  } catch (const Fatal& f) {
    util::Json result = {{"status", status_name(f.status)},
                         {"message", f.lib.empty() ? f.message : f.lib + ": " + f.message},
                         {"mode", run_mode_name(o.mode)},
                         {"answer_key", answer_key}};
    if (!f.lib.empty()) result["failed_lib"] = f.lib;
    return {result, f.status == RunStatus::kLoadError ? 4 : 3};
  }
}

}  // namespace

int child_main(const std::vector<std::string>& args) {
  bool help = false;
  auto o = parse_options(args, "kopt __runner", &help);
  if (!o) return help ? 0 : 4;
  // A one-shot child's start (result's startup_ms): the golden data read, the driver and the context made.
  auto t0 = std::chrono::steady_clock::now();
  auto ms_since = [](std::chrono::steady_clock::time_point& t) {
    auto now = std::chrono::steady_clock::now();
    double ms = std::chrono::duration<double, std::milli>(now - t).count();
    t = now;
    return ms;
  };
  util::Json startup = util::Json::object();
  // The judge and the seal come first: nothing of a candidate is loaded yet (runner/sealed.h).
  const Sealing sealing = start_sealing(o->ephemeral_fd);
  startup["seal"] = ms_since(t0);
  auto golden = load_golden(o->golden);
  if (golden && (golden->sealed || sealing.ephemeral) && sealing.judge)
    (void)sealing.judge->inputs(o->golden);  // read before any candidate loads
  startup["golden"] = ms_since(t0);
  if (!golden) {
    write_result(*o, {{"status", "load_error"}, {"message", golden.error().message}});
    return 4;
  }
  auto api = device::load_driver();
  if (!api) {
    write_result(*o, {{"status", "cuda_error"}, {"message", api.error().message}});
    return 3;
  }
  const DriverApi& d = *api.value();
  try {
    init_device(d);
  } catch (const Fatal& f) {
    write_result(*o, {{"status", status_name(f.status)}, {"message", f.message}, {"mode", run_mode_name(o->mode)}});
    return 3;
  }
  pin_staging(sealing, d);
  startup["cuda_init"] = ms_since(t0);
  GoldenEntry entry(std::move(golden).value());
  ProbeCache probes;  // a one-shot child remembers nothing
  DeviceGolden resident(d, default_device_golden_budget_bytes(d));
  auto [result, rc] = run_request(*o, d, entry, probes, resident, sealing);
  result["startup_ms"] = startup;
  write_result(*o, result);
  return rc;
}

int worker_main(bool one_shot_verdicts) {
  // Replies go to the original stdout; everything else a library prints goes to stderr (the worker's log).
  const int proto = ::dup(1);
  if (proto < 0 || ::dup2(2, 1) < 0) {
    std::fprintf(stderr, "kopt __worker: cannot set up its reply channel\n");
    return 1;
  }
  auto reply = [&](const util::Json& j) {
    std::string line = j.dump() + "\n";
    size_t off = 0;
    while (off < line.size()) {
      ssize_t w = ::write(proto, line.data() + off, line.size() - off);
      if (w <= 0) return false;
      off += static_cast<size_t>(w);
    }
    return true;
  };
  const Sealing sealing = start_sealing();  // before any candidate is loaded (runner/sealed.h)
  auto api = device::load_driver();
  std::optional<std::string> device_error;
  if (!api) device_error = api.error().message;
  else {
    try {
      init_device(*api.value());
      pin_staging(sealing, *api.value());
    } catch (const Fatal& f) {
      device_error = f.message;
    }
  }
  // The golden data of every directory served (the cases of a workload matrix), up to a byte budget.
  GoldenStore store(default_golden_budget_bytes());
  ProbeCache probes;
  // The same, resident on the GPU for the worker's life (runner/device_golden.h).
  std::optional<DeviceGolden> resident;
  if (!device_error) resident.emplace(*api.value(), default_device_golden_budget_bytes(*api.value()));
  std::string line;
  char buf[65536];
  std::string pending;
  while (true) {
    auto nl = pending.find('\n');
    if (nl == std::string::npos) {
      ssize_t got = ::read(0, buf, sizeof buf);
      if (got <= 0) return 0;  // the parent closed the pipe: done
      pending.append(buf, static_cast<size_t>(got));
      continue;
    }
    line = pending.substr(0, nl);
    pending.erase(0, nl + 1);
    auto req = util::Json::parse(line, nullptr, false);
    if (!req.is_object() || !req.contains("argv") || !req["argv"].is_array()) {
      if (!reply({{"rc", 4}, {"error", "a request is {\"argv\": [...]}"}})) return 1;
      continue;
    }
    auto o = parse_options(req["argv"].get<std::vector<std::string>>(), "kopt __worker");
    if (!o) {
      if (!reply({{"rc", 4}})) return 1;
      continue;
    }
    if (device_error) {
      write_result(*o, {{"status", "cuda_error"}, {"message", *device_error}, {"mode", run_mode_name(o->mode)}});
      if (!reply({{"rc", 3}})) return 1;
      continue;
    }
    const auto golden_t0 = std::chrono::steady_clock::now();
    auto entry = store.get(o->golden);
    if (entry && (*entry)->golden().sealed && sealing.judge) (void)sealing.judge->inputs(o->golden);
    const double golden_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - golden_t0).count();
    if (!entry) {
      write_result(*o, {{"status", "load_error"}, {"message", entry.error().message}});
      if (!reply({{"rc", 4}})) return 1;
      continue;
    }
    if (one_shot_verdicts) {  // only the state is kept, never what an earlier request proved
      Child::forget_sealed_passes();
      probes = ProbeCache{};
    }
    auto [result, rc] = run_request(*o, *api.value(), **entry, probes, *resident, sealing);
    const auto trim_t0 = std::chrono::steady_clock::now();
    store.trim();
    // Where a worker's request goes beyond run_request (result's worker_ms): the golden data found in its store (and
    // the sealed seed's inputs asked of the judge), the store trimmed to its budget.
    result["worker_ms"] = {{"golden", golden_ms},
                           {"trim", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - trim_t0).count()}};
    write_result(*o, result);
    // A CUDA error that broke the context (an illegal address, a trap) ends this worker: the next request gets a
    // fresh one. A refused launch leaves the context usable and the worker serving.
    const bool broken = (rc == 3 && api.value()->cuCtxSynchronize() != CUDA_SUCCESS) || result.value("restart_worker", false);
    if (!reply({{"rc", rc}, {"restart", broken}})) return 1;
    if (broken) return 3;
  }
}

}  // namespace kopt::runner
