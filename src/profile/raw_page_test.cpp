#include "profile/raw_page.h"

#include <gtest/gtest.h>

#include "profile/test_data.h"

namespace kopt::profile {

TEST(NcuRawPage, RealSaxpyCapture) {
  auto page = parse_raw_page(testing::ncu_capture("ncu_raw.csv"));
  ASSERT_TRUE(page) << page.error().message;
  ASSERT_EQ(page->kernels.size(), 1u);
  const KernelRecord& k = page->kernels[0];
  EXPECT_EQ(k.id, 0);
  EXPECT_EQ(k.name, "saxpy(int, float, const float *, float *)");
  EXPECT_EQ(k.block_size, "(256, 1, 1)");
  EXPECT_EQ(k.grid_size, "(262144, 1, 1)");
  EXPECT_EQ(duration_ns(k), 230912.0);
  EXPECT_EQ(k.find("gpu__time_duration.sum")->unit, "ns");
  EXPECT_EQ(k.number("launch__registers_per_thread"), 16.0);
  EXPECT_EQ(k.find("launch__registers_per_thread")->unit, "register/thread");
  EXPECT_DOUBLE_EQ(*k.number("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"), 70.81);
  EXPECT_DOUBLE_EQ(*k.number("sm__throughput.avg.pct_of_peak_sustained_elapsed"), 34.79);
  EXPECT_EQ(k.number("device__attribute_max_grid_dim_x"), 2147483647.0);  // "2,147,483,647"
  // "no data" is unknown, never 0; the text and unit are kept.
  const MetricValue* spill = k.find("derived__local_spilling_requests_pct");
  ASSERT_NE(spill, nullptr);
  EXPECT_FALSE(spill->value);
  EXPECT_EQ(spill->text, "no data");
  EXPECT_EQ(spill->unit, "%");
  EXPECT_FALSE(k.number("launch__cluster_scheduling_policy"));  // "PolicySpread"
  EXPECT_FALSE(k.number("not__a_metric"));
  EXPECT_TRUE(page->has_column("sm__warps_active.avg.pct_of_peak_sustained_active"));
  EXPECT_FALSE(page->has_column("Kernel Name"));  // launch descriptors are not metrics
  EXPECT_EQ(page->metric_columns.size(), 655u - 11u);
}

TEST(NcuRawPage, SeveralKernels) {
  auto page = parse_raw_page(testing::assembled("raw_three_kernels.csv"));
  ASSERT_TRUE(page) << page.error().message;
  ASSERT_EQ(page->kernels.size(), 3u);
  EXPECT_EQ(page->kernels[1].id, 1);
  EXPECT_EQ(page->kernels[1].name, "scale_kernel(float *, int)");
  EXPECT_EQ(duration_ns(page->kernels[1]), 692736.0);
  EXPECT_FALSE(page->kernels[1].number("lts__t_sector_hit_rate.pct"));  // "n/a"
  EXPECT_EQ(page->kernels[2].name, "tail_kernel()");
  EXPECT_EQ(duration_ns(page->kernels[2]), 1000.0);
}

TEST(NcuRawPage, HeaderAndUnitsWithoutKernelsIsAnEmptyPage) {
  std::string text = testing::ncu_capture("ncu_raw.csv");
  text = text.substr(0, text.rfind("\"0\",\"696\""));  // drop the saxpy row
  auto page = parse_raw_page(text);
  ASSERT_TRUE(page) << page.error().message;
  EXPECT_TRUE(page->kernels.empty());
  EXPECT_TRUE(page->has_column("gpu__time_duration.sum"));
}

TEST(NcuRawPage, NoTableOrNoUnitsRowIsAGateError) {
  auto none = parse_raw_page("==ERROR== The application returned an error code (1).\n");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ExitCode::kGate);
  auto no_units = parse_raw_page("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"0\",\"k\",\"5\"\n");
  ASSERT_FALSE(no_units);
  EXPECT_NE(no_units.error().message.find("units row"), std::string::npos);
}

TEST(NcuRawPage, DurationUnits) {
  EXPECT_EQ(to_nanoseconds(230.72, "us"), 230720.0);
  EXPECT_EQ(to_nanoseconds(2, "usecond"), 2000.0);
  EXPECT_EQ(to_nanoseconds(1.5, "ms"), 1.5e6);
  EXPECT_EQ(to_nanoseconds(7, "nsecond"), 7.0);
  EXPECT_FALSE(to_nanoseconds(7, "cycle"));
}

}  // namespace kopt::profile
