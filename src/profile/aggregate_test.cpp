#include "profile/aggregate.h"

#include <gtest/gtest.h>

#include "profile/test_data.h"

namespace kopt::profile {

TEST(Aggregate, TimeWeightedOverSeveralKernels) {
  auto page = parse_raw_page(testing::assembled("raw_three_kernels.csv"));
  ASSERT_TRUE(page);
  Aggregate a = aggregate_kernels(page->kernels);
  const double d0 = 230912, d1 = 692736, d2 = 1000, total = d0 + d1 + d2;
  EXPECT_EQ(a.kernels, 3);
  EXPECT_EQ(a.total_duration_ns, total);
  EXPECT_EQ(a.number("gpu__time_duration.sum"), total);
  // Memory SOL: 70.81 (saxpy, and tail_kernel, a copy) and 10.00 (scale_kernel), weighted by duration.
  const std::string mem = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
  EXPECT_NEAR(*a.number(mem), (70.81 * d0 + 10.0 * d1 + 70.81 * d2) / total, 1e-9);
  EXPECT_EQ(a.metrics.at(mem).method, AggregateMethod::kTimeWeightedMean);
  EXPECT_EQ(a.metrics.at(mem).unit, "%");
  EXPECT_DOUBLE_EQ(a.metrics.at(mem).time_coverage, 1.0);
  // Counts add up: 536,877,312 + 1,000 + 536,877,312 bytes.
  EXPECT_EQ(a.number("dram__bytes_read.sum"), 536877312.0 * 2 + 1000);
  EXPECT_EQ(a.metrics.at("dram__bytes_read.sum").method, AggregateMethod::kSum);
  // scale_kernel's L2 hit rate is "n/a": the mean covers the other kernels' time only, and says so.
  const std::string hit = "lts__t_sector_hit_rate.pct";
  EXPECT_NEAR(*a.number(hit), 33.69, 1e-9);
  EXPECT_NEAR(a.metrics.at(hit).time_coverage, (d0 + d2) / total, 1e-12);
  // A "no data" metric in every kernel stays unknown.
  EXPECT_FALSE(a.number("derived__local_spilling_requests_pct"));
}

TEST(Aggregate, ASumWithAnUnknownKernelIsUnknown) {
  auto page = parse_raw_page(testing::assembled("raw_three_kernels.csv"));
  ASSERT_TRUE(page);
  page->kernels[1].metrics["dram__bytes_read.sum"].value.reset();
  Aggregate a = aggregate_kernels(page->kernels);
  EXPECT_FALSE(a.number("dram__bytes_read.sum"));
}

TEST(Aggregate, KernelWithoutDurationCannotBeWeighted) {
  auto page = parse_raw_page(testing::ncu_capture("ncu_raw.csv"));
  ASSERT_TRUE(page);
  std::vector<KernelRecord> ks = {page->kernels[0], page->kernels[0]};
  ks[1].metrics["gpu__time_duration.sum"].value.reset();
  Aggregate a = aggregate_kernels(ks);
  EXPECT_EQ(a.kernels_without_duration, 1);
  EXPECT_FALSE(a.total_duration_ns);
  EXPECT_DOUBLE_EQ(*a.number("sm__throughput.avg.pct_of_peak_sustained_elapsed"), 34.79);
}

TEST(Aggregate, Methods) {
  EXPECT_EQ(aggregate_method("gpu__time_duration.sum"), AggregateMethod::kSum);
  EXPECT_EQ(aggregate_method("dram__bytes.sum.per_second"), AggregateMethod::kTimeWeightedMean);
  EXPECT_EQ(aggregate_method("lts__t_sector_hit_rate.pct"), AggregateMethod::kTimeWeightedMean);
}

}  // namespace kopt::profile
