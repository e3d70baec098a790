#include "record/run_record.h"

#include "record/candidate.h"
#include "record/run_files.h"
#include "record/summary_record.h"

#include <gtest/gtest.h>

#include "testing/test_support.h"
#include "util/fs.h"

namespace kopt::record {
namespace {

namespace fs = std::filesystem;
using util::Json;

fs::path fixture() { return fs::path(testing_support::test_data_dir()) / "report" / "run_sgemm_h200"; }

CandidateConfig config() {
  CandidateConfig c;
  c.id = "i2c1";
  c.source = "/tmp/k.cu";
  c.origin = "builtin";
  c.content_hash = "abc";
  c.params = std::map<std::string, int64_t>{{"BM", 128}, {"TN", 8}};
  c.constexprs = std::map<std::string, int64_t>{};
  c.launch = std::map<std::string, int64_t>{{"num_warps", 4}};
  c.guards = std::map<std::string, bool>{{"vectorized_access", true}};
  c.defines = std::map<std::string, std::string>{{"BM", "128"}};
  c.methods = std::vector<std::string>{"vectorized_access"};
  c.flags = std::vector<std::string>{"-lineinfo"};
  c.not_ablatable = std::vector<std::string>{};
  c.config = Json::array({1, 0, 2});
  return c;
}

template <class T, class F>
void round_trips(const T& v, F&& from_json) {
  const Json j = to_json(v);
  EXPECT_EQ(from_json(j), v) << j.dump();
  EXPECT_EQ(to_json(from_json(j)), j);  // and the JSON is what was written
}

// A record whose fields KOPT_RECORD_FIELDS names (record/run_files.h).
template <class T>
void record_round_trips(const T& v) {
  const Json j = write_record(v);
  EXPECT_EQ(read_record<T>(j), v) << j.dump();
  EXPECT_EQ(write_record(read_record<T>(j)), j);
}

TEST(RunRecord, EveryStructRoundTrips) {
  round_trips(Wall{12.5, 3.25, std::nullopt}, [](const Json& j) { return wall_from_json(j); });
  round_trips(Wall{}, [](const Json& j) { return wall_from_json(j); });
  round_trips(config(), [](const Json& j) { return candidate_config_from_json(j); });
  round_trips(CandidateConfig{}, [](const Json& j) { return candidate_config_from_json(j); });
  round_trips(ChampionEntry{config(), "/tmp/k.so", 1.25, "/tmp/r.json", 1.5}, [](const Json& j) { return champion_entry_from_json(j); });

  HistoryEntry h;
  h.candidate = config();
  h.status = CandidateStatus::kTimedOut;
  h.iteration = 2;
  h.search_s = 40.5;
  h.compile_ms = 800, h.sass_ms = 12, h.measure_ms = 300, h.cases_ms = 0;
  h.reused = {{"marker", "reused"}, {"record_id", 7}};
  round_trips(h, [](const Json& j) { return history_entry_from_json(j); });
  h.status = CandidateStatus::kIncorrect;
  h.unwritten_fraction = 0.96875;  // an output partly never written: the feasibility model's signal
  round_trips(h, [](const Json& j) { return history_entry_from_json(j); });
  h.unwritten_fraction.reset();
  h.predicted_infeasible = "predicted infeasible (under-coverage): no size parameter larger than at T2=2,BLOCK=256";
  round_trips(h, [](const Json& j) { return history_entry_from_json(j); });
  h.predicted_infeasible.reset();
  h.status = CandidateStatus::kOk;
  h.median_ms = 1.25, h.objective_ms = 1.3;
  round_trips(h, [](const Json& j) { return history_entry_from_json(j); });

  StateRecord s;
  s.version = 1;
  s.iterations_done = 3;
  s.stop_reason = StopReason::kNoImprovement;
  s.stop_detail = "two iterations without a gain";
  s.champion = ChampionEntry{config(), "/tmp/k.so", 1.25, "/tmp/r.json", std::nullopt};
  s.baseline = ChampionEntry{CandidateConfig{}, "", 2.5, "", std::nullopt};
  s.history = {h, h};
  s.phase_seconds = std::map<std::string, double>{{"gates", 70.5}, {"measure", 32.0}};
  s.wall = Wall{300, 20, 250};
  s.timeline = Json::array({{{"iteration", 1}, {"champion_id", "i1c3"}}});
  s.gate_records = {{"holdout", {{"passed", 2}}}};
  s.measuring_wall_s = 100;
  s.measuring_slots = {{"gpu0", 5, 0, 60.5}, {"gpu1", 4, 1, 55}};
  s.meta_gpu = "NVIDIA H200";
  round_trips(s, [](const Json& j) { return state_record_from_json(j); });

  KernelResources k{true, "sm_90", 128, 8192, 0, 16, 16};
  round_trips(k, [](const Json& j) { return kernel_resources_from_json(j); });
  round_trips(KernelResources{false, "", std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt},
              [](const Json& j) { return kernel_resources_from_json(j); });
  BuildRecord b{"ok", 812.5, {k, k}};
  round_trips(b, [](const Json& j) { return build_record_from_json(j); });
  EXPECT_TRUE(b.ok());
  EXPECT_FALSE((BuildRecord{"failed", std::nullopt, {}}.ok()));

  Timing t{1.25, 1.2, 1.3, 0.01, 0.02, 1.1, 1.9, 30, "stable"};
  round_trips(t, [](const Json& j) { return timing_from_json(j); });
  round_trips(RunResult{"ok", t, std::vector<double>{1.2, 1.25}, "", "2026-11-30T07:12:04Z"},
              [](const Json& j) { return run_result_from_json(j); });
  round_trips(RunResult{"crashed", std::nullopt, std::nullopt, "illegal address", ""}, [](const Json& j) { return run_result_from_json(j); });

  SassRecord sr;
  sr.method_status = {{"vectorized_access", "verified"}, {"cp_async", "absent"}};
  sr.kernel_mix = {{{"fp32", 100}, {"ld_global", 8}}, {{"fp32", 3}}};
  round_trips(sr, [](const Json& j) { return sass_record_from_json(j); });

  ReusedRecord ru{true, "reused from the results database", 42, "/runs/a", "2026-11-30T07:12:04Z", "ok", 1.5};
  round_trips(ru, [](const Json& j) { return reused_record_from_json(j); });
  round_trips(ReusedRecord{false, "m", 0, "", "", "", std::nullopt}, [](const Json& j) { return reused_record_from_json(j); });

  SelectionEntry se{"i1c3", "new_champion", "faster", "baseline", std::nullopt, Json{{"rounds", 30}, {"verdict", "faster"}}};
  round_trips(se, [](const Json& j) { return selection_entry_from_json(j); });
  MethodAblation ma{"vectorized_access", "unverified", "inconclusive", Json{{"median", 1.2}}, Json{{"rounds", 30}}, std::nullopt,
                    Json("no gain")};
  round_trips(ma, [](const Json& j) { return method_ablation_from_json(j); });
  ParamAblationRecord pa;
  pa.param = "BM";
  pa.effect = "helps";
  pa.saved_ms = SavedMs{0.25, 0.125, 0.5};
  pa.comparison = Json{{"median_ratio", 1.6}, {"rounds", 6}};
  round_trips(AblationRecord{{ma, ma}, {pa}}, [](const Json& j) { return ablation_record_from_json(j); });
}

// The loop writes state.json's candidates through the record: exactly what search::to_json writes, and back.
TEST(RunRecord, TheSearchsCandidateWritesAsItDidAndReadsBack) {
  search::Candidate c;
  c.id = "i2c1";
  c.source = "/tmp/k.cu";
  c.defines = {{"BM", "128"}};
  c.params = {{"BM", 128}};
  c.guards = {{"vectorized_access", true}};
  c.methods = {"vectorized_access"};
  c.origin = "builtin";
  c.content_hash = "abc";
  for (auto config : {std::optional<search::Config>{}, std::optional<search::Config>(search::Config{1, 0, 2})}) {
    c.config = config;
    EXPECT_EQ(to_json(config_of(c)), search::to_json(c));
    const search::Candidate back = candidate_of(candidate_config_from_json(search::to_json(c)));
    EXPECT_EQ(search::to_json(back), search::to_json(c));
  }
  EXPECT_THROW(candidate_of(CandidateConfig{}), RecordError);  // no id, no source
}

// The other files the report reads: their figures kept as written (an integer count of FLOPs stays an integer).
TEST(RunRecord, TheRunsOtherFilesRoundTripAndKeepTheirNumbersAsWritten) {
  PlacementRecord p{"k", "workload_model", "below_peak", Number{0.69}, Number{61.2}, std::nullopt, Json{{"compute", 0.6}}, std::nullopt,
                    Json("compute"), FloorRecord{Number{68719476736}, Number{50331648}, std::nullopt, Number{2.08}, Number{4800.0},
                                                 "compute", "dram", {{"fp32_fma"}}}};
  record_round_trips(p);
  EXPECT_EQ(write_record(p)["floor"]["flops"].dump(), "68719476736");
  EXPECT_EQ(read_record<PlacementRecord>(Json{{"floor", {{"flops", 68719476736}}}}).floor->flops->value.dump(), "68719476736");
  ProfileMetrics m{{{"compute", {TopMetric{"sm__throughput", "%", "SM throughput", std::nullopt, Number{61.2}, Number{100}, Number{0.388}}}}},
                   "2025.3.1.0", Json{{"bound", "compute"}}};
  record_round_trips(m);
  record_round_trips(ChampionFile{"/runs/r/champion/k.cu", std::nullopt});
  record_round_trips(EnvRecord{{{"NVIDIA H200"}}});
  record_round_trips(DerivationRecord{{{"BM", "launcher_threads"}, {"BN", "tile"}}});
  auto bad = parse_file<PlacementRecord>(Json{{"floor", {{"flops", "many"}}}}, "iter_01/roofline.json",
                                         [](const Json& j) { return read_record<PlacementRecord>(j); });
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "iter_01/roofline.json: floor.flops: expected a number, found a string");
}

TEST(RunRecord, StopReasonIsTheEnumAndTextOnlyAtTheBoundary) {
  for (auto r : {StopReason::kNone, StopReason::kMaxIterations, StopReason::kNearPeak, StopReason::kNoImprovement,
                 StopReason::kGeneratorExhausted, StopReason::kGateFailed, StopReason::kInterrupted, StopReason::kGeneratorFailed,
                 StopReason::kNoValidCandidate, StopReason::kTimeBudget, StopReason::kNoPredictedGain, StopReason::kExplorationSpent}) {
    EXPECT_EQ(stop_reason_from_text(stop_reason_text(r)), r);
    StateRecord s;
    s.stop_reason = r;
    EXPECT_EQ(state_record_from_json(to_json(s)).stop_reason, r);
  }
  EXPECT_EQ(stop_reason_text(StopReason::kNone), "");
  EXPECT_THROW(state_record_from_json(Json{{"stop_reason", "bored"}}), RecordError);
}

TEST(RunRecord, CandidateStatusNamesParse) {
  for (auto s : {CandidateStatus::kOk, CandidateStatus::kCompileFailed, CandidateStatus::kIncorrect, CandidateStatus::kCrashed,
                 CandidateStatus::kTimedOut})
    EXPECT_EQ(parse_candidate_status(search::candidate_status_name(s)), s);
  EXPECT_FALSE(parse_candidate_status("not_run"));
  EXPECT_FALSE(parse_candidate_status(""));
}

// The recorded run (tests/data/report, written before the wall accounting, multi-GPU measuring and the gate records
// existed) loads: absent fields take their defaults.
TEST(RunRecord, AnOlderRunDirectoryLoads) {
  auto s = read_state((fixture() / "state.json").string());
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->version, 1);
  EXPECT_EQ(s->stop_reason, StopReason::kMaxIterations);
  EXPECT_FALSE(s->wall);
  EXPECT_TRUE(s->measuring_slots.empty());
  EXPECT_TRUE(s->gate_records.empty());
  ASSERT_TRUE(s->champion);
  ASSERT_TRUE(s->baseline);
  EXPECT_EQ(s->baseline->candidate.id, "baseline");
  ASSERT_FALSE(s->history.empty());
  EXPECT_EQ(s->history.front().candidate.id, "baseline");
  int ok = 0, failed = 0;
  for (const auto& h : s->history) (h.status == CandidateStatus::kOk ? ok : failed) += 1;
  EXPECT_GT(ok, 0);
  EXPECT_GT(failed, 0);
  ASSERT_TRUE(s->phase_seconds);
  EXPECT_DOUBLE_EQ(s->phase_seconds->at("measure"), 32.0);

  // Every file of every candidate directory, and every iteration's selection and ablation, parses.
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(fixture())) {
    const std::string name = e.path().filename().string();
    auto j = util::read_json(e.path());
    if (!j) continue;
    auto check = [&](auto&& from_json) {
      auto parsed = parse_file<decltype(from_json(*j))>(*j, e.path().string(), from_json);
      EXPECT_TRUE(parsed) << parsed.error().message;
      ++files;
    };
    if (name == "candidate.json") check([](const Json& x) { return candidate_config_from_json(x); });
    if (name == "build.json") check(build_record_from_json);
    if (name == "run.json" || name == "timing.json") check(run_result_from_json);
    if (name == "sass.json") check(sass_record_from_json);
    if (name == "selection.json") check(selection_from_json);
    if (name == "ablation.json") check(ablation_record_from_json);
    if (name == "roofline.json") check([](const Json& x) { return read_record<PlacementRecord>(x); });
    if (name.ends_with("_metrics.json")) check([](const Json& x) { return read_record<ProfileMetrics>(x); });
    if (name == "champion.json") check([](const Json& x) { return read_record<ChampionFile>(x); });
    if (name == "env.json") check([](const Json& x) { return read_record<EnvRecord>(x); });
  }
  EXPECT_GT(files, 50);
}

TEST(RunRecord, AWrongTypeNamesTheFileAndTheField) {
  auto j = util::read_json(fixture() / "state.json").value();
  j["history"][1]["status"] = 3;
  const fs::path dir = fs::path(::testing::TempDir()) / "kopt_record_wrong_type";
  fs::create_directories(dir);
  ASSERT_TRUE(util::write_json_atomic(dir / "state.json", "state", j).ok());
  auto s = read_state((dir / "state.json").string());
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find((dir / "state.json").string()), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("history[1].status: expected a string, found a number"), std::string::npos) << s.error().message;

  auto build = parse_file<BuildRecord>(Json{{"status", "ok"}, {"resources", {{{"registers", "many"}}}}}, "RUN/iter_01/candidates/x/build.json",
                                       build_record_from_json);
  ASSERT_FALSE(build);
  EXPECT_EQ(build.error().message, "RUN/iter_01/candidates/x/build.json: resources[0].registers: expected an integer, found a string");
  auto cand = parse_file<CandidateConfig>(Json{{"params", {{"BM", "64"}}}}, "candidate.json",
                                          [](const Json& x) { return candidate_config_from_json(x); });
  ASSERT_FALSE(cand);
  EXPECT_EQ(cand.error().message, "candidate.json: params.BM: expected an integer, found a string");
  auto unknown = parse_file<HistoryEntry>(Json{{"status", "bored"}}, "state.json", [](const Json& x) { return history_entry_from_json(x, "history[0]"); });
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message, "state.json: history[0].status: unknown candidate status 'bored'");
  // null is absent: the loop writes null for "none".
  EXPECT_FALSE(history_entry_from_json(Json{{"median_ms", nullptr}}).median_ms);
}

// ---- summary.json ----------------------------------------------------------------------------------------------

SummaryRecord sample() {
  return {.schema = "kopt.summary/1", .kernel = "examples/sgemm/kernel.cu", .dims = "K=4096 M=4096 N=4096",
          .numerics_mode = "reference", .generator = "builtin", .meta_gpu = "NVIDIA H200", .meta_time = "2026-11-30T07:20:00Z",
          .sizes_guessed = true, .gates_passed = true, .has_stop = true, .stop_reason = StopReason::kNearPeak,
          .stop_detail = "efficiency 82% >= 80%", .headline = Headline{10.0, 2.5, 4.0, 1.9, 0.76, "it2_c3", std::nullopt},
          .roofline = RooflineSummary{"workload_model", "near_peak", "compute", true, 2.05, 0.82},
          .timeline = std::vector<TimelineEntry>{{0, 1, 1, "baseline", "gates passed", 10.0, false}, {1, 4, 3, "i1c2", "", 5.0, true}},
          .methods = std::map<std::string, std::vector<std::string>>{{"effective", {"tiling (iteration 1)"}}, {"ineffective", {}}},
          .frontier = std::vector<FrontierEntry>{{"i1c1", 2.6, std::vector<std::string>{"register_tiling"}}},
          .wall = Wall{300, 20, std::nullopt}, .phase_seconds = std::map<std::string, double>{{"gates", 12.0}, {"compile", 30.5}},
          .champion_path = "/runs/r/champion/kernel.cu", .run_dir = "/runs/r",
          .sections = {{"gates", {{"race_safe", "safe"}}}, {"holdout", nullptr},
                       {"meta", {{"gpu", "NVIDIA H200"}, {"time", "2026-11-30T07:20:00Z"}}}},
          .typed = {.gates = GatesSection{.race_safe = "safe"}}};  // what summary.md reads of the sections
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

TEST(SummaryRecord, TheSchemaIsReadBeforeTheSummary) {
  EXPECT_EQ(summary_schema(Json{{"schema", "kopt.summary/1"}, {"stop", {{"reason", "bored"}}}}), "kopt.summary/1");
  EXPECT_EQ(summary_schema(Json{{"stop", {{"reason", "patience"}}}}), std::nullopt);
  EXPECT_EQ(summary_schema(Json{{"schema", 1}}), std::nullopt);
  EXPECT_EQ(summary_schema(Json::array()), std::nullopt);
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
