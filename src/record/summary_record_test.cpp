#include "record/summary_record.h"

#include <gtest/gtest.h>

#include "testing/test_support.h"
#include "util/fs.h"

namespace kopt::record {
namespace {

namespace fs = std::filesystem;
using util::Json;

fs::path fixture() { return fs::path(testing_support::test_data_dir()) / "report" / "run_sgemm_h200"; }

SummaryRecord sample() {
  SummaryRecord s;
  s.schema = "kopt.summary/1";
  s.kernel = "examples/sgemm/kernel.cu";
  s.dims = "K=4096 M=4096 N=4096";
  s.numerics_mode = "reference";
  s.generator = "builtin";
  s.sizes_guessed = true;
  s.gates_passed = true;
  s.has_stop = true;
  s.stop_reason = StopReason::kNearPeak;
  s.stop_detail = "efficiency 82% >= 80%";
  s.headline = Headline{10.0, 2.5, 4.0, 1.9, 0.76, "it2_c3", std::nullopt};
  s.roofline = RooflineSummary{"workload_model", "near_peak", "compute", true, 2.05, 0.82};
  s.timeline = std::vector<TimelineEntry>{{0, 1, 1, "baseline", "gates passed", 10.0, false}, {1, 4, 3, "i1c2", "", 5.0, true}};
  s.methods = std::map<std::string, std::vector<std::string>>{{"effective", {"tiling (iteration 1)"}}, {"ineffective", {}}};
  s.frontier = std::vector<FrontierEntry>{{"i1c1", 2.6, std::vector<std::string>{"register_tiling"}}};
  s.wall = Wall{300, 20, std::nullopt};
  s.phase_seconds = std::map<std::string, double>{{"gates", 12.0}, {"compile", 30.5}};
  s.champion_path = "/runs/r/champion/kernel.cu";
  s.run_dir = "/runs/r";
  s.sections = {{"gates", {{"race_safe", "safe"}}}, {"holdout", nullptr}, {"meta", {{"gpu", "NVIDIA H200"}, {"time", "2026-11-30T07:20:00Z"}}}};
  s.meta_gpu = "NVIDIA H200";
  s.meta_time = "2026-11-30T07:20:00Z";
  return s;
}

TEST(SummaryRecord, RoundTrips) {
  const SummaryRecord s = sample();
  const Json j = to_json(s);
  EXPECT_EQ(summary_record_from_json(j), s) << j.dump();
  EXPECT_EQ(to_json(summary_record_from_json(j)), j);
  EXPECT_EQ(headline_from_json(to_json(*s.headline)), *s.headline);
  EXPECT_EQ(roofline_summary_from_json(to_json(*s.roofline)), *s.roofline);
  EXPECT_EQ(timeline_from_json(to_json(*s.timeline)), *s.timeline);
  EXPECT_EQ(frontier_entry_from_json(to_json(s.frontier->front())), s.frontier->front());
  // Not finished: the reason is "" (StopReason::kNone), not absent.
  SummaryRecord running = s;
  running.stop_reason = StopReason::kNone;
  EXPECT_EQ(summary_record_from_json(to_json(running)).stop_reason, StopReason::kNone);
  EXPECT_EQ(to_json(running)["stop"]["reason"], "");
}

TEST(SummaryRecord, TheRecordedRunsSummaryLoadsAndKeepsItsOtherSections) {
  auto j = util::read_json(fixture() / "summary.json").value();
  auto s = parse_file<SummaryRecord>(j, "summary.json", summary_record_from_json);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->schema, "kopt.summary/1");
  EXPECT_EQ(s->stop_reason, StopReason::kMaxIterations);
  ASSERT_TRUE(s->headline);
  EXPECT_TRUE(s->headline->champion_id);
  EXPECT_TRUE(s->timeline);
  EXPECT_FALSE(s->wall);  // written before issue 36
  EXPECT_EQ(s->meta_gpu, "NVIDIA H200");
  // Everything the loop wrote is written back.
  EXPECT_EQ(to_json(*s), j) << to_json(*s).dump() << "\n" << j.dump();
}

TEST(SummaryRecord, AWrongTypeNamesTheField) {
  auto bad = parse_file<SummaryRecord>(Json{{"headline", {{"champion_ms", "fast"}}}}, "RUN/summary.json", summary_record_from_json);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "RUN/summary.json: headline.champion_ms: expected a number, found a string");
  bad = parse_file<SummaryRecord>(Json{{"timeline", {{{"iteration", 1}, {"improved", "yes"}}}}}, "summary.json", summary_record_from_json);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "summary.json: timeline[0].improved: expected true or false, found a string");
  bad = parse_file<SummaryRecord>(Json{{"stop", {{"reason", "bored"}}}}, "summary.json", summary_record_from_json);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "summary.json: stop.reason: unknown stop reason 'bored'");
}

}  // namespace
}  // namespace kopt::record
