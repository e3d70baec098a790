#include "runner/timer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

#include "runner/blocker_ptx.h"
#include "runner/code_flush.h"
#include "runner/fatal.h"
#include "runner/stats.h"

namespace kopt::runner {

namespace {

using Clock = std::chrono::steady_clock;
double ms_between(Clock::time_point a, Clock::time_point z) { return std::chrono::duration<double, std::milli>(z - a).count(); }
double median_of(const std::vector<double>& v) { return v.empty() ? 0.0 : compute_stats(v).median_ms; }

// Outputs larger than this are compared on their first and last half of it only (the probe's look while held).
constexpr size_t kWatchBytes = 64u << 20;

// The pieces of each region the probe compares: whole regions up to kWatchBytes, else both ends.
std::vector<Region> watched_pieces(const std::vector<Region>& regions) {
  std::vector<Region> out;
  for (const auto& r : regions) {
    if (r.bytes == 0) continue;
    if (r.bytes <= kWatchBytes) {
      out.push_back(r);
    } else {
      out.push_back({r.ptr, kWatchBytes / 2});
      out.push_back({r.ptr + (r.bytes - kWatchBytes / 2), kWatchBytes / 2});
    }
  }
  return out;
}

// Pinned host memory for the probe's looks at the outputs, kept for the process's life (its one context, the primary
// one: a worker whose context breaks ends). A persistent worker measures candidate after candidate; allocating and
// first touching the snapshot (pageable) and the staging (pinned) for every request cost 16-33 ms each of a 16M-float
// vector_add candidate's ~350 ms of requests (H100, 2026-12-06). Blocks only grow; a snapshot is valid until the next.
struct PinnedBlock {
  unsigned char* p = nullptr;
  size_t bytes = 0;
};
unsigned char* pinned(const device::DriverApi& api, PinnedBlock& b, size_t need, const char* what) {
  if (need > b.bytes) {
    if (b.p) api.cuMemFreeHost(b.p);
    b = {};
    void* p = nullptr;
    check_cuda(api, api.cuMemHostAlloc(&p, need, 0), what);
    b = {static_cast<unsigned char*>(p), need};
  }
  return b.p;
}
std::vector<PinnedBlock>& snapshot_blocks() {
  static std::vector<PinnedBlock> blocks;
  return blocks;
}
PinnedBlock& staging_block() {
  static PinnedBlock block;
  return block;
}

}  // namespace

Timer::Timer(const device::DriverApi& api, TimerConfig cfg) : api_(api), cfg_(cfg) {
  if (cfg_.l2 == L2Mode::kCold) check_cuda(api_, api_.cuMemAlloc(&flush_, cfg_.flush_bytes), "cuMemAlloc (L2 flush buffer)");
  check_cuda(api_, api_.cuEventCreate(&start_, CU_EVENT_DEFAULT), "cuEventCreate");
  check_cuda(api_, api_.cuEventCreate(&stop_, CU_EVENT_DEFAULT), "cuEventCreate");
  void* words = nullptr;
  check_cuda(api_, api_.cuMemHostAlloc(&words, 64, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE),
             "cuMemHostAlloc (the blocker's flag)");
  host_words_ = static_cast<uint32_t*>(words);
  std::memset(host_words_, 0, 64);
  check_cuda(api_, api_.cuMemHostGetDevicePointer(&dev_words_, words, 0), "cuMemHostGetDevicePointer");
  check_cuda(api_, api_.cuStreamCreate(&side_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  CUresult r = api_.cuModuleLoadData(&module_, blocker_ptx().data());
  if (r == CUDA_SUCCESS) r = api_.cuModuleGetFunction(&fn_, module_, kBlockerEntry);
  if (r != CUDA_SUCCESS) {
    fn_ = nullptr;
    blocker_error_ = "the blocker kernel did not load: " + device::error_text(api_, r);
  }
  if (module_ && cfg_.l2 == L2Mode::kCold && cfg_.flush != FlushKind::kMemset &&
      api_.cuModuleGetFunction(&flush_fn_, module_, cfg_.flush == FlushKind::kMemsetThenRead ? kCleanReadEntry : kDiscardEntry) !=
          CUDA_SUCCESS)
    flush_fn_ = nullptr;
  if (cfg_.l2 == L2Mode::kCold && cfg_.code_flush) {
    const std::string ptx = code_flush_ptx();
    CUdevice dev = 0;
    int sms = 0;
    check_cuda(api_, api_.cuModuleLoadData(&code_module_, ptx.c_str()),
               "the instruction-cache flush (KOPT_CODE_FLUSH) did not load");
    check_cuda(api_, api_.cuModuleGetFunction(&code_fn_, code_module_, kCodeFlushEntry), "the instruction-cache flush's entry");
    check_cuda(api_, api_.cuDeviceGet(&dev, 0), "cuDeviceGet");
    check_cuda(api_, api_.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "cuDeviceGetAttribute");
    code_blocks_ = static_cast<unsigned>(2 * std::max(sms, 1));
  }
  if (KernelClock::disabled_by_env()) {
    clock_off_ = ClockOffReason::kDisabled;
  } else {
    clock_ = KernelClock::open(&clock_error_);
    if (!clock_) clock_off_ = ClockOffReason::kUnavailable;
  }
  if (api_.cuCtxGetLimit && api_.cuCtxResetPersistingL2Cache &&
      api_.cuCtxGetLimit(&persisting_limit0_, CU_LIMIT_PERSISTING_L2_CACHE_SIZE) == CUDA_SUCCESS)
    persisting_api_ = true;
  if (auto d = remembered_persisting_limit()) persisting_limit0_ = *d;
  if (persisting_api_) {
    // A worker serves many requests on one context: what an earlier request's library left there (a persisting-L2
    // limit, the default stream's access-policy window) is set back now and not counted against this request's
    // libraries (an honest kernel was flagged `device_state_changed` after an L2-pinning one, H200 2026-12-04).
    reset_device_state();
    persisting_resets_ = limit_restores_ = window_resets_ = 0;
    max_limit_seen_ = 0;
  }
  watchdog_ = std::make_unique<Watchdog>([this](uint32_t token) { release(token); });
}

namespace {
std::optional<size_t>& remembered_limit() {
  static std::optional<size_t> limit;
  return limit;
}
}  // namespace

std::optional<size_t> remembered_persisting_limit() { return remembered_limit(); }

void remember_device_defaults(const device::DriverApi& api) {
  size_t limit = 0;
  if (!remembered_limit() && api.cuCtxGetLimit &&
      api.cuCtxGetLimit(&limit, CU_LIMIT_PERSISTING_L2_CACHE_SIZE) == CUDA_SUCCESS)
    remembered_limit() = limit;
}

void Timer::reset_device_state() {
  if (!persisting_api_) return;
  size_t limit = 0;
  if (api_.cuCtxGetLimit(&limit, CU_LIMIT_PERSISTING_L2_CACHE_SIZE) == CUDA_SUCCESS) {
    max_limit_seen_ = std::max(max_limit_seen_, limit);
    if (limit != persisting_limit0_) {
      ++limit_restores_;
      if (CUresult r = api_.cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, persisting_limit0_); r != CUDA_SUCCESS)
        persisting_error_ = "setting the persisting-L2 limit back: " + device::error_text(api_, r);
    }
  }
  CUstreamAttrValue v{};
  if (api_.cuStreamGetAttribute && api_.cuStreamSetAttribute &&
      api_.cuStreamGetAttribute(CU_STREAM_LEGACY, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v) == CUDA_SUCCESS &&
      v.accessPolicyWindow.num_bytes > 0) {
    CUstreamAttrValue none{};
    check_cuda(api_, api_.cuStreamSetAttribute(CU_STREAM_LEGACY, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &none),
               "remove the default stream's access-policy window");
    ++window_resets_;
  }
  if (CUresult r = api_.cuCtxResetPersistingL2Cache(); r != CUDA_SUCCESS) {
    // A device without a persisting carve-out: nothing a candidate can pin; said in device_state.
    persisting_api_ = false;
    persisting_error_ = "cuCtxResetPersistingL2Cache: " + device::error_text(api_, r);
    return;
  }
  check_cuda(api_, api_.cuCtxSynchronize(), "synchronize after the persisting-L2 reset");
  ++persisting_resets_;
}

util::Json Timer::device_state_json() const {
  return {{"persisting_l2_reset", persisting_api_},
          {"persisting_l2_resets", persisting_resets_},
          {"persisting_l2_limit_bytes", persisting_limit0_},
          {"persisting_l2_limit_max_seen_bytes", max_limit_seen_},
          {"persisting_l2_limit_restores", limit_restores_},
          {"access_policy_window_resets", window_resets_},
          {"changed_by_candidate", device_state_changed()},
          {"error", persisting_error_}};
}

Timer::~Timer() {
  watchdog_.reset();  // its thread writes the flag: stopped before the flag is freed
  if (side_) api_.cuStreamDestroy(side_);
  if (module_) api_.cuModuleUnload(module_);
  if (code_module_) api_.cuModuleUnload(code_module_);
  if (host_words_) api_.cuMemFreeHost(host_words_);
  if (start_) api_.cuEventDestroy(start_);
  if (stop_) api_.cuEventDestroy(stop_);
  if (flush_) api_.cuMemFree(flush_);
}

void Timer::release(uint32_t token) {
  std::atomic_ref<uint32_t>(host_words_[0]).store(token, std::memory_order_seq_cst);
}

void Timer::flush_async() {
  check_cuda(api_, api_.cuMemsetD32Async(flush_, token_ * 2654435761u, cfg_.flush_bytes / 4, nullptr), "L2 flush");
  CUdeviceptr buffer = flush_, sink = dev_words_ + 2 * sizeof(uint32_t);
  if (flush_fn_ && flush_kind() == FlushKind::kMemsetThenDiscard) {
    unsigned long long lines = cfg_.flush_bytes / 128;  // cuMemAlloc's buffers are 256-byte aligned
    void* args[] = {&buffer, &lines};
    check_cuda(api_, api_.cuLaunchKernel(flush_fn_, 1024, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr), "L2 flush (discard pass)");
  } else if (flush_fn_) {
    unsigned long long n16 = cfg_.flush_bytes / 16;
    unsigned int never = 0x9e3779b9u;  // the XOR of four equal words is 0: never this
    void* args[] = {&buffer, &n16, &never, &sink};
    check_cuda(api_, api_.cuLaunchKernel(flush_fn_, 1024, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr), "L2 flush (read pass)");
  }
  if (code_fn_) {
    unsigned int seed = token_;
    void* args[] = {&sink, &seed};
    check_cuda(api_, api_.cuLaunchKernel(code_fn_, code_blocks_, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr),
               "instruction-cache flush");
  }
}

std::string_view flush_kind_name(FlushKind k) {
  switch (k) {
    case FlushKind::kMemset: return "memset";
    case FlushKind::kMemsetThenRead: return "memset_then_read";
    case FlushKind::kMemsetThenDiscard: return "memset_then_discard";
  }
  return "memset";
}

std::optional<FlushKind> parse_flush_kind(std::string_view name) {
  for (FlushKind k : {FlushKind::kMemset, FlushKind::kMemsetThenRead, FlushKind::kMemsetThenDiscard})
    if (name == flush_kind_name(k)) return k;
  return std::nullopt;
}

FlushKind flush_kind_from_env() {
  const char* v = std::getenv("KOPT_L2_FLUSH");
  if (!v || !*v) return FlushKind::kMemsetThenRead;
  if (auto k = parse_flush_kind(v)) return *k;
  throw Fatal{RunStatus::kInternal, std::string("KOPT_L2_FLUSH=") + v +
                                        ": not an L2 flush; use memset, memset_then_read (the default) or memset_then_discard"};
}

bool code_flush_from_env() {
  const char* v = std::getenv("KOPT_CODE_FLUSH");
  if (!v || !*v || std::string_view(v) == "0") return false;
  if (std::string_view(v) == "1") return true;
  throw Fatal{RunStatus::kInternal, std::string("KOPT_CODE_FLUSH=") + v + ": use 1 (flush the instruction caches too) or 0"};
}

int Timer::warm_up(const Call& call) {
  // Module load, first touch, clocks ramping: at least 3 calls and 50 ms.
  const auto w0 = Clock::now();
  int i = 0;
  for (; i < 3 || ms_between(w0, Clock::now()) < 50; ++i) {
    call();
    check_cuda(api_, api_.cuCtxSynchronize(), "warm-up");
    if (i > 1000) break;
  }
  return i;
}

GpuSample Timer::sample(const Call& call, TimingMethod method, double watchdog_ms, const std::vector<Region>* watch,
                        double hold_ms) {
  const bool clocked = clock_ && !watch;
  reset_device_state();
  if (clocked) clock_->drain();
  GpuSample s;
  switch (method) {
    case TimingMethod::kBlocked:
      if (!blocker_available()) throw Fatal{RunStatus::kInternal, "blocked timing without a blocker: " + blocker_error_};
      s = blocked_sample(call, watchdog_ms, watch, hold_ms);
      break;
    case TimingMethod::kEventsDefaultStream: s = unblocked_sample(call, false); break;
    case TimingMethod::kDeviceSyncBeforeStop: s = unblocked_sample(call, true); break;
    default: throw Fatal{RunStatus::kInternal, std::string("not a timing method of the C++ runner: ") + std::string(method_name(method))};
  }
  s.event_ms = s.gpu_ms;
  if (!clocked || s.discarded()) return s;
  // The sample synchronised: every record is complete.
  auto span = solve_span(clock_->collect(), method == TimingMethod::kBlocked, cfg_.l2 == L2Mode::kCold,
                         (flush_kind() != FlushKind::kMemset ? 1 : 0) + (code_flush() ? 1 : 0));
  if (!span) {
    ++cupti_missing_;
    return s;
  }
  s.gpu_ms = span->span_ms;
  s.busy_ms = span->busy_ms;
  s.kernels = span->count;
  s.clock = GpuClock::kCuptiActivity;
  return s;
}

GpuSample Timer::unblocked_sample(const Call& call, bool device_sync_before_stop) {
  GpuSample s;
  ++token_;
  if (cfg_.l2 == L2Mode::kCold) {
    flush_async();
    check_cuda(api_, api_.cuCtxSynchronize(), "L2 flush");
  }
  const auto h0 = Clock::now();
  check_cuda(api_, api_.cuEventRecord(start_, nullptr), "cuEventRecord");
  call();
  s.return_ms = ms_between(h0, Clock::now());
  if (device_sync_before_stop) check_cuda(api_, api_.cuCtxSynchronize(), "synchronize");
  check_cuda(api_, api_.cuEventRecord(stop_, nullptr), "cuEventRecord");
  check_cuda(api_, api_.cuCtxSynchronize(), "synchronize after sample");
  s.host_ms = ms_between(h0, Clock::now());
  float e = 0;
  check_cuda(api_, api_.cuEventElapsedTime(&e, start_, stop_), "cuEventElapsedTime");
  s.gpu_ms = e;
  return s;
}

GpuSample Timer::blocked_sample(const Call& call, double watchdog_ms, const std::vector<Region>* watch, double hold_ms,
                                const Snapshot* taken) {
  GpuSample s;
  Snapshot before;
  if (watch && !taken) before = snapshot(*watch);
  uint32_t token = ++token_;
  if (token == 0) token = ++token_;  // 0 is the flag's initial value: never a token
  CUdeviceptr flag = dev_words_, timed_out = dev_words_ + sizeof(uint32_t);
  unsigned long long timeout_ns = static_cast<unsigned long long>((watchdog_ms + hold_ms + 2000.0) * 1e6);
  void* args[] = {&flag, &token, &timeout_ns, &timed_out};
  check_cuda(api_, api_.cuLaunchKernel(fn_, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr), "launch of the blocker");
  // From here on every way out releases the flag, or the queued work would wait for the blocker's timeout.
  watchdog_->arm(token, watchdog_ms + hold_ms);
  bool released = false, fired = false;
  auto finish = [&] {
    if (released) return;
    fired = watchdog_->disarm();
    release(token);
    released = true;
  };
  struct Guard {
    decltype(finish)& f;
    ~Guard() { f(); }
  } guard{finish};
  if (cfg_.l2 == L2Mode::kCold) flush_async();
  check_cuda(api_, api_.cuEventRecord(start_, nullptr), "cuEventRecord");
  const auto h0 = Clock::now();
  call();
  const auto h_ret = Clock::now();
  s.return_ms = ms_between(h0, h_ret);
  check_cuda(api_, api_.cuEventRecord(stop_, nullptr), "cuEventRecord");
  bool looked = false;
  if (watch) {
    // Work solve() put on the legacy or a blocking stream cannot have run yet; work on a non-blocking stream
    // can. Give it time, then compare the outputs (read on a private non-blocking stream).
    std::this_thread::sleep_until(h_ret + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(hold_ms)));
    s.outputs_changed_while_held = changed_while_held(*watch, taken ? *taken : before);
    looked = true;
  }
  finish();
  // The watchdog fired while solve() had not returned (solve waited on the GPU), or, rarely, during the look.
  s.released_by_watchdog = fired && (!looked || s.return_ms >= watchdog_ms);
  check_cuda(api_, api_.cuCtxSynchronize(), "synchronize after sample");
  s.host_ms = ms_between(h0, Clock::now());
  s.blocker_timed_out = std::atomic_ref<uint32_t>(host_words_[1]).load() == token;
  if (fired && !s.released_by_watchdog) s.outputs_changed_while_held = false;  // the look itself was too slow
  float e = 0;
  check_cuda(api_, api_.cuEventElapsedTime(&e, start_, stop_), "cuEventElapsedTime");
  s.gpu_ms = e;
  return s;
}

Timer::Snapshot Timer::snapshot(const std::vector<Region>& regions) {
  Snapshot out;
  const auto pieces = watched_pieces(regions);
  auto& blocks = snapshot_blocks();
  if (blocks.size() < pieces.size()) blocks.resize(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    unsigned char* p = pinned(api_, blocks[i], pieces[i].bytes, "cuMemHostAlloc (probe snapshot)");
    check_cuda(api_, api_.cuMemcpyDtoH(p, pieces[i].ptr, pieces[i].bytes), "read outputs (probe)");
    out.emplace_back(p, pieces[i].bytes);
  }
  return out;
}

bool Timer::changed_while_held(const std::vector<Region>& regions, const Snapshot& before) {
  const auto pieces = watched_pieces(regions);
  size_t need = 0;
  for (const auto& r : pieces) need = std::max(need, r.bytes);
  unsigned char* staging = pinned(api_, staging_block(), need, "cuMemHostAlloc (probe staging)");
  for (size_t i = 0; i < pieces.size(); ++i) {
    check_cuda(api_, api_.cuMemcpyDtoHAsync(staging, pieces[i].ptr, pieces[i].bytes, side_), "read outputs while held");
    check_cuda(api_, api_.cuStreamSynchronize(side_), "read outputs while held");
    if (std::memcmp(staging, before[i].data(), pieces[i].bytes) != 0) return true;
  }
  return false;
}

double Timer::call_sample(const Call& call, const std::function<void()>& prepare) {
  ++token_;
  // The kernel clock's recording costs each launch host time an application would not pay: paused for the call.
  reset_device_state();
  if (clock_ && !clock_->pause()) drop_clock("CUPTI refused to pause its recording for a call sample");
  if (prepare) prepare();
  if (cfg_.l2 == L2Mode::kCold) {
    flush_async();
    check_cuda(api_, api_.cuCtxSynchronize(), "L2 flush");
  }
  const auto h0 = Clock::now();
  call();
  check_cuda(api_, api_.cuCtxSynchronize(), "synchronize after call");
  const double ms = ms_between(h0, Clock::now());
  if (clock_ && !clock_->resume()) drop_clock("CUPTI refused to resume its recording after a call sample");
  return ms;
}

void Timer::drop_clock(std::string why) {
  // The samples after this have no span: the series drops a few, then turns to events (SeriesClock), and says why.
  clock_.reset();
  clock_off_ = ClockOffReason::kUnavailable;
  clock_error_ = std::move(why);
}

ProbeFigures Timer::probe(const Call& call, const std::function<void()>& reset, const std::vector<Region>& outputs,
                          std::optional<TimingMethod> forced) {
  ProbeFigures f;
  f.forced = forced;
  f.blocker_available = blocker_available();
  std::vector<double> ev, host, ret;
  auto since = Clock::now();
  auto cost = [&since](double& into) {
    const auto now = Clock::now();
    into = ms_between(since, now);
    since = now;
  };
  for (int i = 0; i < 5; ++i) {
    GpuSample s = unblocked_sample(call, false);
    ev.push_back(s.gpu_ms);
    host.push_back(s.host_ms);
    ret.push_back(s.return_ms);
  }
  f.event_ms = median_of(ev);
  f.host_ms = median_of(host);
  f.return_ms = median_of(ret);
  cost(f.unblocked_cost_ms);
  if (forced || events_miss_work(f.event_ms, f.host_ms) || !f.blocker_available) return f;
  const double bound = watchdog_bound_ms(f.return_ms);
  auto account = [&](const GpuSample& s) {
    ++f.blocked_attempts;
    if (s.released_by_watchdog) ++f.watchdog_releases;
    if (s.blocker_timed_out) ++f.blocker_timeouts;
    return !s.discarded();
  };
  reset();  // fresh poison: any output byte that changes while the default stream is held was written elsewhere
  const Snapshot before = snapshot(outputs);
  cost(f.snapshot_cost_ms);
  GpuSample first = blocked_sample(call, bound, &outputs, escape_hold_ms(f.host_ms), &before);
  cost(f.held_cost_ms);
  if (!account(first)) return f;
  f.outputs_changed_while_held = first.outputs_changed_while_held;
  if (f.outputs_changed_while_held) return f;
  std::vector<double> blocked = {first.gpu_ms};
  for (int i = 0; i < 4; ++i) {
    GpuSample s = blocked_sample(call, bound, nullptr, 0);
    if (!account(s)) return f;
    blocked.push_back(s.gpu_ms);
  }
  f.blocked_ms = median_of(blocked);
  cost(f.blocked_cost_ms);
  return f;
}

TimedSeries time_series(Timer& timer, const Timer::Call& call, const std::function<void()>& reset,
                        const std::vector<Region>& outputs, const SeriesOptions& o, const SampleHooks* hooks) {
  TimedSeries s;
  s.warmup_calls = timer.warm_up(call);
  s.probe = timer.probe(call, reset, outputs, o.forced);
  s.decision = decide_method(s.probe);
  if (s.decision.method == TimingMethod::kBlocked && !timer.blocker_available())
    s.decision = {TimingMethod::kEventsDefaultStream, FallbackReason::kBlockerUnavailable};
  s.watchdog_bound_ms = watchdog_bound_ms(s.probe.return_ms);
  SeriesClock series_clock(timer.kernel_clock() ? GpuClock::kCuptiActivity : GpuClock::kEvents, timer.clock_off_reason(),
                    kMaxMissingSpans);
  auto t0 = Clock::now();
  int releases = 0;
  while (true) {
    const bool over_budget = ms_between(t0, Clock::now()) > o.max_time_s * 1000;
    if (hooks && hooks->before) hooks->before();
    GpuSample g = timer.sample(call, s.decision.method, s.watchdog_bound_ms);
    if (hooks && hooks->after) hooks->after();
    if (g.discarded()) {
      ++s.discarded_samples;
      if (++releases >= kMaxWatchdogReleases) {  // solve() waits on the GPU after all: start again without the blocker
        s.decision = {TimingMethod::kEventsDefaultStream, FallbackReason::kSolveWaitedOnGpu};
        s.clear();
        s.call_ms.clear();
        t0 = Clock::now();
      }
      continue;
    }
    const auto step = series_clock.add(g.clock == GpuClock::kCuptiActivity);
    if (step == SeriesClock::Step::kDrop) continue;
    if (step == SeriesClock::Step::kSwitchToEvents) s.to_events();  // one clock per series: the samples so far too
    s.add(series_clock.clock() == GpuClock::kCuptiActivity, g.gpu_ms, g.event_ms, g.busy_ms, g.kernels);
    if (o.with_call) {
      s.call_ms.push_back(timer.call_sample(call, hooks ? hooks->before_call : std::function<void()>()));
    }
    const int n = static_cast<int>(s.gpu_ms.size());
    if (n >= o.max_samples) {
      s.stop_reason = SeriesStop::kMaxSamples;
      break;
    }
    if (n >= o.min_samples && (over_budget || ms_between(t0, Clock::now()) > o.max_time_s * 1000)) {
      s.stop_reason = SeriesStop::kTimeBudget;
      break;
    }
    if (n >= o.min_samples && n % 5 == 0 && ci_within(compute_stats(s.gpu_ms), o.target_ci)) {
      s.stop_reason = SeriesStop::kCiReached;
      break;
    }
  }
  s.clock = series_clock.clock();
  s.clock_off = series_clock.off_reason();
  if (s.clock_off == ClockOffReason::kUnavailable) s.clock_off_detail = timer.clock_error();
  s.cupti_missing = series_clock.missing();
  return s;
}

namespace {
constexpr std::pair<SeriesStop, std::string_view> kSeriesStops[] = {
    {SeriesStop::kNone, ""},
    {SeriesStop::kCiReached, "ci_reached"},
    {SeriesStop::kTimeBudget, "time_budget"},
    {SeriesStop::kMaxSamples, "max_samples"},
};
}  // namespace

std::string_view series_stop_name(SeriesStop s) {
  for (const auto& [v, name] : kSeriesStops)
    if (v == s) return name;
  return "";
}

std::optional<SeriesStop> parse_series_stop(std::string_view name) {
  for (const auto& [v, n] : kSeriesStops)
    if (n == name) return v;
  return std::nullopt;
}

util::Json probe_cost_json(const ProbeFigures& p) {
  return {{"unblocked", p.unblocked_cost_ms},
          {"snapshot", p.snapshot_cost_ms},
          {"held", p.held_cost_ms},
          {"blocked", p.blocked_cost_ms}};
}

util::Json series_info_json(const TimedSeries& s, L2Mode l2, const std::string& blocker_error) {
  const auto& p = s.probe;
  util::Json probe = {{"event_median_ms", p.event_ms},
                      {"host_median_ms", p.host_ms},
                      {"return_median_ms", p.return_ms},
                      {"blocked_median_ms", p.blocked_ms},
                      {"blocker_available", p.blocker_available},
                      {"blocked_attempts", p.blocked_attempts},
                      {"watchdog_releases", p.watchdog_releases},
                      {"blocker_timeouts", p.blocker_timeouts},
                      {"outputs_changed_while_held", p.outputs_changed_while_held},
                      {"cost_ms", probe_cost_json(p)}};
  if (!blocker_error.empty()) probe["blocker_error"] = blocker_error;
  util::Json j = {{"timing_method", method_name(s.decision.method)},
                  {"launch_excluded", excludes_launch(s.decision.method)},
                  {"fallback_reason", reason_name(s.decision.reason)},
                  {"fallback_reason_text", s.decision.reason == FallbackReason::kNone ? "" : describe(s.decision.reason)},
                  {"l2", l2_name(l2)},
                  {"stop_reason", series_stop_name(s.stop_reason)},
                  {"warmup_calls", s.warmup_calls},
                  {"discarded_samples", s.discarded_samples},
                  {"watchdog_bound_ms", s.watchdog_bound_ms},
                  {"host_median_ms", median_of(s.call_ms)},
                  {"probe", probe}};
  j["gpu_clock"] = clock_name(s.clock);
  j["event_median_ms"] = median_of(s.event_ms);
  j["cupti_missing"] = s.cupti_missing;
  if (s.clock == GpuClock::kCuptiActivity) {
    j["busy_median_ms"] = median_of(s.busy_ms);
    j["kernels_per_call"] = median_of(s.kernels);
  } else {
    j["gpu_clock_off_reason"] = off_reason_name(s.clock_off);
    std::string text(describe(s.clock_off));
    if (!s.clock_off_detail.empty()) text += ": " + s.clock_off_detail;
    j["gpu_clock_off_reason_text"] = text;
  }
  if (s.decision.reason == FallbackReason::kWorkOutsideDefaultStream ||
      s.decision.reason == FallbackReason::kOutputsWrittenWhileHeld)
    j["work_outside_default_stream"] = true;
  return j;
}

}  // namespace kopt::runner
