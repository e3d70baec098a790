// Parsers against real Nsight Compute 2025.3.1 output captured on an H200 (2026-11-30) with
// `scripts/device/check.sh ncu-captures`: a program (twok.cu) that launches a setup kernel, then two kernels inside a
// cudaProfilerStart/Stop range, then another kernel after it. Only the two ranged kernels may appear.
#include <gtest/gtest.h>

#include "profile/details_page.h"
#include "profile/plan.h"
#include "profile/profiler.h"
#include "profile/query_metrics.h"
#include "profile/raw_page.h"
#include "profile/registry.h"
#include "profile/test_data.h"

namespace kopt::profile {

using testing::ncu_capture;

TEST(NcuH200Capture, ProfilerRangeHoldsOnlyTheCallsKernels) {
  for (const char* file : {"twok_pass1_raw.csv", "twok_pass2_raw.csv"}) {
    auto page = parse_raw_page(ncu_capture(file));
    ASSERT_TRUE(page.ok()) << page.error().message;
    ASSERT_EQ(page->kernels.size(), 2u) << file;
    EXPECT_NE(page->kernels[0].name.find("scale_kernel"), std::string::npos);
    EXPECT_NE(page->kernels[1].name.find("stencil_kernel"), std::string::npos);
    for (const auto& k : page->kernels) {
      EXPECT_EQ(k.name.find("setup_fill"), std::string::npos);
      auto d = duration_ns(k);
      ASSERT_TRUE(d.has_value()) << file << " " << k.name;
      EXPECT_GT(*d, 1000);  // 16M floats: tens of microseconds
      EXPECT_LT(*d, 1e7);
      EXPECT_EQ(k.grid_size, "(65536, 1, 1)");
    }
  }
}

TEST(NcuH200Capture, DetailsCsvHasRuleColumnsAndRulesForBothKernels) {
  auto d = parse_details_csv(ncu_capture("twok_pass2_details.csv"));
  EXPECT_TRUE(d.has_rule_columns);
  ASSERT_FALSE(d.rules.empty());
  bool k0 = false, k1 = false, with_speedup = false;
  for (const auto& r : d.rules) {
    k0 = k0 || r.kernel_id == 0;
    k1 = k1 || r.kernel_id == 1;
    with_speedup = with_speedup || r.speedup_pct.has_value();
    EXPECT_FALSE(r.message.empty());
    EXPECT_EQ(r.message.find('@'), std::string::npos) << r.message;  // markup resolved
  }
  EXPECT_TRUE(k0 && k1);
  EXPECT_TRUE(with_speedup);
  bool sol = false;
  for (const auto& r : d.rules) sol = sol || (r.rule == "SOLBottleneck" && r.type == RuleType::kOpt);
  EXPECT_TRUE(sol);
}

TEST(NcuH200Capture, EveryHardwareMetricOfTheRegistryExistsOnGh100) {
  auto listed = parse_query_metrics(ncu_capture("query_metrics_gh100.txt"));
  EXPECT_GT(listed.size(), 1000u);
  std::vector<std::string> requested;
  for (const auto& m : metric_registry())
    if (listed_by_query_metrics(m.name)) requested.push_back(m.name);
  ASSERT_FALSE(requested.empty());
  auto check = check_metrics(requested, listed);
  EXPECT_TRUE(check.missing.empty()) << "first missing: " << (check.missing.empty() ? "" : check.missing[0]);
  auto bogus = check_metrics({"nope__metric.sum"}, listed);
  EXPECT_EQ(bogus.missing, std::vector<std::string>{"nope__metric.sum"});
}

TEST(NcuH200Capture, AnalysisOfTheTwoKernelCall) {
  auto page = parse_raw_page(ncu_capture("twok_pass2_raw.csv"));
  ASSERT_TRUE(page.ok());
  auto rules = parse_details_csv(ncu_capture("twok_pass2_details.csv"));
  ProfilePlan plan;
  plan.fixed = true;
  plan.sections = sections_for({Axis::kMemory, Axis::kLatency}, PlanLevel::kFull);
  auto r = analyse(*page, rules.rules, plan, 5);
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_FALSE(r.top_for(Axis::kMemory).empty());
  EXPECT_LE(r.top_for(Axis::kMemory).size(), 5u);
  // Both kernels stream 16M floats: the call classifies as memory-bound or latency-bound, never compute.
  auto sol_mem = r.kernels[0].record.number("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed");
  ASSERT_TRUE(sol_mem.has_value());
  EXPECT_GT(*sol_mem, 20);
}

}  // namespace kopt::profile
