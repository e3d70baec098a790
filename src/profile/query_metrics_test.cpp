#include "profile/query_metrics.h"

#include <gtest/gtest.h>

#include "profile/test_data.h"

namespace kopt::profile {

TEST(NcuQueryMetrics, ParsesTheRealGh100Listing) {
  auto names = parse_query_metrics(testing::ncu_capture("gh100_tensor_and_stall_metric_bases.txt"));
  EXPECT_EQ(names.size(), 115u);
  EXPECT_TRUE(names.count("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active"));
  EXPECT_TRUE(names.count("sm__pipe_tensor_cycles_active"));
  EXPECT_TRUE(names.count("tpc__warp_launch_cycles_stalled_shader_cs_reason_shmem_allocation"));
}

TEST(NcuQueryMetrics, SkipsHeadersAndDescriptions) {
  auto names = parse_query_metrics(
      "Device gh100 (GH100)\n"
      "---------------------- ---------------------------\n"
      "Metric Name            Metric Description\n"
      "---------------------- ---------------------------\n"
      "dram__bytes            # of bytes accessed in DRAM\n"
      "sm__throughput         SM throughput assuming ideal load balancing\n");
  EXPECT_EQ(names, (std::set<std::string>{"dram__bytes", "sm__throughput"}));
}

TEST(NcuQueryMetrics, MissingMetricsAreReportedNotDropped) {
  auto chip = parse_query_metrics(testing::ncu_capture("gh100_tensor_and_stall_metric_bases.txt"));
  // smsp__pcsamp_sample_count: the real details page warns ncu could not find it.
  MetricCheck c = check_metrics({"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
                                 "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
                                 "smsp__pcsamp_sample_count", "launch__registers_per_thread"},
                                chip);
  EXPECT_EQ(c.available, (std::vector<std::string>{
                             "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
                             "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"}));
  EXPECT_EQ(c.missing, (std::vector<std::string>{"smsp__pcsamp_sample_count"}));
  EXPECT_EQ(c.unchecked, (std::vector<std::string>{"launch__registers_per_thread"}));
}

TEST(NcuQueryMetrics, ChipOfAComputeCapability) {
  EXPECT_EQ(chip_for_compute_capability(9, 0), "gh100");  // H200 (the captures' GPU)
  EXPECT_EQ(chip_for_compute_capability(8, 0), "ga100");
  EXPECT_EQ(chip_for_compute_capability(8, 6), "");  // several chips: not guessed
  EXPECT_EQ(chip_for_compute_capability(6, 1), "");
}

TEST(NcuQueryMetrics, BaseNames) {
  EXPECT_EQ(metric_base_name("sm__throughput.avg.pct_of_peak_sustained_elapsed"), "sm__throughput");
  EXPECT_EQ(metric_base_name("lts__t_sector_hit_rate.pct"), "lts__t_sector_hit_rate");
  EXPECT_EQ(metric_base_name("dram__bytes"), "dram__bytes");
  EXPECT_FALSE(listed_by_query_metrics("derived__local_spilling_requests_pct"));
  EXPECT_TRUE(listed_by_query_metrics("gpu__time_duration.sum"));
}

}  // namespace kopt::profile
