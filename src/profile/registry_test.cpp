#include "profile/registry.h"

#include <gtest/gtest.h>

#include <set>

#include "profile/metric_names.h"
#include "profile/raw_page.h"
#include "profile/test_data.h"
#include "util/strings.h"

namespace kopt::profile {

TEST(MetricRegistry, LintIsClean) {
  auto problems = lint_registry(metric_registry());
  EXPECT_TRUE(problems.empty()) << util::join(problems, "\n");
  for (Axis a : kAllAxes) EXPECT_GE(metrics_for_axis(a).size(), 5u) << axis_name(a);
}

TEST(MetricRegistry, LintCatchesBadEntries) {
  std::vector<MetricSpec> r = metric_registry();
  r.push_back(r.front());                 // duplicate name
  r.back().unit = "furlongs";             // unknown unit
  MetricSpec s = r.front();
  s.name = "lts__fake.pct";
  s.aliases = {"sm__throughput.avg.pct_of_peak_sustained_elapsed"};  // alias shadowing another entry
  s.description.clear();
  s.section = "NoSuchSection";
  s.scale = 0;
  s.ideal = 150;
  r.push_back(s);
  std::string all = util::join(lint_registry(r), "\n");
  for (const char* expected : {"listed twice", "unknown unit 'furlongs'", "no description", "unknown section",
                               "no positive scale", "ideal outside 0..100"})
    EXPECT_NE(all.find(expected), std::string::npos) << expected << "\n" << all;
}

TEST(MetricRegistry, EveryNameExistsInARealH200FullReport) {
  // Metric names of the real saxpy report collected with --set full (ncu 2025.3.1, H200).
  std::set<std::string> names;
  for (const auto& l : util::split_lines(testing::ncu_capture("saxpy_full_metric_names.txt"))) names.insert(l);
  ASSERT_GT(names.size(), 2000u);
  for (const auto& s : metric_registry()) {
    EXPECT_TRUE(names.count(s.name)) << s.name;
    if (!s.scale_metric.empty()) {
      EXPECT_TRUE(names.count(s.scale_metric)) << s.scale_metric;
    }
  }
  for (auto m : metric::kRequired) EXPECT_TRUE(names.count(std::string(m))) << m;
}

TEST(MetricRegistry, RequiredMetricsArePresentInTheRealPass1StyleCapture) {
  auto page = parse_raw_page(testing::ncu_capture("ncu_raw.csv"));
  ASSERT_TRUE(page);
  for (auto m : metric::kRequired) EXPECT_TRUE(page->kernels[0].number(std::string(m))) << m;
}

TEST(MetricRegistry, LookupByNameAndAlias) {
  const MetricSpec* dram = find_metric("dram__throughput.avg.pct_of_peak_sustained_elapsed");
  ASSERT_NE(dram, nullptr);
  EXPECT_EQ(dram->name, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed");
  EXPECT_EQ(dram->axis, Axis::kMemory);
  EXPECT_EQ(find_metric("nope__nothing"), nullptr);
  const MetricSpec* ls = find_metric("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio");
  ASSERT_NE(ls, nullptr);
  EXPECT_EQ(ls->direction, Direction::kLowerBetter);
  EXPECT_EQ(ls->scale_metric, "smsp__average_warp_latency_per_inst_issued.ratio");
}

}  // namespace kopt::profile
