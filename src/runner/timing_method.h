#pragma once
// How a timing sample is taken, and the pure decision of which way to take them for one solve() (docs/RUNNER.md,
// "Timing"). The GPU side lives in runner/timer.h; this file has no I/O, so the rules are tested with values.
#include <optional>
#include <string_view>
#include <vector>

namespace kopt::runner {

// One table (timing_method.cpp). The first two exclude the host's launch: the events and solve()'s work are all
// queued before the GPU runs any of them.
enum class TimingMethod {
  kBlocked,               // events_blocked: queued behind a kernel spinning on a host-mapped flag (C++ child)
  kBehindSleep,           // events_behind_sleep: queued behind torch.cuda._sleep (Triton child; docs/TRITON.md)
  kEventsDefaultStream,   // events_default_stream: events around a host-launched call (includes the launch)
  kDeviceSyncBeforeStop,  // events_with_device_sync_before_stop: a device-wide synchronisation before the stop
                          // event, so work on any stream is inside (includes the launch and the sync's wake-up)
  kPerfCounter,           // perf_counter: host clock around the call (CPU devices in the Python tests)
};
std::string_view method_name(TimingMethod m);  // the JSON name above
std::string_view describe(TimingMethod m);
std::optional<TimingMethod> parse_method(std::string_view name);
bool excludes_launch(TimingMethod m);

// --l2: cold (the default) flushes the L2 cache before every sample, outside the timed region; warm leaves in
// L2 whatever the previous call left (for kernels whose data live in cache in their application).
enum class L2Mode { kCold, kWarm };
std::string_view l2_name(L2Mode m);
std::optional<L2Mode> parse_l2(std::string_view name);

// Why a solve() is not timed with the blocker (kNone when it is).
enum class FallbackReason {
  kNone,
  kForced,                    // --timing-method named another method
  kBlockerUnavailable,        // the blocker's PTX did not load (an old driver): events around the call instead
  kSolveWaitedOnGpu,          // solve() did not return while the GPU was held (it synchronises, or it queued
                              // more launches than the queue holds): released by the watchdog, sample discarded
  kWorkOutsideDefaultStream,  // the events missed most of the host-observed time (work on a non-blocking stream)
  kOutputsWrittenWhileHeld,   // outputs changed while the default stream was held: work on a non-blocking stream
};
std::string_view reason_name(FallbackReason r);  // snake_case, "" for kNone
std::string_view describe(FallbackReason r);

// What the probe saw (medians over its samples); the input of decide_method.
struct ProbeFigures {
  // Unblocked samples: events around a host-launched call on the legacy default stream, the host time of the
  // whole sample (through a device-wide synchronisation) and the host time until solve() returned.
  double event_ms = 0, host_ms = 0, return_ms = 0;
  bool blocker_available = false;
  int blocked_attempts = 0;       // blocked samples tried
  int watchdog_releases = 0;      // of which the watchdog had to release (solve() did not return in time)
  int blocker_timeouts = 0;       // of which the blocker's own %globaltimer bound ran out
  bool outputs_changed_while_held = false;
  double blocked_ms = 0;          // median of the blocked samples that completed
  std::optional<TimingMethod> forced;
  // The probe's own host time (ms): the unblocked samples, the outputs' snapshot before the held sample, the held
  // sample with its look at the outputs, the other blocked samples (where a race's probe phase goes).
  double unblocked_cost_ms = 0, snapshot_cost_ms = 0, held_cost_ms = 0, blocked_cost_ms = 0;
};

struct MethodDecision {
  TimingMethod method = TimingMethod::kEventsDefaultStream;
  FallbackReason reason = FallbackReason::kNone;
};

// The rules, in order: a forced method; events that miss most of the host time (more than half of it, and over
// 50 us: work outside the default stream) -> device sync before stop; no blocker -> events_default_stream; a
// blocked sample the watchdog or the blocker's timeout had to release -> events_default_stream; outputs written
// while held -> device sync before stop; otherwise blocked.
MethodDecision decide_method(const ProbeFigures& f);

// The probe's host-versus-events rule (kept from the first runner): the events miss more than half of the host
// time of a sample, and more than 50 us of it.
bool events_miss_work(double event_ms, double host_ms);

// How long a blocked sample may wait for solve() to return before the watchdog releases the GPU: 50 ms plus 20
// times the unblocked return time, at most 5 s. A honest solve() returns in microseconds; one that waits on the
// GPU never returns while it is held.
double watchdog_bound_ms(double return_ms);

// How long the first blocked probe sample holds the GPU after solve() returned before it looks at the outputs:
// twice the unblocked host time of a whole sample plus 0.2 ms (side work started by solve() has finished by
// then), at most 200 ms.
double escape_hold_ms(double host_ms);

// Blocked samples the watchdog releases during a series before the series restarts with events_default_stream.
inline constexpr int kMaxWatchdogReleases = 3;

// Paired mode times every library with one method, the most conservative any of them needs (blocked <
// events_default_stream < device sync before stop; behind_sleep counts as blocked, perf_counter last), so that
// ratios compare like with like.
TimingMethod common_method(const std::vector<TimingMethod>& methods);

}  // namespace kopt::runner
