// The series' JSON (series_info_json); the GPU side of the Timer is tested through the runner (RunnerGpu.*).
#include "runner/timer.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "runner/fatal.h"

namespace kopt::runner {

namespace {

// A blocked series of a 5 us kernel: kernel clock 4.9-5.1 us, events 6.9-7.1 us.
TimedSeries kernel_clock_series() {
  TimedSeries s;
  s.decision = {TimingMethod::kBlocked, FallbackReason::kNone};
  s.gpu_ms = {0.0049, 0.0050, 0.0051};
  s.event_ms = {0.0069, 0.0070, 0.0071};
  s.busy_ms = {0.0049, 0.0050, 0.0051};
  s.kernels = {1, 1, 1};
  s.call_ms = {0.012, 0.013, 0.014};
  s.clock = GpuClock::kCuptiActivity;
  s.stop_reason = SeriesStop::kCiReached;
  return s;
}

}  // namespace

TEST(TimerSeriesJson, OnTheKernelClockTheEventMedianBusyTimeAndKernelsAreThere) {
  auto j = series_info_json(kernel_clock_series(), L2Mode::kCold, "");
  EXPECT_EQ(j["gpu_clock"], "cupti_activity");
  EXPECT_DOUBLE_EQ(j["event_median_ms"].get<double>(), 0.0070);
  EXPECT_DOUBLE_EQ(j["busy_median_ms"].get<double>(), 0.0050);
  EXPECT_DOUBLE_EQ(j["kernels_per_call"].get<double>(), 1);
  EXPECT_EQ(j["cupti_missing"], 0);
  EXPECT_FALSE(j.contains("gpu_clock_off_reason"));
  // The fields others read keep their names and meaning.
  EXPECT_EQ(j["timing_method"], "events_blocked");
  EXPECT_TRUE(j["launch_excluded"].get<bool>());
  EXPECT_EQ(j["fallback_reason"], "");
  EXPECT_EQ(j["stop_reason"], "ci_reached");
  EXPECT_DOUBLE_EQ(j["host_median_ms"].get<double>(), 0.013);
}

TEST(TimerSeriesJson, StopReasonNamesRoundTripAndUnknownOnesAreRefused) {
  for (auto s : {SeriesStop::kNone, SeriesStop::kCiReached, SeriesStop::kTimeBudget, SeriesStop::kMaxSamples})
    EXPECT_EQ(parse_series_stop(series_stop_name(s)), s);
  EXPECT_EQ(series_stop_name(SeriesStop::kTimeBudget), "time_budget");
  EXPECT_EQ(series_stop_name(SeriesStop::kMaxSamples), "max_samples");
  EXPECT_FALSE(parse_series_stop("patience").has_value());
}

TEST(TimerSeriesJson, OnEventsTheReasonIsSaidWithItsDetail) {
  TimedSeries s = kernel_clock_series();
  s.gpu_ms = s.event_ms;
  s.busy_ms.clear();
  s.kernels.clear();
  s.clock = GpuClock::kEvents;
  s.clock_off = ClockOffReason::kUnavailable;
  s.clock_off_detail = "libcupti not found";
  auto j = series_info_json(s, L2Mode::kCold, "");
  EXPECT_EQ(j["gpu_clock"], "events");
  EXPECT_EQ(j["gpu_clock_off_reason"], "cupti_unavailable");
  EXPECT_NE(j["gpu_clock_off_reason_text"].get<std::string>().find("libcupti not found"), std::string::npos);
  EXPECT_DOUBLE_EQ(j["event_median_ms"].get<double>(), 0.0070);  // always there
  EXPECT_FALSE(j.contains("busy_median_ms"));
  EXPECT_FALSE(j.contains("kernels_per_call"));

  s.clock_off = ClockOffReason::kNoSpanInFirstSamples;
  s.clock_off_detail.clear();
  s.cupti_missing = 1;
  j = series_info_json(s, L2Mode::kCold, "");
  EXPECT_EQ(j["gpu_clock_off_reason"], "no_span_in_first_samples");
  EXPECT_EQ(j["cupti_missing"], 1);
}

TEST(TimerFlush, TheCleanFlushIsTheDefaultTheOthersAreAskedForByNameAndATypoIsAnError) {
  ::unsetenv("KOPT_L2_FLUSH");
  EXPECT_EQ(flush_kind_from_env(), FlushKind::kMemsetThenRead);  // the default: the clean flush
  ::setenv("KOPT_L2_FLUSH", "memset", 1);
  EXPECT_EQ(flush_kind_from_env(), FlushKind::kMemset);
  ::setenv("KOPT_L2_FLUSH", "memset_then_discard", 1);
  EXPECT_EQ(flush_kind_from_env(), FlushKind::kMemsetThenDiscard);
  ::setenv("KOPT_L2_FLUSH", "memset_then_read", 1);
  EXPECT_EQ(flush_kind_from_env(), FlushKind::kMemsetThenRead);
  ::setenv("KOPT_L2_FLUSH", "read", 1);  // not a name: an error naming the choices, never the default silently
  try {
    const FlushKind k = flush_kind_from_env();
    ADD_FAILURE() << "KOPT_L2_FLUSH=read was accepted as " << flush_kind_name(k);
  } catch (const Fatal& f) {
    EXPECT_NE(f.message.find("KOPT_L2_FLUSH=read"), std::string::npos) << f.message;
    EXPECT_NE(f.message.find("memset_then_discard"), std::string::npos) << f.message;
  }
  ::unsetenv("KOPT_L2_FLUSH");
  EXPECT_EQ(flush_kind_from_env(), FlushKind::kMemsetThenRead);
  for (FlushKind k : {FlushKind::kMemset, FlushKind::kMemsetThenRead, FlushKind::kMemsetThenDiscard})
    EXPECT_EQ(parse_flush_kind(flush_kind_name(k)), k);
  EXPECT_EQ(flush_kind_name(FlushKind::kMemset), "memset");
  EXPECT_EQ(flush_kind_name(FlushKind::kMemsetThenRead), "memset_then_read");
  EXPECT_EQ(flush_kind_name(FlushKind::kMemsetThenDiscard), "memset_then_discard");
  EXPECT_FALSE(parse_flush_kind("").has_value());
}

}  // namespace kopt::runner
