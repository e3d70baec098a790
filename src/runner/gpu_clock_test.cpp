#include "runner/gpu_clock.h"

#include <gtest/gtest.h>

namespace kopt::runner {

namespace {

constexpr auto K = ActivityKind::kKernel;
constexpr auto S = ActivityKind::kMemset;
constexpr auto C = ActivityKind::kMemcpy;

// A blocked, cold sample as CUPTI delivers it (not in start order): the blocker spins 40 us, the 256 MB flush
// takes 60 us, then solve()'s work from t = 1'100'000 ns.
std::vector<GpuActivity> blocked_cold(std::vector<GpuActivity> solve) {
  std::vector<GpuActivity> r = std::move(solve);
  r.push_back({S, 1'040'000, 1'100'000});
  r.push_back({K, 1'000'000, 1'040'000});
  return r;
}

}  // namespace

TEST(CuptiSpan, BlockedColdOneKernelIsThatKernel) {
  auto s = solve_span(blocked_cold({{K, 1'101'000, 1'105'900}}), true, true);
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->span_ms, 0.0049);
  EXPECT_DOUBLE_EQ(s->busy_ms, 0.0049);
  EXPECT_EQ(s->count, 1);
}

TEST(CuptiSpan, BlockedColdTwoKernelsSpanFromTheFirstStartToTheLastEnd) {
  // A gap of 1 us between the two kernels is inside the span, not in busy.
  auto s = solve_span(blocked_cold({{K, 1'106'000, 1'110'000}, {K, 1'101'000, 1'105'000}}), true, true);
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->span_ms, 0.009);
  EXPECT_DOUBLE_EQ(s->busy_ms, 0.008);
  EXPECT_EQ(s->count, 2);
}

TEST(CuptiSpan, AMemsetAndAMemcpyInsideSolveAreSolvesWork) {
  // solve() zeroes an accumulator, runs a kernel and copies a scalar out: only the flush memset is dropped.
  auto s = solve_span(blocked_cold({{S, 1'100'500, 1'101'500}, {K, 1'102'000, 1'112'000}, {C, 1'112'500, 1'114'500}}),
                      true, true);
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->span_ms, 0.014);
  EXPECT_DOUBLE_EQ(s->busy_ms, 0.013);
  EXPECT_EQ(s->count, 3);
}

TEST(CuptiSpan, KernelsOverlappingOnTwoStreamsBusyMoreThanTheSpan) {
  auto s = solve_span(blocked_cold({{K, 1'101'000, 1'111'000}, {K, 1'102'000, 1'110'000}}), true, true);
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->span_ms, 0.010);
  EXPECT_DOUBLE_EQ(s->busy_ms, 0.018);
}

TEST(CuptiSpan, UnblockedColdDropsOnlyTheFlush) {
  auto s = solve_span({{K, 2'000'000, 2'003'000}, {S, 1'000'000, 1'060'000}}, false, true);
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->span_ms, 0.003);
  EXPECT_EQ(s->count, 1);
}

TEST(CuptiSpan, WarmDropsNothingUnblockedAndTheBlockerBlocked) {
  auto unblocked = solve_span({{K, 5'000, 7'000}, {K, 8'000, 9'000}}, false, false);
  ASSERT_TRUE(unblocked.has_value());
  EXPECT_DOUBLE_EQ(unblocked->span_ms, 0.004);
  EXPECT_EQ(unblocked->count, 2);
  auto blocked = solve_span({{K, 1'000, 4'000}, {K, 5'000, 7'000}}, true, false);
  ASSERT_TRUE(blocked.has_value());
  EXPECT_DOUBLE_EQ(blocked->span_ms, 0.002);
  EXPECT_EQ(blocked->count, 1);
}

TEST(CuptiSpan, NothingLeftIsNoSpan) {
  EXPECT_FALSE(solve_span({}, false, false).has_value());
  EXPECT_FALSE(solve_span({}, true, true).has_value());
  EXPECT_FALSE(solve_span(blocked_cold({}), true, true).has_value());  // solve() issued nothing, or it was lost
  EXPECT_FALSE(solve_span({{S, 1'000, 2'000}}, false, true).has_value());
}

TEST(CuptiSpan, MalformedRecordsAreNoSpan) {
  EXPECT_FALSE(solve_span(blocked_cold({{K, 1'105'000, 1'101'000}}), true, true).has_value());  // end < start
  EXPECT_FALSE(solve_span(blocked_cold({{K, 0, 0}}), true, true).has_value());  // no timestamps collected
}

TEST(CuptiSpan, ARecordOfTheWrongKindWhereTheBlockerOrFlushBelongsIsNoSpan) {
  // The flush memset went missing: the first record after the blocker is solve()'s kernel, not a memset.
  EXPECT_FALSE(solve_span({{K, 1'000, 2'000}, {K, 3'000, 4'000}}, true, true).has_value());
  // The blocker went missing: the flush comes first.
  EXPECT_FALSE(solve_span({{S, 1'000, 2'000}, {K, 3'000, 4'000}}, true, true).has_value());
}

TEST(CuptiSpan, TheCleanFlushsReadPassIsDroppedToo) {
  // The clean flush (the default): blocker, flush memset, the read pass over the flush buffer (55 us), then solve()'s kernel.
  auto recs = blocked_cold({{K, 1'101'000, 1'155'000}, {K, 1'156'000, 1'160'900}});
  auto s = solve_span(recs, true, true, 1);
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->span_ms, 0.0049);
  EXPECT_EQ(s->count, 1);
  // Without the flag the read pass would count as solve()'s work.
  EXPECT_EQ(solve_span(recs, true, true)->count, 2);
  // A clean flush whose read pass is missing (a memset inside solve() instead) is no span: a record went missing.
  EXPECT_FALSE(solve_span(blocked_cold({{S, 1'101'000, 1'102'000}}), true, true, 1).has_value());
}

TEST(CuptiSpan, TheInstructionCacheFlushIsDroppedAfterTheReadPass) {
  // KOPT_CODE_FLUSH=1: blocker, memset, read (or discard) pass, the instruction-cache flush (40 us), solve()'s two kernels.
  auto recs =
      blocked_cold({{K, 1'101'000, 1'155'000}, {K, 1'156'000, 1'196'000}, {K, 1'197'000, 1'200'000}, {K, 1'201'000, 1'203'000}});
  auto s = solve_span(recs, true, true, 2);
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->span_ms, 0.006);
  EXPECT_EQ(s->count, 2);
  // Both flush kernels dropped and nothing left (solve()'s record went missing): no span.
  EXPECT_FALSE(solve_span(blocked_cold({{K, 1'101'000, 1'155'000}, {K, 1'156'000, 1'160'000}}), true, true, 2).has_value());
}

TEST(CuptiSpan, ClockAndReasonNames) {
  EXPECT_EQ(clock_name(GpuClock::kCuptiActivity), "cupti_activity");
  EXPECT_EQ(clock_name(GpuClock::kEvents), "events");
  EXPECT_EQ(off_reason_name(ClockOffReason::kNone), "");
  EXPECT_EQ(off_reason_name(ClockOffReason::kDisabled), "disabled");
  for (int i = 0; i <= static_cast<int>(ClockOffReason::kTooManyMissingSpans); ++i)
    EXPECT_FALSE(describe(static_cast<ClockOffReason>(i)).empty());
}

TEST(CuptiSeriesClock, EventsFromTheStartStayEventsWithTheirReason) {
  SeriesClock c(GpuClock::kEvents, ClockOffReason::kUnavailable, kMaxMissingSpans);
  EXPECT_EQ(c.add(false), SeriesClock::Step::kKeep);
  EXPECT_EQ(c.add(true), SeriesClock::Step::kKeep);
  EXPECT_EQ(c.clock(), GpuClock::kEvents);
  EXPECT_EQ(c.off_reason(), ClockOffReason::kUnavailable);
  EXPECT_EQ(c.missing(), 0);
}

TEST(CuptiSeriesClock, AMissingSpanInTheFirstTwoSamplesSwitchesToEvents) {
  SeriesClock first(GpuClock::kCuptiActivity, ClockOffReason::kNone, kMaxMissingSpans);
  EXPECT_EQ(first.add(false), SeriesClock::Step::kSwitchToEvents);
  EXPECT_EQ(first.clock(), GpuClock::kEvents);
  EXPECT_EQ(first.off_reason(), ClockOffReason::kNoSpanInFirstSamples);
  EXPECT_EQ(first.add(true), SeriesClock::Step::kKeep);  // on events now, whatever the records say

  SeriesClock second(GpuClock::kCuptiActivity, ClockOffReason::kNone, kMaxMissingSpans);
  EXPECT_EQ(second.add(true), SeriesClock::Step::kKeep);
  EXPECT_EQ(second.add(false), SeriesClock::Step::kSwitchToEvents);
  EXPECT_EQ(second.off_reason(), ClockOffReason::kNoSpanInFirstSamples);
}

TEST(CuptiSeriesClock, LaterMissesAreDroppedUpToTheLimitThenSwitch) {
  SeriesClock c(GpuClock::kCuptiActivity, ClockOffReason::kNone, 2);
  EXPECT_EQ(c.add(true), SeriesClock::Step::kKeep);
  EXPECT_EQ(c.add(true), SeriesClock::Step::kKeep);
  EXPECT_EQ(c.add(false), SeriesClock::Step::kDrop);
  EXPECT_EQ(c.add(true), SeriesClock::Step::kKeep);
  EXPECT_EQ(c.add(false), SeriesClock::Step::kDrop);
  EXPECT_EQ(c.clock(), GpuClock::kCuptiActivity);
  EXPECT_EQ(c.off_reason(), ClockOffReason::kNone);
  EXPECT_EQ(c.add(false), SeriesClock::Step::kSwitchToEvents);
  EXPECT_EQ(c.off_reason(), ClockOffReason::kTooManyMissingSpans);
  EXPECT_EQ(c.missing(), 3);
}

TEST(CuptiSeriesClock, PairedModeAllowsNoMiss) {
  SeriesClock c(GpuClock::kCuptiActivity, ClockOffReason::kNone, 0);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(c.add(true), SeriesClock::Step::kKeep);
  EXPECT_EQ(c.add(false), SeriesClock::Step::kSwitchToEvents);
  EXPECT_EQ(c.off_reason(), ClockOffReason::kTooManyMissingSpans);
}

}  // namespace kopt::runner
