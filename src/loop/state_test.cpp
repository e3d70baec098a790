#include "loop/state.h"

#include <gtest/gtest.h>

namespace kopt::loop {

TEST(RunStateJournal, RoundTripsEverythingResumeNeeds) {
  RunState s;
  s.gates_passed = true;
  s.iterations_done = 2;
  search::Candidate c;
  c.id = "i2c1";
  c.source = "/tmp/k.cu";
  c.defines = {{"BM", "128"}, {"KOPT_VECTORIZED_ACCESS", "1"}};
  c.params = {{"BM", 128}};
  c.guards = {{"vectorized_access", true}};
  c.methods = {"vectorized_access"};
  c.config = search::Config{1, 0, 2};
  c.content_hash = "abc";
  s.champion = ChampionRecord{c, "/tmp/k.so", 1.25, "/tmp/r.json"};
  s.baseline = ChampionRecord{c, "/tmp/b.so", 2.5, "/tmp/b.json"};
  search::Measurement m;
  m.candidate = c;
  m.status = search::CandidateStatus::kIncorrect;
  m.iteration = 2;
  s.history.push_back(m);
  m.status = search::CandidateStatus::kOk;
  m.median_ms = 1.25;
  s.history.push_back(m);
  search::Measurement ab = m;  // an ablation's variant: the champion with a method off, with its objective
  ab.candidate.id = "i2c1_no_vectorized_access";
  ab.candidate.config = search::Config{1, 0, 0};
  ab.median_ms = 1.5;
  ab.objective_ms = 1.45;
  s.ablations.push_back(ab);
  s.verdicts.push_back({"vectorized_access", search::Verdict::kEffective, 2, false, {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 80.0}}});
  s.verdicts.push_back({"smem_padding", search::Verdict::kUnverified, 2, true, {}});
  search::MethodVerdict measured{"smem_padding", search::Verdict::kMeasuredEffective, 3, true, {}};
  measured.saved_ms = 0.135;
  measured.saved_ci95_low_ms = 0.12;
  measured.saved_ci95_high_ms = 0.15;
  s.verdicts.push_back(measured);
  ParamAblation pa;
  pa.iteration = 2;
  pa.champion_id = "i2c1";
  pa.param = "BM";
  pa.champion_value = 128;
  pa.baseline_value = 64;
  pa.variant_id = "i2c1_base_BM";
  pa.effect = ParamEffect::kHelps;
  pa.saved = Attribution{0.8, 0.7, 0.9};
  s.param_ablations.push_back(pa);
  ParamAblation invalid = pa;
  invalid.param = "TM";
  invalid.variant_id.clear();
  invalid.effect = ParamEffect::kInvalid;
  invalid.saved.reset();
  invalid.note = "TM=4 breaks a constraint";
  s.param_ablations.push_back(invalid);
  s.stop.iterations_done = 2;
  s.stop.iterations_without_gain = 1;
  s.phase_seconds = {{"compile", 12.5}};
  s.reference_ms = 3.0;
  auto back = state_from_json(to_json(s));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(back->gates_passed);
  EXPECT_EQ(back->iterations_done, 2);
  ASSERT_TRUE(back->champion);
  EXPECT_EQ(back->champion->candidate.id, "i2c1");
  EXPECT_EQ(back->champion->candidate.defines.at("KOPT_VECTORIZED_ACCESS"), "1");
  EXPECT_EQ(*back->champion->candidate.config, (search::Config{1, 0, 2}));
  EXPECT_DOUBLE_EQ(back->champion->median_ms, 1.25);
  ASSERT_EQ(back->history.size(), 2u);
  EXPECT_EQ(back->history[0].status, search::CandidateStatus::kIncorrect);
  EXPECT_FALSE(back->history[0].median_ms);
  EXPECT_DOUBLE_EQ(*back->history[1].median_ms, 1.25);
  ASSERT_EQ(back->ablations.size(), 1u) << "resume keeps what the ablations measured (the search learns from it)";
  EXPECT_EQ(back->ablations[0].candidate.id, "i2c1_no_vectorized_access");
  EXPECT_EQ(*back->ablations[0].candidate.config, (search::Config{1, 0, 0}));
  EXPECT_DOUBLE_EQ(*back->ablations[0].objective_ms, 1.45);
  ASSERT_EQ(back->param_ablations.size(), 2u) << "what each changed parameter saved survives a resume";
  EXPECT_EQ(back->param_ablations[0].param, "BM");
  EXPECT_EQ(back->param_ablations[0].champion_value, 128);
  EXPECT_EQ(back->param_ablations[0].baseline_value, 64);
  EXPECT_EQ(back->param_ablations[0].effect, ParamEffect::kHelps);
  ASSERT_TRUE(back->param_ablations[0].saved);
  EXPECT_DOUBLE_EQ(back->param_ablations[0].saved->ci95_low_ms, 0.7);
  EXPECT_EQ(back->param_ablations[1].effect, ParamEffect::kInvalid);
  EXPECT_FALSE(back->param_ablations[1].saved);
  EXPECT_EQ(back->param_ablations[1].note, "TM=4 breaks a constraint");
  ASSERT_EQ(back->verdicts.size(), 3u);
  EXPECT_EQ(back->verdicts[2].verdict, search::Verdict::kMeasuredEffective);
  EXPECT_DOUBLE_EQ(*back->verdicts[2].saved_ms, 0.135);
  EXPECT_DOUBLE_EQ(*back->verdicts[2].saved_ci95_low_ms, 0.12);
  EXPECT_FALSE(back->verdicts[0].saved_ms);
  EXPECT_EQ(back->verdicts[0].verdict, search::Verdict::kEffective);
  EXPECT_FALSE(back->verdicts[0].measured_gain);
  EXPECT_EQ(back->verdicts[1].verdict, search::Verdict::kUnverified);
  EXPECT_TRUE(back->verdicts[1].measured_gain);
  EXPECT_EQ(back->stop.iterations_without_gain, 1);
  EXPECT_DOUBLE_EQ(back->phase_seconds.at("compile"), 12.5);
  EXPECT_FALSE(back->finished());
}

TEST(RunStateJournal, RejectsOtherVersionsAndBrokenRecords) {
  EXPECT_FALSE(state_from_json({{"version", 99}}).ok());
  auto j = to_json(RunState{});
  j["history"] = {{{"candidate", {{"no_id", 1}}}}};
  auto r = state_from_json(j);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ExitCode::kInput);
}

TEST(RunStateJournal, TheStopReasonIsWrittenByNameAndReadBack) {
  // state.json keeps the names it always had: "" while running, stop_name() once finished.
  EXPECT_EQ(to_json(RunState{})["stop_reason"], "");
  for (auto r : {StopReason::kMaxIterations, StopReason::kNearPeak, StopReason::kNoImprovement, StopReason::kGeneratorExhausted,
                 StopReason::kGateFailed, StopReason::kInterrupted, StopReason::kGeneratorFailed, StopReason::kNoValidCandidate,
                 StopReason::kTimeBudget, StopReason::kNoPredictedGain, StopReason::kExplorationSpent}) {
    RunState s;
    s.stop_reason = r;
    auto j = to_json(s);
    EXPECT_EQ(j["stop_reason"], std::string(stop_name(r)));
    auto back = state_from_json(j);
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->stop_reason, r);
    EXPECT_TRUE(back->finished());
  }
  auto j = to_json(RunState{});
  j["stop_reason"] = "bored";
  auto bad = state_from_json(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ExitCode::kInput);
}

}  // namespace kopt::loop
