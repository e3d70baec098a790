#include "roofline/gaps.h"

#include <gtest/gtest.h>

#include <limits>

#include "util/json_io.h"
#include "testing/test_support.h"

namespace kopt::roofline {

namespace {

// Metrics of a saxpy-like kernel profiled by ncu 2025.3.1 on the H200 (/work/shared/h200-captures).
std::map<std::string, double> saxpy_h200() {
  auto j = util::read_json(testing_support::test_data_dir() + "/roofline/ncu-2025.3.1/saxpy_h200_metrics.json");
  EXPECT_TRUE(j);
  return (*j)["metrics"].get<std::map<std::string, double>>();
}

Utilisation util_of(std::optional<double> c, std::optional<double> m, std::optional<double> issue = std::nullopt) {
  Utilisation u;
  u.compute = c;
  u.memory = m;
  u.issue = issue;
  return u;
}

}  // namespace

TEST(Utilisation, ReadsTheH200Capture) {
  auto u = utilisation_from_ncu(saxpy_h200());
  ASSERT_TRUE(u) << u.error().message;
  EXPECT_NEAR(*u->compute, 0.3479, 1e-9);  // sm__throughput
  EXPECT_EQ(u->sources.at("compute"), ncu::kSmThroughput);
  EXPECT_NEAR(*u->memory, 0.7081, 1e-9);   // gpu__compute_memory_throughput (= dram__throughput here)
  EXPECT_NEAR(*u->dram, 0.7081, 1e-9);
  EXPECT_NEAR(*u->issue, 0.17, 1e-9);      // smsp__issue_active.avg.per_cycle_active, the first present
  EXPECT_EQ(u->sources.at("issue"), ncu::kIssueActivePerCycle);
  EXPECT_NEAR(*u->occupancy, 0.7418, 1e-9);
  EXPECT_DOUBLE_EQ(*u->dram_bytes, 536877312.0 + 249896192.0);  // read + write
  EXPECT_EQ(u->top_stall, "long_scoreboard");
  EXPECT_NEAR(*u->top_stall_ratio, 59.35, 1e-9);
}

TEST(Utilisation, DramAgainstTheMeasuredCeilingRatherThanTheTheoreticalPeak) {
  // 3.407 TB/s achieved: 70.8% of ncu's theoretical 4.81 TB/s, 79.2% of a measured 4.3 TB/s copy.
  auto u = utilisation_from_ncu(saxpy_h200(), 4300.0);
  ASSERT_TRUE(u);
  EXPECT_NEAR(*u->dram, 3407243902439.02 / 4300e9, 1e-9);
  EXPECT_NEAR(*u->memory, *u->dram, 1e-12);
  EXPECT_NE(u->sources.at("memory").find("dram__bytes.sum.per_second / the DRAM ceiling (4300 GB/s)"),
            std::string::npos);
  // Without .per_second, from the bytes and the duration.
  auto m = saxpy_h200();
  m.erase(ncu::kDramBytesPerSecond);
  auto v = utilisation_from_ncu(m, 4300.0);
  EXPECT_NEAR(*v->dram, (536877312.0 + 249896192.0) / 230912e-9 / 4300e9, 1e-9);
  // Above the ceiling: clamped to 1.
  auto w = utilisation_from_ncu(saxpy_h200(), 3000.0);
  EXPECT_DOUBLE_EQ(*w->dram, 1.0);
}

TEST(Utilisation, PrefersTheIssueMetricsInOrder) {
  auto u = utilisation_from_ncu({{ncu::kSmIssueActive, 16.52}, {ncu::kIssueActive, 40}});
  EXPECT_NEAR(*u->issue, 0.40, 1e-12);
  EXPECT_EQ(u->sources.at("issue"), ncu::kIssueActive);
  auto v = utilisation_from_ncu({{ncu::kSmIssueActive, 16.52}});
  EXPECT_NEAR(*v->issue, 0.1652, 1e-12);
}

TEST(Utilisation, MissingMetricsAreUnknownNeverZero) {
  auto u = utilisation_from_ncu({});
  ASSERT_TRUE(u);
  EXPECT_FALSE(u->compute);
  EXPECT_FALSE(u->memory);
  EXPECT_FALSE(u->issue);
  EXPECT_FALSE(u->dram_bytes);
  EXPECT_FALSE(u->top_stall);
  // Read bytes without write bytes are not the traffic.
  auto v = utilisation_from_ncu({{ncu::kDramBytesRead, 1e6}});
  EXPECT_FALSE(v->dram_bytes);
  Gaps g = axis_gaps(*u);
  EXPECT_FALSE(g.compute);
  EXPECT_FALSE(g.memory);
  EXPECT_FALSE(g.latency);
}

TEST(Utilisation, ImpossibleValuesAreMissingNotFatal) {
  auto a = utilisation_from_ncu({{ncu::kSmThroughput, -3}, {ncu::kMemThroughput, 40}});
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_FALSE(a->compute);  // unknown, never 0
  EXPECT_DOUBLE_EQ(*a->memory, 0.4);
  ASSERT_EQ(a->ignored.size(), 1u);
  EXPECT_NE(a->ignored[0].find(ncu::kSmThroughput), std::string::npos);
  auto inf = utilisation_from_ncu({{ncu::kDramBytes, std::numeric_limits<double>::infinity()}});
  ASSERT_TRUE(inf);
  EXPECT_FALSE(inf->dram_bytes);
  auto over = utilisation_from_ncu({{ncu::kDramThroughput, 250}});
  ASSERT_TRUE(over);
  EXPECT_FALSE(over->memory);
  EXPECT_NE(over->ignored.at(0).find("expected 0..100"), std::string::npos);
  // Seen on the H200 (the reduction example, 2026-11-30): a max-over-units percentage kopt does not even read.
  auto h200 = utilisation_from_ncu({{"smsp__issue_inst0.max.pct_of_peak_sustained_active", 413.02140750507306},
                                    {ncu::kMemThroughput, 91.5}});
  ASSERT_TRUE(h200);
  EXPECT_DOUBLE_EQ(*h200->memory, 0.915);
  EXPECT_EQ(h200->ignored.size(), 1u);
  auto slightly_over = utilisation_from_ncu({{ncu::kDramThroughput, 100.4}});  // ncu does this: clamped
  EXPECT_DOUBLE_EQ(*slightly_over->memory, 1.0);
  EXPECT_TRUE(slightly_over->ignored.empty());
}

TEST(Gaps, AreOneMinusUtilisationPerAxis) {
  auto u = utilisation_from_ncu(saxpy_h200());
  Gaps g = axis_gaps(*u);
  EXPECT_NEAR(*g.compute, 1 - 0.3479, 1e-9);
  EXPECT_NEAR(*g.memory, 1 - 0.7081, 1e-9);
  EXPECT_NEAR(*g.latency, 1 - 0.17, 1e-9);
  Gaps partial = axis_gaps(util_of(std::nullopt, 0.9));
  EXPECT_FALSE(partial.compute);
  EXPECT_NEAR(*partial.memory, 0.1, 1e-12);
}

TEST(Bound, IsTheResourceNearestSaturationNotTheLargestGap) {
  auto u = utilisation_from_ncu(saxpy_h200());
  EXPECT_EQ(bound_axis(*u), Axis::kMemory);  // memory 70.8% > compute 34.8%, though Δc is the larger gap
  EXPECT_EQ(bound_axis(util_of(0.92, 0.40)), Axis::kCompute);
  EXPECT_EQ(bound_axis(util_of(0.65, 0.65)), Axis::kMemory);   // a tie goes to memory
  EXPECT_EQ(bound_axis(util_of(0.30, 0.25, 0.1)), Axis::kLatency);  // nothing near its peak
  EXPECT_EQ(bound_axis(util_of(0.30, 0.59)), Axis::kLatency);
  EXPECT_EQ(bound_axis(util_of(0.30, 0.60)), Axis::kMemory);   // the threshold is inclusive
  EXPECT_EQ(bound_axis(util_of(0.30, 0.59), 0.5), Axis::kMemory);
  EXPECT_FALSE(bound_axis(util_of(std::nullopt, 0.95)));       // compute unknown: could be nearer
  EXPECT_FALSE(bound_axis(util_of(0.2, std::nullopt)));
}

}  // namespace kopt::roofline
