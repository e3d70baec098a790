#include "runner/timing_method.h"

#include <algorithm>
#include <array>

namespace kopt::runner {

namespace {

struct MethodRow {
  TimingMethod m;
  std::string_view name, text;
  bool excludes_launch;
  int rank;  // common_method: larger is more conservative
};
constexpr std::array<MethodRow, 5> kMethods = {{
    {TimingMethod::kBlocked, "events_blocked",
     "CUDA events, flush and call queued behind a kernel spinning on a host-mapped flag (launch excluded)", true, 0},
    {TimingMethod::kBehindSleep, "events_behind_sleep",
     "CUDA events, flush and call queued behind torch.cuda._sleep (launch excluded)", true, 0},
    {TimingMethod::kEventsDefaultStream, "events_default_stream",
     "CUDA events around a host-launched call on the default stream (launch included)", false, 1},
    {TimingMethod::kDeviceSyncBeforeStop, "events_with_device_sync_before_stop",
     "CUDA events around the call and a device-wide synchronisation (launch and wake-up included)", false, 2},
    {TimingMethod::kPerfCounter, "perf_counter", "host clock around the call (CPU)", false, 3},
}};
static_assert(kMethods.size() == static_cast<size_t>(TimingMethod::kPerfCounter) + 1, "one row per method");

struct ReasonRow {
  FallbackReason r;
  std::string_view name, text;
};
constexpr std::array<ReasonRow, 6> kReasons = {{
    {FallbackReason::kNone, "", "timed with the blocker"},
    {FallbackReason::kForced, "forced", "the method was forced (--timing-method)"},
    {FallbackReason::kBlockerUnavailable, "blocker_unavailable", "the blocker kernel could not be loaded"},
    {FallbackReason::kSolveWaitedOnGpu, "solve_waited_on_gpu",
     "solve() did not return while the GPU was held (it synchronises inside, or it queues more launches than the "
     "queue holds): the watchdog released it"},
    {FallbackReason::kWorkOutsideDefaultStream, "work_outside_default_stream",
     "the events missed most of the host-observed time: work on a stream outside the default stream's ordering"},
    {FallbackReason::kOutputsWrittenWhileHeld, "outputs_written_while_held",
     "outputs were written while the default stream was held: work on a non-blocking stream"},
}};
static_assert(kReasons.size() == static_cast<size_t>(FallbackReason::kOutputsWrittenWhileHeld) + 1,
              "one row per reason");

const MethodRow& row(TimingMethod m) { return kMethods[static_cast<size_t>(m)]; }

}  // namespace

std::string_view method_name(TimingMethod m) { return row(m).name; }
std::string_view describe(TimingMethod m) { return row(m).text; }
bool excludes_launch(TimingMethod m) { return row(m).excludes_launch; }
std::optional<TimingMethod> parse_method(std::string_view name) {
  for (const auto& r : kMethods)
    if (r.name == name) return r.m;
  return std::nullopt;
}

std::string_view l2_name(L2Mode m) { return m == L2Mode::kCold ? "cold" : "warm"; }
std::optional<L2Mode> parse_l2(std::string_view name) {
  if (name == "cold") return L2Mode::kCold;
  if (name == "warm") return L2Mode::kWarm;
  return std::nullopt;
}

std::string_view reason_name(FallbackReason r) { return kReasons[static_cast<size_t>(r)].name; }
std::string_view describe(FallbackReason r) { return kReasons[static_cast<size_t>(r)].text; }

bool events_miss_work(double event_ms, double host_ms) { return host_ms - event_ms > 0.05 && event_ms < 0.5 * host_ms; }

double watchdog_bound_ms(double return_ms) { return std::clamp(50.0 + 20.0 * std::max(0.0, return_ms), 50.0, 5000.0); }

double escape_hold_ms(double host_ms) { return std::clamp(2.0 * std::max(0.0, host_ms) + 0.2, 0.2, 200.0); }

MethodDecision decide_method(const ProbeFigures& f) {
  if (f.forced) return {*f.forced, FallbackReason::kForced};
  if (events_miss_work(f.event_ms, f.host_ms))
    return {TimingMethod::kDeviceSyncBeforeStop, FallbackReason::kWorkOutsideDefaultStream};
  if (!f.blocker_available || f.blocked_attempts == 0)
    return {TimingMethod::kEventsDefaultStream, FallbackReason::kBlockerUnavailable};
  if (f.watchdog_releases > 0 || f.blocker_timeouts > 0)
    return {TimingMethod::kEventsDefaultStream, FallbackReason::kSolveWaitedOnGpu};
  if (f.outputs_changed_while_held)
    return {TimingMethod::kDeviceSyncBeforeStop, FallbackReason::kOutputsWrittenWhileHeld};
  return {TimingMethod::kBlocked, FallbackReason::kNone};
}

TimingMethod common_method(const std::vector<TimingMethod>& methods) {
  TimingMethod out = TimingMethod::kBlocked;
  for (TimingMethod m : methods)
    if (row(m).rank > row(out).rank) out = m;
  return out;
}

}  // namespace kopt::runner
