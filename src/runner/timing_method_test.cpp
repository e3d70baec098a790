#include "runner/timing_method.h"

#include <gtest/gtest.h>

namespace kopt::runner {

namespace {

// A probe of an honest 5 us kernel: events 10 us around a host-launched call, 25 us of host time, blocked 5 us.
ProbeFigures honest() {
  ProbeFigures f;
  f.event_ms = 0.010;
  f.host_ms = 0.025;
  f.return_ms = 0.004;
  f.blocker_available = true;
  f.blocked_attempts = 5;
  f.blocked_ms = 0.005;
  return f;
}

}  // namespace

TEST(TimingMethod, NamesRoundTripAndTheLaunchFreeOnesSayForSure) {
  for (int i = 0; i <= static_cast<int>(TimingMethod::kPerfCounter); ++i) {
    auto m = static_cast<TimingMethod>(i);
    EXPECT_EQ(parse_method(method_name(m)), m);
    EXPECT_FALSE(describe(m).empty());
  }
  EXPECT_EQ(method_name(TimingMethod::kBlocked), "events_blocked");
  // The names consumers already read stay what they were.
  EXPECT_EQ(method_name(TimingMethod::kEventsDefaultStream), "events_default_stream");
  EXPECT_EQ(method_name(TimingMethod::kDeviceSyncBeforeStop), "events_with_device_sync_before_stop");
  EXPECT_TRUE(excludes_launch(TimingMethod::kBlocked));
  EXPECT_TRUE(excludes_launch(TimingMethod::kBehindSleep));
  EXPECT_FALSE(excludes_launch(TimingMethod::kEventsDefaultStream));
  EXPECT_FALSE(excludes_launch(TimingMethod::kDeviceSyncBeforeStop));
  EXPECT_FALSE(parse_method("auto").has_value());
  EXPECT_EQ(parse_l2("warm"), L2Mode::kWarm);
  EXPECT_EQ(l2_name(*parse_l2("cold")), "cold");
  EXPECT_FALSE(parse_l2("hot").has_value());
  for (int i = 0; i <= static_cast<int>(FallbackReason::kOutputsWrittenWhileHeld); ++i)
    EXPECT_FALSE(describe(static_cast<FallbackReason>(i)).empty());
  EXPECT_EQ(reason_name(FallbackReason::kNone), "");
}

TEST(TimingMethod, AnHonestKernelIsTimedBlocked) {
  auto d = decide_method(honest());
  EXPECT_EQ(d.method, TimingMethod::kBlocked);
  EXPECT_EQ(d.reason, FallbackReason::kNone);
}

TEST(TimingMethod, ASolveThatSynchronisesFallsBackToEventsAroundTheCall) {
  auto f = honest();
  f.blocked_attempts = 1;  // the first blocked sample: the watchdog had to release the GPU
  f.watchdog_releases = 1;
  EXPECT_EQ(decide_method(f).method, TimingMethod::kEventsDefaultStream);
  EXPECT_EQ(decide_method(f).reason, FallbackReason::kSolveWaitedOnGpu);
  f.watchdog_releases = 0;
  f.blocker_timeouts = 1;  // the blocker's own bound ran out (the watchdog thread never got to it)
  EXPECT_EQ(decide_method(f).reason, FallbackReason::kSolveWaitedOnGpu);
}

TEST(TimingMethod, WorkOutsideTheDefaultStreamIsTimedWithADeviceSync) {
  auto f = honest();
  f.event_ms = 0.003;  // the events saw 3 us of a 2 ms sample: a long kernel on a non-blocking stream
  f.host_ms = 2.0;
  auto d = decide_method(f);
  EXPECT_EQ(d.method, TimingMethod::kDeviceSyncBeforeStop);
  EXPECT_EQ(d.reason, FallbackReason::kWorkOutsideDefaultStream);
  // A short one the host-versus-events rule cannot see: caught by the outputs changing while held.
  f = honest();
  f.outputs_changed_while_held = true;
  d = decide_method(f);
  EXPECT_EQ(d.method, TimingMethod::kDeviceSyncBeforeStop);
  EXPECT_EQ(d.reason, FallbackReason::kOutputsWrittenWhileHeld);
}

TEST(TimingMethod, TheRulesApplyInOrder) {
  auto f = honest();
  f.forced = TimingMethod::kEventsDefaultStream;
  f.outputs_changed_while_held = true;
  EXPECT_EQ(decide_method(f).method, TimingMethod::kEventsDefaultStream);  // forced wins
  EXPECT_EQ(decide_method(f).reason, FallbackReason::kForced);
  f = honest();
  f.blocker_available = false;
  EXPECT_EQ(decide_method(f).reason, FallbackReason::kBlockerUnavailable);
  f.event_ms = 0.001;  // escaping work is named even without a blocker
  f.host_ms = 1.0;
  EXPECT_EQ(decide_method(f).reason, FallbackReason::kWorkOutsideDefaultStream);
  f = honest();
  f.watchdog_releases = 1;  // a solve() that syncs: the escape look never happened, it is not a reason
  f.outputs_changed_while_held = true;
  EXPECT_EQ(decide_method(f).reason, FallbackReason::kSolveWaitedOnGpu);
}

TEST(TimingMethod, TheHostVersusEventsRuleNeedsBothMarginsAndBounds) {
  EXPECT_FALSE(events_miss_work(0.010, 0.025));   // launch and sync overhead of a small kernel: not an escape
  EXPECT_FALSE(events_miss_work(1.0, 1.04));      // a large kernel with 40 us of overhead
  EXPECT_TRUE(events_miss_work(0.004, 0.100));    // 96 us missing, 96% of it
  EXPECT_FALSE(events_miss_work(0.060, 0.100));   // 40 us missing: under 50 us
  EXPECT_DOUBLE_EQ(watchdog_bound_ms(0.005), 50.1);
  EXPECT_DOUBLE_EQ(watchdog_bound_ms(1000), 5000);
  EXPECT_DOUBLE_EQ(watchdog_bound_ms(-1), 50);
  EXPECT_DOUBLE_EQ(escape_hold_ms(0.025), 0.25);
  EXPECT_DOUBLE_EQ(escape_hold_ms(500), 200);
}

TEST(TimingMethod, PairedLibrariesShareTheMostConservativeMethod) {
  using M = TimingMethod;
  EXPECT_EQ(common_method({M::kBlocked, M::kBlocked}), M::kBlocked);
  EXPECT_EQ(common_method({M::kBlocked, M::kEventsDefaultStream}), M::kEventsDefaultStream);
  EXPECT_EQ(common_method({M::kDeviceSyncBeforeStop, M::kEventsDefaultStream, M::kBlocked}), M::kDeviceSyncBeforeStop);
  EXPECT_EQ(common_method({}), M::kBlocked);
}

}  // namespace kopt::runner
