#include "profile/plan.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace kopt::profile {

namespace {
bool has_pair(const std::vector<std::string>& cmd, const std::string& flag, const std::string& value) {
  for (size_t i = 0; i + 1 < cmd.size(); ++i)
    if (cmd[i] == flag && cmd[i + 1] == value) return true;
  return false;
}
std::vector<std::string> values_of(const std::vector<std::string>& cmd, const std::string& flag) {
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < cmd.size(); ++i)
    if (cmd[i] == flag) out.push_back(cmd[i + 1]);
  return out;
}
}  // namespace

TEST(NcuCommand, Pass1) {
  auto cmd = ncu_profile_command({"/opt/ncu/ncu", pass1_sections(), {}, CacheControl::kAll, "/run/it1/profile_pass1",
                                  {"/usr/bin/kopt", "__runner", "--lib", "k.so", "--mode", "profile"}});
  EXPECT_EQ(cmd.front(), "/opt/ncu/ncu");
  EXPECT_TRUE(has_pair(cmd, "--profile-from-start", "off"));
  EXPECT_TRUE(has_pair(cmd, "--clock-control", "none"));
  EXPECT_TRUE(has_pair(cmd, "--target-processes", "all"));
  EXPECT_TRUE(has_pair(cmd, "--cache-control", "all"));
  EXPECT_TRUE(has_pair(cmd, "-o", "/run/it1/profile_pass1"));
  EXPECT_NE(std::find(cmd.begin(), cmd.end(), "-f"), cmd.end());
  EXPECT_EQ(values_of(cmd, "--section"), (std::vector<std::string>{"SpeedOfLight", "LaunchStats", "Occupancy"}));
  EXPECT_TRUE(values_of(cmd, "--metrics").empty());
  // The raw page printed as well (read without an `ncu --import`, issue 36), before the target.
  EXPECT_TRUE(has_pair(cmd, "--page", "raw"));
  EXPECT_NE(std::find(cmd.begin(), cmd.end(), "--csv"), cmd.end());
  // The target comes last, untouched.
  std::vector<std::string> tail(cmd.end() - 6, cmd.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"/usr/bin/kopt", "__runner", "--lib", "k.so", "--mode", "profile"}));
}

TEST(NcuCommand, Pass2SectionsPerAxis) {
  EXPECT_EQ(sections_for({Axis::kMemory}, PlanLevel::kFull),
            (std::vector<std::string>{"SpeedOfLight", "LaunchStats", "Occupancy", "MemoryWorkloadAnalysis",
                                      "MemoryWorkloadAnalysis_Tables", "MemoryWorkloadAnalysis_Chart"}));
  EXPECT_EQ(sections_for({Axis::kCompute}, PlanLevel::kFull),
            (std::vector<std::string>{"SpeedOfLight", "LaunchStats", "Occupancy", "ComputeWorkloadAnalysis",
                                      "InstructionStats"}));
  EXPECT_EQ(sections_for({Axis::kLatency, Axis::kMemory}, PlanLevel::kFull),
            (std::vector<std::string>{"SpeedOfLight", "LaunchStats", "Occupancy", "WarpStateStats", "SchedulerStats",
                                      "MemoryWorkloadAnalysis", "MemoryWorkloadAnalysis_Tables",
                                      "MemoryWorkloadAnalysis_Chart"}));
  EXPECT_EQ(sections_for({Axis::kLatency, Axis::kCompute}, PlanLevel::kLight),
            (std::vector<std::string>{"SpeedOfLight", "LaunchStats", "Occupancy", "WarpStateStats",
                                      "ComputeWorkloadAnalysis"}));
  EXPECT_EQ(sections_for({Axis::kMemory}, PlanLevel::kBase), pass1_sections());

  auto cmd = ncu_profile_command({"ncu", sections_for({Axis::kMemory}, PlanLevel::kFull),
                                  {"lts__t_sector_hit_rate.pct", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"},
                                  CacheControl::kNone, "out/p", {"runner"}});
  EXPECT_TRUE(has_pair(cmd, "--cache-control", "none"));
  EXPECT_TRUE(has_pair(cmd, "--metrics", "lts__t_sector_hit_rate.pct,gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"));
  EXPECT_EQ(values_of(cmd, "--section").size(), 6u);
}

TEST(NcuCommand, ImportQueryAndVersion) {
  EXPECT_EQ(ncu_import_command("ncu", "r.ncu-rep", "raw", true),
            (std::vector<std::string>{"ncu", "--import", "r.ncu-rep", "--csv", "--page", "raw"}));
  EXPECT_EQ(ncu_import_command("ncu", "r.ncu-rep", "details", false),
            (std::vector<std::string>{"ncu", "--import", "r.ncu-rep", "--page", "details"}));
  EXPECT_EQ(ncu_query_metrics_command("ncu", "gh100"),
            (std::vector<std::string>{"ncu", "--query-metrics", "--chip", "gh100"}));
  EXPECT_EQ(ncu_version_command("ncu"), (std::vector<std::string>{"ncu", "--version"}));
}

TEST(ProfilePlanJson, RoundTrip) {
  ProfilePlan p;
  p.fixed = true;
  p.axes = {Axis::kLatency, Axis::kMemory};
  p.level = PlanLevel::kLight;
  p.sections = sections_for(p.axes, p.level);
  p.metrics = {"lts__t_sector_hit_rate.pct"};
  p.unavailable = {"smsp__pcsamp_sample_count"};
  p.reason = "because";
  auto back = plan_from_json(to_json(p));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->fixed, true);
  EXPECT_EQ(back->axes, p.axes);
  EXPECT_EQ(back->level, PlanLevel::kLight);
  EXPECT_EQ(back->sections, p.sections);
  EXPECT_EQ(back->metrics, p.metrics);
  EXPECT_EQ(back->unavailable, p.unavailable);
  util::Json bad = to_json(p);
  bad["axes"] = {"sideways"};
  auto err = plan_from_json(bad);
  ASSERT_FALSE(err);
  EXPECT_EQ(err.error().code, ExitCode::kInput);
  EXPECT_FALSE(plan_from_json(util::Json::object()));
}

}  // namespace kopt::profile
