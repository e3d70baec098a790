#include "profile/rank.h"

#include <gtest/gtest.h>

#include <map>

#include "profile/aggregate.h"
#include "profile/test_data.h"

namespace kopt::profile {

namespace {
MetricLookup lookup_of(const KernelRecord& k) {
  return [&k](const std::string& m) { return k.number(m); };
}
MetricLookup lookup_of(const std::map<std::string, double>& values) {
  return [&values](const std::string& m) -> std::optional<double> {
    auto it = values.find(m);
    return it == values.end() ? std::nullopt : std::optional<double>(it->second);
  };
}
}  // namespace

TEST(RankMetrics, RealSaxpyLatencyAxis) {
  auto page = parse_raw_page(testing::ncu_capture("ncu_raw.csv"));
  ASSERT_TRUE(page);
  auto top = rank_axis(Axis::kLatency, lookup_of(page->kernels[0]), 3);
  ASSERT_EQ(top.size(), 3u);
  // Long scoreboard: 59.35 of 69.90 cycles between issues.
  EXPECT_EQ(top[0].spec->name, "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio");
  EXPECT_NEAR(top[0].distance, 59.35 / 69.90, 1e-12);
  EXPECT_DOUBLE_EQ(top[0].scale, 69.90);
  EXPECT_GE(top[0].distance, top[1].distance);
  EXPECT_GE(top[1].distance, top[2].distance);
}

TEST(RankMetrics, RealSaxpyMemoryAxisWithRuleMessages) {
  auto page = parse_raw_page(testing::ncu_capture("ncu_raw.csv"));
  ASSERT_TRUE(page);
  auto rules = parse_details_text(testing::ncu_capture("ncu_details.txt"));
  auto top = rank_axis(Axis::kMemory, lookup_of(page->kernels[0]), 5, rules);
  ASSERT_EQ(top.size(), 4u);  // the capture has no MemoryWorkloadAnalysis_Tables metrics; spilling is "no data"
  EXPECT_EQ(top[0].spec->name, "l1tex__t_sector_hit_rate.pct");  // 32.84 %
  EXPECT_NEAR(top[0].distance, (100 - 32.84) / 100, 1e-12);
  EXPECT_EQ(top[1].spec->name, "lts__t_sector_hit_rate.pct");  // 33.69 %
  EXPECT_EQ(top[2].spec->name, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed");
  EXPECT_NEAR(top[2].distance, (100 - 70.81) / 100, 1e-12);
  EXPECT_EQ(top[3].spec->name, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed");
  // The SpeedOfLight OPT rule rides with the SOL metrics; INF/WRN rules do not.
  ASSERT_EQ(top[2].rules.size(), 1u);
  EXPECT_TRUE(top[2].rules[0].message.starts_with("Memory is more heavily utilized than Compute"));
  EXPECT_TRUE(top[0].rules.empty());
}

TEST(RankMetrics, DirectionIdealScaleAndSkips) {
  std::map<std::string, double> v = {
      {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 90},
      {"smsp__thread_inst_executed_per_inst_executed.ratio", 16},    // half the lanes: distance 0.5
      {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", 0},  // unused pipe: skipped
      {"sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", 100},   // at ideal: skipped
      {"sm__inst_executed.avg.per_cycle_active", 5},                  // above ideal 4: distance 0, skipped
  };
  auto top = rank_axis(Axis::kCompute, lookup_of(v), 5);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].spec->name, "smsp__thread_inst_executed_per_inst_executed.ratio");
  EXPECT_DOUBLE_EQ(top[0].distance, 0.5);
  EXPECT_DOUBLE_EQ(top[1].distance, 0.1);
  EXPECT_EQ(rank_axis(Axis::kCompute, lookup_of(v), 1).size(), 1u);
  // A stall without its scale metric cannot be normalised: skipped, not guessed.
  std::map<std::string, double> s = {{"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", 5}};
  EXPECT_TRUE(rank_axis(Axis::kLatency, lookup_of(s), 5).empty());
  s["smsp__average_warp_latency_per_inst_issued.ratio"] = 4;  // larger than the scale: clamped to 1
  auto lat = rank_axis(Axis::kLatency, lookup_of(s), 5);
  ASSERT_EQ(lat.size(), 1u);
  EXPECT_DOUBLE_EQ(lat[0].distance, 1.0);
}

TEST(RankMetrics, AliasIsUsedWhenTheCanonicalNameIsAbsent) {
  std::map<std::string, double> v = {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 40}};
  auto top = rank_axis(Axis::kMemory, lookup_of(v), 5);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].spec->name, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed");
  EXPECT_EQ(top[0].name_used, "dram__throughput.avg.pct_of_peak_sustained_elapsed");
  EXPECT_DOUBLE_EQ(top[0].distance, 0.6);
}

}  // namespace kopt::profile
