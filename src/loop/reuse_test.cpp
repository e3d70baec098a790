#include "loop/reuse.h"

#include <gtest/gtest.h>

#include "db/testing.h"

namespace kopt::loop {
namespace {

search::Candidate champion() {
  search::Candidate c;
  c.id = "i1c3";
  c.params = {{"TILE", 64}, {"UNROLL", 2}};
  c.guards = {{"vectorized_access", true}};
  return c;
}

// A correct record raced against `against` with this primary comparison (and over the cases).
db::Record raced(const search::Candidate& against, double ratio, double low, double high, double median_ms = 1.0) {
  db::Record r = db::testing::sample_record();
  r.id = 7;
  r.median_ms = median_ms;
  r.ci95_low_ms = median_ms * 0.99;
  r.ci95_high_ms = median_ms * 1.01;
  util::Json cmp = {{"rounds", 12}, {"median_ratio", ratio}, {"ci95_low", low}, {"ci95_high", high}, {"verdict", "faster"}};
  r.raced = {{"against", opponent_json(against)}, {"primary", cmp}, {"over_cases", cmp}, {"objective_ratio", ratio}};
  return r;
}

TEST(Reuse, ACorrectOrIncorrectRecordIsReusedACrashOrTimeoutIsMeasuredAgain) {
  EXPECT_EQ(decide_reuse(std::nullopt, false).decision, ReuseDecision::kMeasure);
  db::Record r = db::testing::sample_record();
  EXPECT_EQ(decide_reuse(r, false).decision, ReuseDecision::kReuse);
  r.verdict = db::Verdict::kIncorrect;
  r.note = "output y: MISMATCH";
  auto wrong = decide_reuse(r, false);
  EXPECT_EQ(wrong.decision, ReuseDecision::kReuse);
  EXPECT_NE(wrong.reason.find("MISMATCH"), std::string::npos);
  for (auto v : {db::Verdict::kCrashed, db::Verdict::kTimedOut}) {
    r.verdict = v;
    EXPECT_EQ(decide_reuse(r, false).decision, ReuseDecision::kMeasure) << db::verdict_name(v);
  }
  db::Record untimed = db::testing::sample_record();
  untimed.median_ms.reset();
  EXPECT_EQ(decide_reuse(untimed, false).decision, ReuseDecision::kMeasure);
}

TEST(Reuse, RemeasureMeasuresEveryRecordAgain) {
  db::Record r = db::testing::sample_record();
  auto c = decide_reuse(r, true);
  EXPECT_EQ(c.decision, ReuseDecision::kMeasure);
  EXPECT_NE(c.reason.find("--remeasure"), std::string::npos);
  r.verdict = db::Verdict::kIncorrect;
  EXPECT_EQ(decide_reuse(r, true).decision, ReuseDecision::kMeasure);
}

TEST(Reuse, AnAblationReusesOnlyARaceAgainstTheSameChampion) {
  const auto champ = champion();
  db::Record r = raced(champ, 1.1, 1.08, 1.12);
  EXPECT_EQ(decide_reuse(r, false, opponent_json(champ)).decision, ReuseDecision::kReuse);
  search::Candidate other = champ;
  other.params["TILE"] = 32;
  EXPECT_EQ(decide_reuse(r, false, opponent_json(other)).decision, ReuseDecision::kMeasure);
  other = champ;
  other.flags = {"-maxrregcount=64"};
  EXPECT_EQ(decide_reuse(r, false, opponent_json(other)).decision, ReuseDecision::kMeasure) << "the opponent's flags count";
  db::Record never_raced = db::testing::sample_record();
  EXPECT_EQ(decide_reuse(never_raced, false, opponent_json(champ)).decision, ReuseDecision::kMeasure);
}

TEST(Reuse, AStoredComparisonIsReadBackOnlyAgainstItsOpponent) {
  const auto champ = champion();
  db::Record r = raced(champ, 0.9, 0.88, 0.93);
  auto cmp = stored_comparison(r, opponent_json(champ), false);
  ASSERT_TRUE(cmp);
  EXPECT_DOUBLE_EQ(cmp->median_ratio, 0.9);
  EXPECT_DOUBLE_EQ(cmp->ci95_low, 0.88);
  EXPECT_DOUBLE_EQ(cmp->ci95_high, 0.93);
  EXPECT_EQ(cmp->rounds, 12);
  EXPECT_EQ(cmp->verdict, runner::Verdict::kFaster);
  EXPECT_TRUE(stored_comparison(r, opponent_json(champ), true));
  EXPECT_DOUBLE_EQ(*stored_objective_ratio(r, opponent_json(champ)), 0.9);
  search::Candidate other = champ;
  other.guards["vectorized_access"] = false;
  EXPECT_FALSE(stored_comparison(r, opponent_json(other), false));
  EXPECT_FALSE(stored_objective_ratio(r, opponent_json(other)));
  EXPECT_FALSE(comparison_from_json(util::Json::object()));
  EXPECT_FALSE(comparison_from_json({{"median_ratio", 1.0}}));
}

TEST(Reuse, AReusedFinalistThatCouldBeCrownedIsRacedAgain) {
  const auto champ = champion();
  const auto me = opponent_json(champ);
  // Faster in its stored race against this champion: it could be crowned, so it is raced again.
  EXPECT_EQ(decide_race(raced(champ, 0.9, 0.88, 0.93), me, 1.0, false, false).decision, RaceDecision::kRace);
  // Indistinguishable (the CI holds 1, within the noise band): only the tie-break could crown it, so it is raced again
  // when it has fewer methods than the champion, and kept behind otherwise (a fresh "faster" would contradict it).
  EXPECT_EQ(decide_race(raced(champ, 1.0, 0.99, 1.01), me, 1.0, false, true).decision, RaceDecision::kRace);
  auto same = decide_race(raced(champ, 1.0, 0.99, 1.01), me, 1.0, false, false);
  EXPECT_EQ(same.decision, RaceDecision::kSkipNoGain);
  EXPECT_NE(same.reason.find("rules out a gain beyond the noise"), std::string::npos) << same.reason;
  // A CI that reaches below the noise band (0.985): a gain is not ruled out; raced again.
  EXPECT_EQ(decide_race(raced(champ, 0.995, 0.985, 1.003), me, 1.0, false, false).decision, RaceDecision::kRace);
  // Slower in its stored race against this very champion: kept behind, nothing run.
  auto slower = decide_race(raced(champ, 1.05, 1.02, 1.08), me, 1.0, false, true);
  EXPECT_EQ(slower.decision, RaceDecision::kSkipSlower);
  EXPECT_NE(slower.reason.find("this champion"), std::string::npos);
}

TEST(Reuse, RacedAgainstAnotherChampionOnlyAClearMarginOfTheMediansKeepsItBehind) {
  const auto champ = champion();
  search::Candidate earlier = champ;
  earlier.params["TILE"] = 16;
  const auto me = opponent_json(champ);
  // Its stored median 1.10 ms (CI from 1.089) against a champion at 1.0 ms: clearly slower past the drift allowance.
  EXPECT_EQ(decide_race(raced(earlier, 0.8, 0.78, 0.82, 1.10), me, 1.0, false, false).decision, RaceDecision::kSkipSlower);
  // 1.02 ms: within the allowance for drift between processes; raced again.
  EXPECT_EQ(decide_race(raced(earlier, 0.8, 0.78, 0.82, 1.02), me, 1.0, false, false).decision, RaceDecision::kRace);
  // Faster on stored medians: raced again, never crowned on them.
  EXPECT_EQ(decide_race(raced(earlier, 0.8, 0.78, 0.82, 0.9), me, 1.0, false, false).decision, RaceDecision::kRace);
  // A record that is not correct is never a champion.
  db::Record wrong = raced(earlier, 0.8, 0.78, 0.82, 0.9);
  wrong.verdict = db::Verdict::kIncorrect;
  EXPECT_EQ(decide_race(wrong, me, 1.0, false, false).decision, RaceDecision::kSkipSlower);
}

TEST(Reuse, TheMarkerNamesTheRunTheDateAndTheRecord) {
  db::Record r = db::testing::sample_record();
  r.id = 42;
  r.recorded_at = "2026-12-03T17:00:00Z";
  EXPECT_EQ(reused_marker(r), "reused from run kopt_runs/run_20261203_170000 at 2026-12-03T17:00:00Z (record 42)");
  auto j = reused_json(r);
  EXPECT_EQ(j["record_id"], 42);
  EXPECT_EQ(j["run_dir"], "kopt_runs/run_20261203_170000");
  EXPECT_EQ(j["verdict"], "correct");
}

}  // namespace
}  // namespace kopt::loop
