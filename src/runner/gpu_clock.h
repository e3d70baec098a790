#pragma once
// The kernel clock's pure side (docs/RUNNER.md, "Timing"): what CUPTI's activity records of one sample say about
// solve(), and which clock a series uses. The CUPTI side (loading it, collecting records) is runner/cupti.h; this
// file has no I/O, so the rules are tested with values.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace kopt::runner {

// What a record timed on the GPU.
enum class ActivityKind { kKernel, kMemset, kMemcpy };

// One activity record: GPU timestamps in ns (CUPTI's clock; only differences mean anything).
struct GpuActivity {
  ActivityKind kind = ActivityKind::kKernel;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
};

// solve()'s work in one sample, as Nsight Systems draws it.
struct ActivitySpan {
  double span_ms = 0;  // the first record's start to the last one's end
  double busy_ms = 0;  // the sum of the records' durations (less than span_ms where there are gaps, more where
                       // records overlap on several streams)
  int count = 0;       // kernels, memsets and memcpys
};

// The records of one sample, in any order: sorted by start; in a blocked sample the first record is the blocker
// kernel, then with a cold L2 the first remaining one is the flush memset; both are dropped and the rest is
// solve()'s. Nullopt when nothing is left, when a dropped record is not of the kind expected there (a record
// went missing), or when any record is malformed (end before start, or no timestamps: both 0).
// `flush_kernels`: the kernels the cold flush launches after its memset (timer.h: the read or discard pass, the
// instruction-cache flush), dropped too.
std::optional<ActivitySpan> solve_span(std::vector<GpuActivity> records, bool blocked, bool cold_l2, int flush_kernels = 0);

// Which clock gives a sample's gpu_ms.
enum class GpuClock {
  kEvents,          // "events": CUDA events around solve()'s launches (runner/timer.h)
  kCuptiActivity,   // "cupti_activity": the span of solve()'s kernels, memsets and memcpys (CUPTI activity API)
};
std::string_view clock_name(GpuClock c);

// Why a series is on events (kNone when it is on the kernel clock).
enum class ClockOffReason {
  kNone,
  kDisabled,               // KOPT_CUPTI=0
  kUnavailable,            // libcupti was not found, or a CUPTI call failed (the detail says which)
  kNoSpanInFirstSamples,   // one of the first samples had no span: records missing or not as expected
  kTooManyMissingSpans,    // later samples without a span, more than the series allows
};
std::string_view off_reason_name(ClockOffReason r);  // snake_case, "" for kNone
std::string_view describe(ClockOffReason r);

// A series' clock, sample by sample. It starts on `start` (events when no kernel clock is open, with `why_off`);
// on the kernel clock, a sample without a span among the first kDecidingSamples switches the series to events,
// later ones are dropped up to `max_missing` of them, and one more switches it. Every sample carries its event
// figure too, so a switch turns the samples so far into their event figures: a series never mixes clocks.
class SeriesClock {
 public:
  static constexpr int kDecidingSamples = 2;
  enum class Step { kKeep, kDrop, kSwitchToEvents };

  SeriesClock(GpuClock start, ClockOffReason why_off, int max_missing);
  // One sample that completed (not discarded by the watchdog): kKeep it (on the current clock), kDrop it, or
  // kSwitchToEvents (keep it, on events, and turn the earlier samples into their event figures).
  Step add(bool has_span);
  GpuClock clock() const { return clock_; }
  ClockOffReason off_reason() const { return why_off_; }
  int missing() const { return missing_; }  // samples on the kernel clock that had no span

 private:
  GpuClock clock_;
  ClockOffReason why_off_;
  int max_missing_;
  int seen_ = 0;
  int missing_ = 0;
};

// Samples a time series drops for a missing span before it switches to events.
inline constexpr int kMaxMissingSpans = 3;

}  // namespace kopt::runner
