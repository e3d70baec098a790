// summary.json's sections as summary.md reads them (record/summary_sections.h): what the loop writes reads back typed,
// each struct round-trips, a wrong type names the field.
#include "record/summary_sections.h"

#include <gtest/gtest.h>

#include "record/summary_record.h"

namespace kopt::record {
namespace {

using util::Json;

// A record whose fields KOPT_RECORD_FIELDS names: written, read back equal, and written again the same.
template <class T>
void record_round_trips(const T& v) {
  const Json j = write_record(v);
  EXPECT_EQ(read_record<T>(j), v) << j.dump();
  EXPECT_EQ(write_record(read_record<T>(j)), j);
}

// The sections as the loop writes them (loop/summary.cpp and the modules it copies from), one of each.
Json loop_sections() {
  Json case_row = {{"name", "scale_0.5"}, {"requested", {{"n", 1024}}}, {"realised", {{"n", 1024}}}, {"fitted", false},
                   {"weight", 1.0}, {"baseline_ms", 2.0}, {"champion_ms", 1.0}, {"ratio", 0.5}, {"speedup", 2.0},
                   {"floor_ms", 0.5}, {"efficiency", 0.5}, {"note", ""}, {"ratio_ci95", {0.48, 0.52}}, {"verdict", "faster"}};
  Json unmeasured = {{"name", "scale_2"}, {"requested", {{"n", 4096}}}, {"realised", {{"n", 4000}}}, {"fitted", true},
                     {"weight", 0.5}, {"baseline_ms", nullptr}, {"champion_ms", nullptr}, {"ratio", nullptr},
                     {"speedup", nullptr}, {"floor_ms", nullptr}, {"efficiency", nullptr}, {"note", "too large"}};
  return {
      {"timed_at", {{"case", "scale_1"}, {"requested", {{"n", 3000}}}, {"realised", {{"n", 2048}}}, {"note", "fitted"}}},
      {"cases", {{"cases", {case_row, unmeasured}}, {"geomean", {{"cases", 1}, {"ratio", 0.5}, {"speedup", 2.0}}}}},
      {"holdout", {{"passed", 2}, {"outside_domain", 1}, {"champion_fails", 0}, {"not_run", 0}, {"warning", ""}, {"note", ""},
                   {"cases", {{{"case", {{"name", "h1"}}}, {"verdict", "passed"}, {"text", "h1: passed"}}}}}},
      {"dispatch", {{"emitted", true}, {"library", "/r/lib.so"}, {"configs", {{{"id", "i1c1"}}, {{"id", "i2c3"}}}},
                    {"plan", {{"keys", {"n"}}, {"rule", "the nearest case"}, {"buckets", {{{"config", "i1c1"}, {"cases", {"scale_0.5"}}}}}}},
                    {"cases", {{{"case", "scale_0.5"}, {"point", {{"n", 1024}}}, {"weight", 1.0}, {"config", "i1c1"},
                                {"champion_ms", 1.0}, {"dispatch_ms", 0.9}, {"ratio", 0.9}, {"ratio_ci95", {0.88, 0.92}},
                                {"speedup", 1.11}, {"verdict", "faster"}},
                               {{"case", "scale_2"}, {"point", {{"n", 4000}}}, {"config", "i2c3"}, {"status", "crashed"}, {"message", "x"}}}},
                    {"overall", {{"valid", true}, {"geomean_ratio", 0.9}, {"ci95_low", 0.88}, {"ci95_high", 0.92}, {"verdict", "faster"}}},
                    {"checks", {{{"shape", "scale_0.5"}, {"kind", "case"}}, {{"shape", "h1"}, {"kind", "holdout"}}}}}},
      {"gates", {{"race_safe", "yes"}, {"sanitize", "finalists"}, {"workload_matrix", "default"}, {"no_regressions", false},
                 {"champion_gates", "each"}, {"baseline_profile", "deferred"}, {"champion_verified", true},
                 {"baseline_sanitizer", {{"race_safe", "yes"}, {"rejected", false}, {"reason", ""}, {"reported", Json::array()}, {"complete", true}}},
                 {"rejected", {{{"candidate", "i1c2"}, {"gate", "determinism"}, {"reason", "nondeterministic: x"}}}},
                 {"flagged", {{{"candidate", "i1c3"}, {"iteration", 1}, {"regressions", {"scale_2: 8% slower"}}, {"rejected", false}}}},
                 {"determinism", {{{"candidate", "i1c2"}, {"verdict", "nondeterministic"}, {"reason", "x"}}}},
                 {"ephemeral_seed", {{{"candidate", "i1c1"}, {"verdict", "passed"}, {"seed", {{"made", true}}}, {"status", "ok"}}}},
                 {"final_verification", {{{"candidate", "i2c1"}, {"verdict", "rejected"}, {"reason", "race"}, {"fallback", "i1c1"}}}}}},
      {"param_ablations", {{{"iteration", 2}, {"champion_id", "i2c1"}, {"param", "BM"}, {"champion_value", 128},
                            {"baseline_value", 64}, {"variant_id", "i2c1_base_BM"}, {"effect", "helps"},
                            {"effect_text", "the change helps"}, {"saved_ms", {{"median", 0.25}, {"ci95_low", 0.2}, {"ci95_high", 0.3}}}}}},
      {"candidate_costs", {{"candidates", 3},
                           {"median_ms", {{"compile", 800.0}, {"sass", 20.0}, {"measure", 300.0}, {"cases", 100.0}, {"measure_all_cases", 400.0}}},
                           {"p90_ms", {{"compile", 900.0}, {"sass", 25.0}, {"measure", 350.0}, {"cases", 120.0}, {"measure_all_cases", 470.0}}},
                           {"note", "per measured candidate"}}},
      {"reuse", {{"evaluations", 5}, {"reused", 1}, {"raced_again", {"i1c1"}},
                 {"records", {{{"marker", "reused"}, {"record_id", 42}, {"run_dir", "/runs/a"}, {"recorded_at", "2026-11-30T07:12:04Z"},
                               {"run_status", "ok"}, {"median_ms", 1.5}, {"id", "i1c1"}, {"iteration", 1}, {"status", "ok"},
                               {"ablation", false}}}}}},
      {"warm_start", {{"points", {{{"config", {1, 0}}, {"key", "BM=64"}, {"from_dims", {{"n", 2048}}}, {"distance", 0.5},
                                   {"rank", 1}, {"median_ms", 0.7}, {"record_id", 7}, {"run_dir", "/runs/b"}, {"recorded_at", "t"},
                                   {"candidate_id", "i1c1"}, {"reason", "r"}, {"median_ms_here", 1.0}, {"status_here", "ok"}}}}}},
      {"measuring", {{"wall_s", 10.0}, {"per_slot", {{{"slot", 0}, {"name", "gpu0"}, {"runs", 4}, {"lost", 0}, {"busy_s", 8.0}},
                                                    {{"slot", 1}, {"name", "gpu1"}, {"runs", 3}, {"lost", 1}, {"busy_s", 6.5}}}},
                     {"retried", {{{"slots", {0, 1}}, {"lost", false}}}}}},
      {"derived", {{"file", "k.cu"}, {"language", "cuda"}, {"annotated", "..."}, {"copy", "/r/derived/k.cu"},
                   {"params", {{{"name", "THREADS"}, {"origin", "256"}, {"kind", "define"}, {"default", 256}, {"values", {128, 256}},
                                {"line", 3}, {"reason", "a launch's block"}, {"role", "block_threads"}}}},
                   {"constraints", {{{"expr", "THREADS <= 1024"}, {"reason", "the device's limit"}}}},
                   {"methods", {{{"id", "vectorized_access"}, {"reason", "loads"}}}},
                   {"notes", {"a note"}},
                   {"pruned", {{{"candidate", "i1c4"}, {"point", "THREADS=1024"}, {"methods", Json::array()}, {"flags", Json::array()},
                                {"status", "compile_failed"}, {"why", "too many registers"}}}}}},
  };
}

TEST(SummarySections, WhatTheLoopWritesReadsBackTyped) {
  Json j = loop_sections();
  j["schema"] = "kopt.summary/1";
  const SummaryRecord rec = summary_record_from_json(j);
  const SummarySections& s = rec.typed;
  ASSERT_TRUE(s.timed_at);
  EXPECT_EQ(s.timed_at->case_name, "scale_1");
  EXPECT_EQ(s.timed_at->realised, (Dims{{"n", 2048}}));
  ASSERT_TRUE(s.cases && s.cases->cases);
  ASSERT_EQ(s.cases->cases->size(), 2u);
  EXPECT_EQ(s.cases->cases->at(0).ratio_ci95, (std::vector<double>{0.48, 0.52}));
  EXPECT_FALSE(s.cases->cases->at(1).ratio) << "null is absent";
  EXPECT_TRUE(s.cases->cases->at(1).fitted);
  EXPECT_EQ(s.cases->geomean->cases, 1);
  EXPECT_EQ(s.holdout->outside_domain, 1);
  EXPECT_EQ(s.holdout->cases->at(0).text, "h1: passed");
  ASSERT_TRUE(s.dispatch);
  EXPECT_EQ(s.dispatch->configs.size(), 2u);
  EXPECT_EQ(s.dispatch->cases.at(0).case_name, "scale_0.5");
  EXPECT_EQ(s.dispatch->cases.at(1).status, "crashed");
  EXPECT_EQ(s.dispatch->plan->buckets.at(0).cases, std::vector<std::string>{"scale_0.5"});
  EXPECT_EQ(s.dispatch->checks.at(1).kind, "holdout");
  ASSERT_TRUE(s.gates);
  EXPECT_EQ(s.gates->champion_verified, true);
  EXPECT_EQ(s.gates->rejected->at(0).gate, "determinism");
  EXPECT_EQ(s.gates->flagged->at(0).regressions, std::vector<std::string>{"scale_2: 8% slower"});
  EXPECT_EQ(s.gates->final_verification->at(0).fallback, "i1c1");
  EXPECT_EQ(s.param_ablations->at(0).champion_value, 128);
  EXPECT_EQ(s.candidate_costs->p90_ms->measure_all_cases, 470.0);
  EXPECT_EQ(s.reuse->records.at(0).record_id, 42);
  EXPECT_EQ(s.warm_start->points.at(0).from_dims, (Dims{{"n", 2048}}));
  EXPECT_EQ(s.measuring->per_slot.at(1).lost, 1);
  EXPECT_FALSE(s.measuring->retried.at(0).lost);
  EXPECT_EQ(s.derived->params.at(0).default_value, 256);
  EXPECT_EQ(s.derived->params.at(0).values, (std::vector<int64_t>{128, 256}));
  EXPECT_EQ(s.derived->pruned.at(0).why, "too many registers");
  // The sections stay whole, as written: the summary writes them back unchanged.
  EXPECT_EQ(to_json(rec), j);
  // A parameter ablation's record holds every field the loop writes (the page shows it whole).
  EXPECT_EQ(write_record(s.param_ablations->at(0)), j["param_ablations"][0]);
  EXPECT_EQ(write_record(s.cases->cases->at(0)), j["cases"]["cases"][0]);
  // ablation.json's entry adds the race's comparison (loop/ablation.cpp): kept as written too.
  Json in_ablation = j["param_ablations"][0];
  in_ablation["comparison"] = {{"median_ratio", 1.6}, {"rounds", 6}, {"verdict", "slower"}};
  EXPECT_EQ(write_record(read_record<ParamAblationRecord>(in_ablation)), in_ablation);
}

TEST(SummarySections, EachStructRoundTrips) {
  const SummarySections s = summary_record_from_json(loop_sections()).typed;
  record_round_trips(*s.timed_at);
  record_round_trips(*s.cases);
  record_round_trips(*s.holdout);
  record_round_trips(*s.dispatch);
  record_round_trips(*s.gates);
  record_round_trips(s.param_ablations->at(0));
  record_round_trips(*s.candidate_costs);
  record_round_trips(*s.reuse);
  record_round_trips(*s.warm_start);
  record_round_trips(*s.measuring);
  record_round_trips(*s.derived);
  record_round_trips(s);
  record_round_trips(SummarySections{});
}

TEST(SummarySections, AbsentSectionsAndAnOlderSummarysBareCaseRows) {
  const SummaryRecord none = summary_record_from_json(Json{{"schema", "kopt.summary/1"}});
  EXPECT_EQ(none.typed, SummarySections{});
  // Before the case table had its geometric mean, "cases" was the rows alone: kept as written, not typed.
  Json old = {{"schema", "kopt.summary/1"}, {"cases", {{{"name", "c0"}}}}};
  const SummaryRecord rec = summary_record_from_json(old);
  EXPECT_FALSE(rec.typed.cases);
  EXPECT_EQ(rec.sections.at("cases"), old["cases"]);
}

TEST(SummarySections, AWrongTypeNamesTheField) {
  auto bad = parse_file<SummaryRecord>(Json{{"gates", {{"rejected", {{{"candidate", 5}}}}}}}, "RUN/summary.json",
                                       summary_record_from_json);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "RUN/summary.json: gates.rejected[0].candidate: expected a string, found a number");
  bad = parse_file<SummaryRecord>(Json{{"timed_at", {{"case", 1}}}}, "summary.json", summary_record_from_json);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "summary.json: timed_at.case: expected a string, found a number");
  bad = parse_file<SummaryRecord>(Json{{"derived", {{"params", {{{"default", "256"}}}}}}}, "summary.json", summary_record_from_json);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "summary.json: derived.params[0].default: expected an integer, found a string");
  bad = parse_file<SummaryRecord>(Json{{"measuring", {{"per_slot", {{{"runs", 1.5}}}}}}}, "summary.json", summary_record_from_json);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "summary.json: measuring.per_slot[0].runs: expected an integer, found a number");
}

}  // namespace
}  // namespace kopt::record
