#include "report/summary.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "util/fs.h"

namespace kopt::report {

util::Json sample_summary() {
  return {{"schema", kSummarySchema},
          {"kernel", "examples/sgemm/kernel.cu"},
          {"dims", "K=4096 M=4096 N=4096"},
          {"numerics_mode", "reference"},
          {"generator", "builtin"},
          {"headline", {{"baseline_ms", 10.0}, {"champion_ms", 2.5}, {"champion_id", "it2_c3"},
                        {"speedup_vs_baseline", 4.0}, {"reference_ms", 1.9}, {"speedup_vs_reference", 0.76}}},
          {"roofline", {{"mode", "workload_model"}, {"floor_ms", 2.05}, {"bound", "compute"}, {"efficiency", 0.82}, {"near_peak", true}}},
          {"timeline", {{{"iteration", 0}, {"champion_id", "baseline"}, {"champion_ms", 10.0}, {"improved", false},
                         {"candidates", 1}, {"correct", 1}, {"note", "gates passed"}}}},
          {"methods", {{"effective", {"shared_memory_tiling"}}, {"ineffective", {"loop_unrolling"}}}},
          {"frontier", {{{"id", "it2_c1"}, {"median_ms", 2.6}, {"methods", {"register_tiling"}}}}},
          {"stop", {{"reason", "near_peak"}, {"detail", "efficiency 82% >= 80%"}}},
          {"phase_seconds", {{"gates", 12.0}, {"compile", 30.5}}}};
}

TEST(Summary, RendersEveryPartFromJson) {
  std::string md = render_markdown(sample_summary());
  EXPECT_NE(md.find("| champion (`it2_c3`) | 2.5000 | 4.00x vs baseline |"), std::string::npos) << md;
  EXPECT_NE(md.find("efficiency: 82.0%"), std::string::npos) << md;
  EXPECT_NE(md.find("| effective | shared_memory_tiling |"), std::string::npos);
  EXPECT_NE(md.find("| ineffective | loop_unrolling |"), std::string::npos);
  EXPECT_NE(md.find("stopped: **near_peak**"), std::string::npos);
  EXPECT_NE(md.find("| compile | 30.5 |"), std::string::npos);
  EXPECT_EQ(md.find("guessed"), std::string::npos);
}

TEST(Summary, AnInterruptedRunSaysItIsNotFinishedAndHowToGoOn) {
  auto s = sample_summary();
  s["stop"] = {{"reason", ""}, {"detail", ""}};
  std::string md = render_markdown(s);
  EXPECT_NE(md.find("- stopped: **not finished** — interrupted; `kopt optimize --resume RUN_DIR` continues it"), std::string::npos) << md;
  EXPECT_EQ(md.find("**** —"), std::string::npos) << md;
}

TEST(Summary, TheChampionsSafetyGatesSayWhetherTheyRanWhenAndWhatTheyRejected) {
  auto s = sample_summary();
  s["gates"] = {{"race_safe", "safe"}, {"sanitize", "finalists"}, {"champion_gates", "final"}, {"champion_verified", true},
                {"final_verification", {{{"candidate", "it2_c4"}, {"verdict", "rejected"}, {"reason", "nondeterministic: y differs"},
                                         {"fallback", "it1_c2"}},
                                        {{"candidate", "it2_c3"}, {"verdict", "passed"}}}}};
  std::string md = render_markdown(s);
  EXPECT_NE(md.find("- the champion's determinism check and sanitizer: passed (on the final champion)"), std::string::npos) << md;
  EXPECT_NE(md.find("- final verification: `it2_c4` rejected (nondeterministic: y differs); fell back to `it1_c2`"), std::string::npos) << md;
  // Interrupted before the end, with the sanitizer off: said in bold, and what would have run.
  s["gates"]["champion_verified"] = false;
  s["gates"]["sanitize"] = "off";
  s["gates"].erase("final_verification");
  md = render_markdown(s);
  EXPECT_NE(md.find("- **the champion's determinism check (the sanitizer is off): not run** (the run ended before them; "
                    "`--resume` runs them)"), std::string::npos) << md;
  // The baseline as champion: nothing claimed about gates it did not need.
  s["gates"].erase("champion_verified");
  md = render_markdown(s);
  EXPECT_EQ(md.find("the champion's determinism"), std::string::npos) << md;
}

TEST(Summary, MissingPartsAreNotInvented) {
  util::Json s = {{"schema", kSummarySchema}, {"sizes_guessed", true}};
  std::string md = render_markdown(s);
  EXPECT_NE(md.find("| baseline | n/a | 1.00x |"), std::string::npos) << md;
  EXPECT_NE(md.find("sizes were guessed"), std::string::npos);
}

TEST(Summary, RerenderWritesSummaryMdAndRejectsForeignJson) {
  auto dir = std::filesystem::path(::testing::TempDir()) / "kopt_report_test";
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(util::write_json_atomic(dir / "summary.json", "summary", sample_summary()).ok());
  auto md = rerender(dir.string());
  ASSERT_TRUE(md.ok()) << md.error().message;
  EXPECT_EQ(util::read_file(dir / "summary.md").value(), md.value());
  ASSERT_TRUE(util::write_json_atomic(dir / "summary.json", "x", {{"schema", "other"}}).ok());
  auto bad = rerender(dir.string());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ExitCode::kInput);
}

}  // namespace kopt::report
