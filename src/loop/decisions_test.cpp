#include "loop/decisions.h"

#include <gtest/gtest.h>

namespace kopt::loop {

namespace {
runner::PairedComparison cmp(runner::Verdict v, double ratio = 1.0, double lo = 0.99, double hi = 1.01) {
  runner::PairedComparison c;
  c.rounds = 40;
  c.verdict = v;
  c.median_ratio = ratio;
  c.ci95_low = lo;
  c.ci95_high = hi;
  return c;
}
}  // namespace

TEST(Selection, FinalistsAreTheFastestCorrectOnes) {
  std::vector<Contender> all = {{"a", true, 2.0, 1}, {"b", false, 0.5, 0}, {"c", true, 1.0, 3},
                                {"d", true, 1.0, 1}, {"e", true, 3.0, 0}};
  auto f = pick_finalists(all, 2);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].id, "d");  // tie on time: fewer methods first
  EXPECT_EQ(f[1].id, "c");
  EXPECT_TRUE(pick_finalists({{"x", false, 1, 0}}, 3).empty());
}

// Issue 39: an earlier run's final champion under the same key is raced first, even with a higher median this run,
// and stays a finalist when the top-k cut would drop it; the rest keep their order, fastest first.
TEST(Selection, AStoredChampionIsOrderedFirstAndNeverCutFromTheFinalists) {
  auto stored = [](Contender c, int64_t at) {
    c.stored_champion_s = at;
    c.stored_champion_run = "kopt_runs/run_" + std::to_string(at);
    return c;
  };
  struct Case {
    std::string name;
    std::vector<Contender> all;
    size_t k;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"none stored: fastest first", {{"a", true, 1.01, 0}, {"b", true, 1.0, 0}}, 3, {"b", "a"}},
      {"equal within noise: the stored one first", {{"a", true, 1.0, 0}, stored({"b", true, 1.002, 0}, 100)}, 3, {"b", "a"}},
      {"cut by k: kept besides the k fastest",
       {{"a", true, 1.0, 0}, {"c", true, 1.001, 0}, stored({"b", true, 1.003, 2}, 100)}, 2, {"b", "a", "c"}},
      {"within k: no extra finalist", {{"a", true, 1.0, 0}, stored({"b", true, 1.001, 0}, 100), {"c", true, 1.2, 0}}, 2, {"b", "a"}},
      {"two stored: the newest mark first",
       {stored({"a", true, 1.0, 0}, 100), stored({"b", true, 1.001, 0}, 200), {"c", true, 0.9, 0}}, 3, {"b", "a", "c"}},
      {"a wrong stored champion is no finalist", {{"a", true, 1.0, 0}, stored({"b", false, 0.5, 0}, 100)}, 3, {"a"}},
  };
  for (const auto& c : cases) {
    std::vector<std::string> got;
    for (const auto& f : pick_finalists(c.all, c.k)) got.push_back(f.id);
    EXPECT_EQ(got, c.want) << c.name;
  }
}

TEST(Selection, ChampionChangesOnlyWhenSignificantlyFaster) {
  Contender inc{"base", true, 1.0, 0}, fin{"cand", true, 0.9, 2};
  auto faster = decide(inc, fin, cmp(runner::Verdict::kFaster, 0.9, 0.88, 0.92));
  EXPECT_EQ(faster.decision, ChampionDecision::kNewChampion);
  EXPECT_EQ(faster.champion_id, "cand");
  EXPECT_EQ(decide(inc, fin, cmp(runner::Verdict::kAmbiguous)).champion_id, "base");
  EXPECT_EQ(decide(inc, fin, cmp(runner::Verdict::kSlower)).champion_id, "base");
  // Among equals, fewer methods win, in either direction.
  EXPECT_EQ(decide(inc, fin, cmp(runner::Verdict::kSame)).champion_id, "base");
  Contender heavy{"heavy", true, 1.0, 3}, light{"light", true, 1.0, 1};
  EXPECT_EQ(decide(heavy, light, cmp(runner::Verdict::kSame)).champion_id, "light");
  // An earlier run's final champion yields only to a significantly faster finalist, not to a lighter equal: the
  // H200's second vector_add run crowned the equal i1c2 (one method fewer) over the first run's i1c1, and profiled,
  // ablated and verified it again (22.0 s, warm).
  Contender stored_heavy = heavy;
  stored_heavy.stored_champion_s = 100;
  stored_heavy.stored_champion_run = "kopt_runs/run_100";
  const SelectionOutcome kept = decide(stored_heavy, light, cmp(runner::Verdict::kSame));
  EXPECT_EQ(kept.decision, ChampionDecision::kKeepIncumbent);
  EXPECT_EQ(kept.champion_id, "heavy");
  EXPECT_NE(kept.reason.find("an earlier run's final champion"), std::string::npos) << kept.reason;
  EXPECT_EQ(decide(stored_heavy, light, cmp(runner::Verdict::kFaster, 0.9, 0.88, 0.92)).champion_id, "light");
}

TEST(Ablation, Classification) {
  Attribution sig{0.2, 0.1, 0.3}, noise{0.01, -0.02, 0.04};
  EXPECT_EQ(classify(true, SassEvidence::kPass, sig), MethodVerdict::kEffective);
  EXPECT_EQ(classify(true, SassEvidence::kPass, noise), MethodVerdict::kIneffective);
  EXPECT_EQ(classify(true, SassEvidence::kFail, sig), MethodVerdict::kImplementationFailed);
  // No SASS evidence either way: a measured saving makes it effective by measurement, noise leaves it unverified.
  EXPECT_EQ(classify(true, SassEvidence::kInconclusive, sig), MethodVerdict::kMeasuredEffective);
  EXPECT_EQ(classify(true, SassEvidence::kToolError, sig), MethodVerdict::kMeasuredEffective);
  EXPECT_EQ(classify(true, SassEvidence::kNotApplicable, sig), MethodVerdict::kMeasuredEffective);
  EXPECT_EQ(classify(true, SassEvidence::kInconclusive, noise), MethodVerdict::kUnverified);
  EXPECT_EQ(classify(true, SassEvidence::kInconclusive, std::nullopt), MethodVerdict::kUnverified);
  EXPECT_EQ(classify(false, SassEvidence::kPass, std::nullopt), MethodVerdict::kNotAblatable);
  EXPECT_EQ(classify(false, SassEvidence::kFail, std::nullopt), MethodVerdict::kImplementationFailed);
}

TEST(Ablation, AParameterChangeHelpsHurtsOrHasNoEffectByItsConfidenceInterval) {
  EXPECT_EQ(classify_param({0.5, 0.4, 0.6}), ParamEffect::kHelps);
  EXPECT_EQ(classify_param({0.05, -0.01, 0.1}), ParamEffect::kNoEffect);
  EXPECT_EQ(classify_param({-0.3, -0.4, -0.2}), ParamEffect::kHurts);
  for (auto e : {ParamEffect::kHelps, ParamEffect::kNoEffect, ParamEffect::kHurts, ParamEffect::kNotMeasured, ParamEffect::kInvalid}) {
    EXPECT_EQ(parse_param_effect(param_effect_name(e)), e);
    EXPECT_FALSE(describe(e).empty());
  }
  EXPECT_FALSE(parse_param_effect("better"));
}

TEST(Ablation, AttributionIsTimeWithoutMinusTimeWith) {
  // Champion 1.0 ms, champion without the method 1.25 ms: the method saves 0.25 ms.
  std::vector<double> champ, ablated;
  for (int i = 0; i < 30; ++i) {
    champ.push_back(1.0 + 0.001 * (i % 3));
    ablated.push_back(1.25 + 0.001 * (i % 5));
  }
  auto c = runner::compare_paired(champ, ablated);
  auto a = attribution_from(c);
  EXPECT_NEAR(a.median_ms, 0.25, 0.01);
  EXPECT_TRUE(a.significant());
  EXPECT_LE(a.ci95_low_ms, a.median_ms);
  EXPECT_GE(a.ci95_high_ms, a.median_ms);
}

TEST(Stopping, EarlyStops) {
  StopState s;
  s.max_iterations = 3;
  s.patience = 1;
  EXPECT_EQ(should_stop(s), StopReason::kNone);
  s = after_iteration(s, true, false, false);
  EXPECT_EQ(should_stop(s), StopReason::kNone);
  auto no_gain = after_iteration(s, false, false, false);
  EXPECT_EQ(should_stop(no_gain), StopReason::kNoImprovement);
  auto exhausted = after_iteration(s, true, false, true);
  EXPECT_EQ(should_stop(exhausted), StopReason::kGeneratorExhausted);
  // near_peak counts only with a workload model.
  auto peak = after_iteration(after_iteration(s, false, true, false), false, true, false);
  peak.patience = 0;
  peak.max_iterations = 10;
  EXPECT_EQ(should_stop(peak), StopReason::kNone);
  peak.workload_model = true;
  EXPECT_EQ(should_stop(peak), StopReason::kNearPeak);
  // ...and only once two iterations confirmed it: not at the gates, not after an iteration that gained, not after
  // one iteration's candidates only (a Triton kernel at 85% of its floor stopped after 8 of 36 points on the H200).
  StopState at_gates;
  at_gates.workload_model = at_gates.near_peak = true;
  at_gates.patience = 0;
  EXPECT_EQ(should_stop(at_gates), StopReason::kNone);
  auto gained = after_iteration(at_gates, true, true, false);
  EXPECT_EQ(should_stop(gained), StopReason::kNone);
  auto one_without_gain = after_iteration(gained, false, true, false);
  EXPECT_EQ(should_stop(one_without_gain), StopReason::kNone);
  EXPECT_EQ(should_stop(after_iteration(one_without_gain, false, true, false)), StopReason::kNearPeak);
  // At the roof itself (efficiency >= 1), one iteration without a gain confirms it, never fewer than two iterations.
  auto at_roof = one_without_gain;
  at_roof.at_roof = true;
  EXPECT_EQ(should_stop(at_roof), StopReason::kNearPeak);
  auto roof_first = after_iteration(at_gates, false, true, false);
  roof_first.at_roof = true;
  EXPECT_EQ(should_stop(roof_first), StopReason::kNone) << "one iteration is not enough, at the roof or not";
  auto roof_gained = gained;
  roof_gained.at_roof = true;
  EXPECT_EQ(should_stop(roof_gained), StopReason::kNone) << "an iteration that gained does not confirm";
  StopState m;
  m.max_iterations = 1;
  m.patience = 0;
  EXPECT_EQ(should_stop(after_iteration(m, true, false, false)), StopReason::kMaxIterations);
}

// The iteration that only confirms near peak at the roof gets half a batch (4 at least); every other iteration,
// and any batch the user set, the whole one.
TEST(Stopping, HalfABatchConfirmsNearPeakAtTheRoof) {
  StopState s;
  s.workload_model = s.near_peak = true;
  s.patience = 0;
  EXPECT_EQ(batch_for(s, 12, false), 12) << "at the gates: the first iteration searches";
  auto after_gain = after_iteration(s, true, true, false);
  EXPECT_EQ(batch_for(after_gain, 12, false), 12) << "near peak, not at the roof: two iterations confirm, each whole";
  after_gain.at_roof = true;
  EXPECT_EQ(should_stop(after_iteration(after_gain, false, true, false)), StopReason::kNearPeak)
      << "the next iteration, without a gain, ends the search: it only confirms";
  EXPECT_EQ(batch_for(after_gain, 12, false), 6);
  EXPECT_EQ(batch_for(after_gain, 5, false), 4);
  EXPECT_EQ(batch_for(after_gain, 3, false), 3);
  EXPECT_EQ(batch_for(after_gain, 12, true), 12) << "--branches is the user's";
  auto no_model = after_gain;
  no_model.workload_model = false;
  EXPECT_EQ(batch_for(no_model, 12, false), 12) << "near peak counts only with a workload model";
  auto gates_at_roof = s;
  gates_at_roof.at_roof = true;
  EXPECT_EQ(batch_for(gates_at_roof, 12, false), 12) << "a run makes two iterations at least: the first is no confirmation";
}

// Exploring beyond the evidence's picks ends after two exploring iterations in a row without a gain; a gain, or an
// iteration inside the evidence, starts the count again; 0 turns the rule off.
TEST(Stopping, ExplorationWithoutGainEnds) {
  StopState s;
  s.max_iterations = 20;
  s.patience = 0;
  ASSERT_EQ(s.explore_patience, 2);
  auto inside = after_iteration(after_iteration(s, false, false, false, false), false, false, false, false);
  EXPECT_EQ(inside.exploring_without_gain, 0);
  EXPECT_EQ(should_stop(inside), StopReason::kNone) << "iterations inside the evidence never count";
  auto one = after_iteration(inside, false, false, false, true);
  EXPECT_EQ(should_stop(one), StopReason::kNone);
  auto gained = after_iteration(one, true, false, false, true);
  EXPECT_EQ(gained.exploring_without_gain, 0);
  EXPECT_EQ(should_stop(after_iteration(gained, false, false, false, true)), StopReason::kNone);
  auto back_inside = after_iteration(one, false, false, false, false);
  EXPECT_EQ(should_stop(after_iteration(back_inside, false, false, false, true)), StopReason::kNone);
  auto two = after_iteration(one, false, false, false, true);
  EXPECT_EQ(should_stop(two), StopReason::kExplorationSpent);
  EXPECT_EQ(stop_name(StopReason::kExplorationSpent), "exploration_spent");
  two.explore_patience = 0;
  EXPECT_EQ(should_stop(two), StopReason::kNone);
}

// Issue 36: the first profile's guess. Memory-bound at 75 % of the floor or more (vector_add 2^24 on the H100: 1.08)
// is expected to bind memory; compute-bound at half its floor or more (sgemm 4096^3's champions) compute and memory;
// a kernel further from its floor (latency likely binds) and a roofline without a workload model make no guess.
TEST(ProfileGuess, MemoryBoundNearTheFloorMemoryComputeBoundPastHalfBoth) {
  EXPECT_EQ(expected_profile_axes({{"bound", "memory"}, {"efficiency", 1.076}}), std::vector<Axis>{Axis::kMemory});
  EXPECT_EQ(expected_profile_axes({{"bound", "memory"}, {"efficiency", 0.75}}), std::vector<Axis>{Axis::kMemory});
  EXPECT_TRUE(expected_profile_axes({{"bound", "memory"}, {"efficiency", 0.74}}).empty());
  const std::vector<Axis> both = {Axis::kCompute, Axis::kMemory};
  EXPECT_EQ(expected_profile_axes({{"bound", "compute"}, {"efficiency", 0.62}}), both);
  EXPECT_EQ(expected_profile_axes({{"bound", "compute"}, {"efficiency", 0.5}}), both);
  EXPECT_TRUE(expected_profile_axes({{"bound", "compute"}, {"efficiency", 0.49}}).empty());
  EXPECT_TRUE(expected_profile_axes({{"bound", nullptr}, {"efficiency", nullptr}}).empty());
  EXPECT_TRUE(expected_profile_axes({{"bound", "memory"}, {"efficiency", nullptr}}).empty());
  EXPECT_TRUE(expected_profile_axes({{"bound", "compute"}}).empty());
  EXPECT_TRUE(expected_profile_axes(util::Json()).empty());
}

}  // namespace kopt::loop
