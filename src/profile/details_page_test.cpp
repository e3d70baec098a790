#include "profile/details_page.h"

#include <gtest/gtest.h>

#include "profile/test_data.h"

namespace kopt::profile {

TEST(NcuDetails, RulesFromTheRealTextPage) {
  auto rules = parse_details_text(testing::ncu_capture("ncu_details.txt"));
  ASSERT_EQ(rules.size(), 6u);
  for (const auto& r : rules) {
    EXPECT_EQ(r.kernel_id, 0);
    EXPECT_EQ(r.kernel_name, "saxpy(int, float, const float *, float *)");
  }
  EXPECT_EQ(rules[0].section, "SpeedOfLight");
  EXPECT_EQ(rules[0].type, RuleType::kOpt);
  EXPECT_EQ(rules[0].message,
            "Memory is more heavily utilized than Compute: Look at the Memory Workload Analysis section to identify "
            "the DRAM bottleneck. Check memory replay (coalescing) metrics to make sure you're efficiently utilizing "
            "the bytes transferred. Also consider whether it is possible to do more work per memory access (kernel "
            "fusion) or whether there are values you can (re)compute.");
  EXPECT_FALSE(rules[0].speedup_pct);
  EXPECT_EQ(rules[1].section, "SpeedOfLight_RooflineChart");
  EXPECT_EQ(rules[1].type, RuleType::kInf);
  EXPECT_EQ(rules[2].section, "WarpStateStats");
  EXPECT_EQ(rules[2].type, RuleType::kWrn);
  EXPECT_NE(rules[2].message.find("smsp__pcsamp_sample_count could not be found"), std::string::npos);
  // "OPT   Est. Local Speedup: 85.36%" then the message on the following lines; the KPI table is not message.
  EXPECT_EQ(rules[3].type, RuleType::kOpt);
  EXPECT_EQ(rules[3].speedup_pct, 85.36);
  EXPECT_EQ(rules[3].speedup_type, "local");
  EXPECT_TRUE(rules[3].message.starts_with("On average, each warp of this workload spends 59.8 cycles"));
  EXPECT_TRUE(rules[3].message.ends_with("between issuing two instructions."));
  EXPECT_EQ(rules[3].message.find("Key Performance"), std::string::npos);
  EXPECT_EQ(rules[4].type, RuleType::kInf);
  EXPECT_EQ(rules[5].section, "Occupancy");
  EXPECT_EQ(rules[5].speedup_pct, 25.77);
  EXPECT_TRUE(rules[5].message.ends_with("for more details on optimizing occupancy."));
}

TEST(NcuDetails, MarkupAsStoredInTheReportRendersAsTheTextPagePrintsIt) {
  // The message as the real saxpy .ncu-rep stores it (read with ncu_report), against the real text page.
  std::string stored =
      "Memory is more heavily utilized than Compute: Look at the @section:MemoryWorkloadAnalysis:Memory Workload "
      "Analysis@ section to identify the DRAM bottleneck. Check memory replay (coalescing) metrics to make sure "
      "you're efficiently utilizing the bytes transferred. Also consider whether it is possible to do more work per "
      "memory access (kernel fusion) or whether there are values you can (re)compute.";
  auto printed = parse_details_text(testing::ncu_capture("ncu_details.txt"));
  ASSERT_FALSE(printed.empty());
  EXPECT_EQ(strip_rule_markup(stored), printed[0].message);
  EXPECT_EQ(strip_rule_markup("See the @url:Profiling Guide:https://docs.nvidia.com/x#roofline@ for  more."),
            "See the Profiling Guide (https://docs.nvidia.com/x#roofline) for more.");
}

TEST(NcuDetails, RulesFromTheDetailsCsv) {
  DetailsRules d = parse_details_csv(testing::assembled("details_saxpy.csv"));
  ASSERT_TRUE(d.has_rule_columns);
  ASSERT_EQ(d.rules.size(), 4u);  // metric rows are not rules
  EXPECT_EQ(d.rules[0].kernel_id, 0);
  EXPECT_EQ(d.rules[0].section, "SpeedOfLight");
  EXPECT_EQ(d.rules[0].rule, "SOLBottleneck");
  EXPECT_EQ(d.rules[0].type, RuleType::kOpt);
  EXPECT_NE(d.rules[0].message.find("Look at the Memory Workload Analysis section"), std::string::npos);
  EXPECT_EQ(d.rules[1].speedup_pct, 85.36);
  EXPECT_EQ(d.rules[1].speedup_type, "local");
  EXPECT_NE(d.rules[2].message.find("CUDA Best Practices Guide (https://docs.nvidia.com/cuda/"), std::string::npos);
  EXPECT_EQ(d.rules[3].type, RuleType::kInf);
}

TEST(NcuDetails, CsvWithoutRuleColumns) {
  DetailsRules d = parse_details_csv(
      "\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
      "\"0\",\"k\",\"Occupancy\",\"Achieved Occupancy\",\"%\",\"74.23\"\n");
  EXPECT_FALSE(d.has_rule_columns);
  EXPECT_TRUE(d.rules.empty());
}

TEST(NcuDetails, SectionIdentifiers) {
  EXPECT_EQ(section_identifier("GPU Speed Of Light Throughput"), "SpeedOfLight");
  EXPECT_EQ(section_identifier("Warp State Statistics"), "WarpStateStats");
  EXPECT_EQ(section_identifier("MemoryWorkloadAnalysis_Tables"), "MemoryWorkloadAnalysis_Tables");
  EXPECT_EQ(parse_rule_type("WRN"), RuleType::kWrn);
  EXPECT_EQ(describe(RuleType::kOpt), "OPT");
}

}  // namespace kopt::profile
