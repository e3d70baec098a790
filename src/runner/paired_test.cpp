#include "runner/paired.h"

#include <gtest/gtest.h>

namespace kopt::runner {
namespace {

PairedEntry entry(const std::string& lib, RunStatus s, std::vector<double> samples = {}, const std::string& msg = "") {
  PairedEntry e;
  e.lib = lib;
  e.status = s;
  e.message = msg;
  e.gpu_ms = std::move(samples);
  return e;
}

TEST(RunnerPaired, OnlyLibrariesThatPassedTheirCheckAreTimed) {
  std::vector<PairedEntry> es = {entry("a.so", RunStatus::kOk), entry("b.so", RunStatus::kWrongResult),
                                 entry("c.so", RunStatus::kOk), entry("d.so", RunStatus::kLoadError)};
  EXPECT_EQ(timed_libs(es), (std::vector<size_t>{0, 2}));
  EXPECT_TRUE(timed_libs({}).empty());
}

TEST(RunnerPaired, TheOverallStatusIsTheFirstFailure) {
  std::vector<PairedEntry> es = {entry("a.so", RunStatus::kOk), entry("b.so", RunStatus::kUnwrittenOutput, {}, "output C: 7 never written"),
                                 entry("c.so", RunStatus::kWrongResult, {}, "output C: first bad index 3")};
  auto [st, msg] = paired_status(es);
  EXPECT_EQ(st, RunStatus::kUnwrittenOutput);
  EXPECT_EQ(msg, "library 1 (b.so): output C: 7 never written");
  es[1].status = RunStatus::kOk;
  EXPECT_EQ(paired_status(es).first, RunStatus::kWrongResult);
  es[2].status = RunStatus::kOk;
  EXPECT_EQ(paired_status(es), std::make_pair(RunStatus::kOk, std::string()));
}

TEST(RunnerPaired, ResultKeepsSamplesAndTimingPerLibrary) {
  util::Json check = {{"outputs", {{"C", {{"ok", false}}}}}, {"inputs", util::Json::object()}};
  std::vector<PairedEntry> es = {entry("a.so", RunStatus::kOk, {2.0, 1.0, 3.0, 1.5, 2.5}),
                                 entry("b.so", RunStatus::kWrongResult, {}, "output C: first bad index 3")};
  es[1].check = check;
  auto j = paired_libs_json(es);
  ASSERT_EQ(j.size(), 2u);
  // What optimize.cpp reads (libs[k].samples_ms) is there, in round order, with its statistics.
  EXPECT_EQ(j[0]["lib"], "a.so");
  EXPECT_EQ(j[0]["status"], "ok");
  EXPECT_EQ(j[0]["samples_ms"].get<std::vector<double>>(), (std::vector<double>{2.0, 1.0, 3.0, 1.5, 2.5}));
  EXPECT_DOUBLE_EQ(j[0]["timing"]["median_ms"].get<double>(), 2.0);
  EXPECT_EQ(j[0]["timing"]["samples"], 5);
  // The wrong library: its own status and message, its check, no samples and no timing.
  EXPECT_EQ(j[1]["status"], "wrong_result");
  EXPECT_EQ(j[1]["message"], "output C: first bad index 3");
  EXPECT_EQ(j[1]["check"], check);
  EXPECT_TRUE(j[1]["samples_ms"].empty());
  EXPECT_FALSE(j[1].contains("timing"));
}

TEST(RunnerPaired, OnTheKernelClockEachLibraryKeepsItsEventFiguresBusyTimeAndKernels) {
  std::vector<PairedEntry> es = {entry("a.so", RunStatus::kOk, {0.0049, 0.0050, 0.0051})};
  es[0].event_ms = {0.0070, 0.0071, 0.0069};
  es[0].busy_ms = {0.0049, 0.0050, 0.0051};
  es[0].kernels = {1, 1, 1};
  auto j = paired_libs_json(es);
  EXPECT_DOUBLE_EQ(j[0]["timing"]["median_ms"].get<double>(), 0.0050);
  EXPECT_DOUBLE_EQ(j[0]["event_median_ms"].get<double>(), 0.0070);
  EXPECT_EQ(j[0]["event_samples_ms"].size(), 3u);
  EXPECT_DOUBLE_EQ(j[0]["busy_median_ms"].get<double>(), 0.0050);
  EXPECT_DOUBLE_EQ(j[0]["kernels_per_call"].get<double>(), 1);
  // On events: the event figures are the samples, and there is no busy time or kernel count.
  es[0].to_events();
  j = paired_libs_json(es);
  EXPECT_DOUBLE_EQ(j[0]["event_median_ms"].get<double>(), j[0]["timing"]["median_ms"].get<double>());
  EXPECT_FALSE(j[0].contains("busy_median_ms"));
  EXPECT_FALSE(j[0].contains("kernels_per_call"));
}

}  // namespace
}  // namespace kopt::runner
