#pragma once
// Timing one solve() on the GPU (docs/RUNNER.md, "Timing"). The child (runner/child.cpp) hands the Timer a
// `Call` (one solve() with its arguments bound) and gets samples back; nothing here knows about libraries,
// golden data or JSON beyond the series' own info, so a persistent measuring process can reuse it as is.
//
// A blocked sample (TimingMethod::kBlocked), all on the legacy default stream:
//   blocker kernel (spins on a host-mapped flag) | L2 flush | start event | solve()'s launches | stop event
// enqueued before the GPU runs any of it; then the host releases the flag and reads the events: GPU time from
// the first kernel's start to the last one's end, without the host's launch latency and with the flush outside.
// A watchdog thread releases the flag if solve() has not returned within a bound (a solve() that synchronises
// inside would otherwise deadlock); that sample is discarded and the method falls back (timing_method.h).
//
// The clock of gpu_ms: where CUPTI is available (runner/cupti.h), the kernel clock: the GPU timestamps of the
// kernels, memsets and memcpys solve() issued, from the first one's start to the last one's end (the events add a
// fixed 2-4 us of their own: docs/RUNNER.md). The events' figure is kept beside it (event_ms) and is the clock
// where CUPTI is off or its records of a series fall short (runner/gpu_clock.h, SeriesClock).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "device/cuda_driver.h"
#include "runner/clocked_samples.h"
#include "runner/cupti.h"
#include "runner/gpu_clock.h"
#include "runner/timing_method.h"
#include "runner/watchdog.h"
#include "util/json_io.h"

namespace kopt::runner {

// How a cold sample empties the L2 (docs/RUNNER.md, "The L2 flush"). kMemset: a memset of the flush buffer, which
// leaves the L2 full of its dirty lines. kMemsetThenRead: the memset, then a read pass over the buffer
// (blocker.cu's kopt_l2_clean_read), which leaves clean lines the timed kernel evicts for free: the default since
// the H200 showed the memset's dirty lines cost 13-27 us kernels 10-20% (tests/data/perf/h200-2026-12-02/HISTORY.md §5).
// kMemsetThenDiscard: the memset, then discard.global.L2 over the buffer (blocker.cu's kopt_l2_discard), which
// drops its lines without writing them back: the L2 is left empty of valid lines, as after Nsight Compute's
// `--cache-control all` (the kernel then allocates into invalid lines instead of evicting clean ones).
enum class FlushKind { kMemset, kMemsetThenRead, kMemsetThenDiscard };
std::string_view flush_kind_name(FlushKind k);                     // "memset", "memset_then_read", "memset_then_discard"
std::optional<FlushKind> parse_flush_kind(std::string_view name);  // the inverse of flush_kind_name
// KOPT_L2_FLUSH: one of flush_kind_name's names; unset or empty: kMemsetThenRead. Throws Fatal naming the
// choices on any other value (the child reports it; a typo is never measured as the default).
FlushKind flush_kind_from_env();

// KOPT_CODE_FLUSH=1: a cold sample also empties the SMs' instruction caches (runner/code_flush.h); unset or 0: not.
// Throws Fatal naming the choices on any other value.
bool code_flush_from_env();

struct TimerConfig {
  L2Mode l2 = L2Mode::kCold;
  size_t flush_bytes = 256u << 20;  // written before every cold sample: more than 4x the H200's 60 MB L2
  FlushKind flush = flush_kind_from_env();
  bool code_flush = code_flush_from_env();  // cold only
};

// A device buffer solve() writes (outputs, in-out buffers): the probe looks whether it changes while held.
struct Region {
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
};

struct GpuSample {
  double gpu_ms = 0;     // on `clock`: the span of solve()'s GPU work (cupti_activity), or event_ms (events)
  double event_ms = 0;   // between the events
  double busy_ms = 0;    // cupti_activity: the sum of solve()'s records' durations; 0 on events
  int kernels = 0;       // cupti_activity: solve()'s records (kernels, memsets, memcpys); 0 on events
  GpuClock clock = GpuClock::kEvents;
  double host_ms = 0;    // host time of the whole sample (unblocked methods: launch, GPU work, synchronisation)
  double return_ms = 0;  // host time until solve() returned
  bool released_by_watchdog = false;
  bool blocker_timed_out = false;
  bool outputs_changed_while_held = false;  // only when the sample was asked to look (probe)
  bool discarded() const { return released_by_watchdog || blocker_timed_out; }
};

struct SeriesOptions {
  double max_time_s = 5;
  int min_samples = 10;
  int max_samples = 2000;
  double target_ci = 0.01;
  bool with_call = true;  // one call_ms sample after every GPU sample
  std::optional<TimingMethod> forced;
};

// Why a timed series stopped taking samples (timing_info.stop_reason); kNone: it has not stopped yet.
enum class SeriesStop { kNone, kCiReached, kTimeBudget, kMaxSamples };
std::string_view series_stop_name(SeriesStop s);                     // ci_reached | time_budget | max_samples; "" for kNone
std::optional<SeriesStop> parse_series_stop(std::string_view name);  // the reverse ("" -> kNone)

// A timed series: the GPU samples (`gpu_ms`, the ranking figure), the host-observed call samples (`call_ms`)
// and how they were taken.
// gpu_ms, event_ms, busy_ms, kernels: the samples on the series' clock (clocked_samples.h).
struct TimedSeries : ClockedSamples {
  std::vector<double> call_ms;
  GpuClock clock = GpuClock::kEvents;   // of every gpu_ms sample
  ClockOffReason clock_off = ClockOffReason::kNone;
  std::string clock_off_detail;         // kUnavailable: what failed
  int cupti_missing = 0;                // samples on the kernel clock without a span (dropped, or the switch)
  ProbeFigures probe;
  MethodDecision decision;
  SeriesStop stop_reason = SeriesStop::kNone;
  int warmup_calls = 0;
  int discarded_samples = 0;  // blocked samples the watchdog released (never part of gpu_ms)
  double watchdog_bound_ms = 0;
};

// What runs around each timed sample of a series (docs/RUNNER.md "Fresh inputs between timed calls"): `before`
// before each GPU sample (fresh inputs, or an audit's inputs and poisoned outputs; synchronous, so outside the
// sample), `after` after it (an audit's check), `before_call` before each call sample (with the kernel clock
// paused). Any may throw Fatal.
// Not run around the warm-up or the probe, which stay on the seed's inputs.
struct SampleHooks {
  std::function<void()> before;
  std::function<void()> after;
  std::function<void()> before_call;
};

// The persisting-L2 limit as the process found it, read once before any candidate library is loaded (the child's
// and the worker's start): what every Timer sets back before each sample. A Timer made before any call to this
// reads the limit itself.
void remember_device_defaults(const device::DriverApi& api);
std::optional<size_t> remembered_persisting_limit();

class Timer {
 public:
  using Call = std::function<void()>;

  // Allocates the flush buffer, the events, the host-mapped flag and a private non-blocking stream, and loads the
  // blocker from its embedded PTX (a failure to load it is recorded, not thrown: the methods without it remain).
  // Throws Fatal on any other CUDA error. Needs a current context.
  Timer(const device::DriverApi& api, TimerConfig cfg);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  bool blocker_available() const { return fn_ != nullptr; }
  // The flush actually used: the one asked for when cold and its kernel loaded, else kMemset.
  FlushKind flush_kind() const { return flush_fn_ ? cfg_.flush : FlushKind::kMemset; }
  bool code_flush() const { return code_fn_ != nullptr; }  // the instruction caches too (KOPT_CODE_FLUSH=1, cold)
  const std::string& blocker_error() const { return blocker_error_; }
  // The kernel clock (opened here unless KOPT_CUPTI=0; nullptr with the reason when off).
  bool kernel_clock() const { return clock_ != nullptr; }
  ClockOffReason clock_off_reason() const { return clock_off_; }
  const std::string& clock_error() const { return clock_error_; }
  int cupti_missing() const { return cupti_missing_; }  // samples on the kernel clock that had no span
  L2Mode l2() const { return cfg_.l2; }
  // What the device-state reset before each sample found and undid (reset_device_state): `timing_info.device_state`.
  util::Json device_state_json() const;
  // True when a sample found the persisting-L2 limit or the default stream's access-policy window changed: the
  // candidate changes device-wide state, flagged in the result.
  bool device_state_changed() const { return limit_restores_ > 0 || window_resets_ > 0; }

  // At least 3 calls and 50 ms, each followed by a device-wide synchronisation. Returns the count.
  int warm_up(const Call& call);

  // One GPU sample with `method` (kBlocked: with the watchdog at `watchdog_ms`; when `watch` is given, after
  // solve() returned the GPU stays held `hold_ms` and the regions are compared with their content before).
  // With the kernel clock, gpu_ms is solve()'s span when its records give one (clock cupti_activity), else the
  // event figure (clock events, counted in cupti_missing). A sample that watches is always on events: its reads
  // on the side stream would be among the records.
  GpuSample sample(const Call& call, TimingMethod method, double watchdog_ms = 1000,
                   const std::vector<Region>* watch = nullptr, double hold_ms = 0);

  // Host-observed time of one call as an application sees it: (flush, synchronise,) then the clock around
  // solve() and a device-wide synchronisation. The kernel clock's recording is paused meanwhile (its cost per
  // launch is the tool's, not the application's), and so is `prepare` (a series' fresh inputs, synchronous): run
  // while the clock recorded, its copies left CUPTI work that the timed call then paid, 4-6 us a call on the H200.
  double call_sample(const Call& call, const std::function<void()>& prepare = {});

  // Five unblocked samples, then (unless they already decide) blocked ones: the first on freshly reset outputs,
  // looking for writes while held. `reset` restores inputs and poisons outputs (synchronously).
  ProbeFigures probe(const Call& call, const std::function<void()>& reset, const std::vector<Region>& outputs,
                     std::optional<TimingMethod> forced);

 private:
  // Before every GPU and call sample: the L2's persisting lines back to normal (cuCtxResetPersistingL2Cache), the
  // persisting-L2 limit back to its value when the Timer was made, and an access-policy window on the legacy stream
  // removed, then a synchronisation (so the cold flush evicts what a candidate pinned: "cold" means cold, by design).
  void reset_device_state();
  // The watched pieces' content (watched_pieces), in the process's pinned blocks: valid until the next snapshot.
  using Snapshot = std::vector<std::span<const unsigned char>>;
  // `taken`: the watched regions' content, read before (else read here).
  GpuSample blocked_sample(const Call& call, double watchdog_ms, const std::vector<Region>* watch, double hold_ms,
                           const Snapshot* taken = nullptr);
  GpuSample unblocked_sample(const Call& call, bool device_sync_before_stop);
  void flush_async();
  void drop_clock(std::string why);  // the kernel clock off for the rest of this timer's life
  void release(uint32_t token);
  Snapshot snapshot(const std::vector<Region>& regions);
  bool changed_while_held(const std::vector<Region>& regions, const Snapshot& before);

  const device::DriverApi& api_;
  TimerConfig cfg_;
  CUdeviceptr flush_ = 0;
  CUevent start_ = nullptr, stop_ = nullptr;
  CUmodule module_ = nullptr;
  CUfunction fn_ = nullptr;
  CUfunction flush_fn_ = nullptr;  // the kernel after the flush memset: the read or discard pass (nullptr: memset only)
  CUmodule code_module_ = nullptr;  // the instruction-cache flush (runner/code_flush.h), its own module
  CUfunction code_fn_ = nullptr;
  unsigned code_blocks_ = 0;  // two blocks of four warps per SM: every SM's four schedulers run it
  std::string blocker_error_;
  std::unique_ptr<KernelClock> clock_;
  ClockOffReason clock_off_ = ClockOffReason::kNone;
  std::string clock_error_;
  int cupti_missing_ = 0;
  uint32_t* host_words_ = nullptr;  // pinned, mapped: [0] the flag the host writes, [1] the blocker's timeout mark
  CUdeviceptr dev_words_ = 0;
  CUstream side_ = nullptr;  // non-blocking: reads outputs while the default stream is held (into pinned memory the
                             // process keeps: timer.cpp's staging_block)
  uint32_t token_ = 0;
  size_t persisting_limit0_ = 0;  // CU_LIMIT_PERSISTING_L2_CACHE_SIZE when the Timer was made
  bool persisting_api_ = false;   // the driver gave the limit: the reset runs
  int persisting_resets_ = 0, limit_restores_ = 0, window_resets_ = 0;
  size_t max_limit_seen_ = 0;
  std::string persisting_error_;  // a reset the driver refused (then no more resets)
  std::unique_ptr<Watchdog> watchdog_;  // last: its thread may call release() until it is destroyed
};

// The whole measurement of one solve(): warm-up, probe, method decision, then samples (a GPU sample and a call
// sample per round) until the median's CI is within options.target_ci (runner/stats.h ci_within, checked every
// 5 samples from min_samples), or max_samples, or max_time_s. Blocked samples the watchdog releases are
// discarded; after kMaxWatchdogReleases the series restarts with events_default_stream. One clock for the whole
// series (SeriesClock, kMaxMissingSpans): a switch to events turns the samples so far into their event figures.
TimedSeries time_series(Timer& timer, const Timer::Call& call, const std::function<void()>& reset,
                        const std::vector<Region>& outputs, const SeriesOptions& options,
                        const SampleHooks* hooks = nullptr);

// `timing_info` of a result: timing_method, launch_excluded, fallback_reason (+ _text), l2, stop_reason,
// warmup_calls, discarded_samples, watchdog_bound_ms, host_median_ms (the call samples' median), the probe's
// figures, and work_outside_default_stream: true when that is why; the clock: gpu_clock (cupti_activity |
// events), gpu_clock_off_reason (+ _text) on events, event_median_ms (the event figures of the same samples,
// always), busy_median_ms and kernels_per_call on cupti_activity, cupti_missing.
util::Json series_info_json(const TimedSeries& s, L2Mode l2, const std::string& blocker_error);
// Where a probe's host time went (ProbeFigures' *_cost_ms): {unblocked, snapshot, held, blocked}.
util::Json probe_cost_json(const ProbeFigures& p);

}  // namespace kopt::runner
