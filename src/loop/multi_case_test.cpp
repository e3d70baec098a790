#include "loop/multi_case.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kopt::loop {

namespace {

// Interleaved rounds of an incumbent at `inc_ms` and a candidate at inc_ms x ratio, with a deterministic
// spread of +-2% per round (a plain pattern, never zeros), compared by the runner's own statistics.
runner::PairedComparison paired_at(double ratio, int rounds = 40, double inc_ms = 1.0) {
  std::vector<double> inc, cand;
  for (int i = 0; i < rounds; ++i) {
    double wobble = 0.02 * std::sin(1.7 * i + 0.3);
    double wobble2 = 0.02 * std::cos(2.3 * i + 1.1);
    inc.push_back(inc_ms * (1 + wobble));
    cand.push_back(inc_ms * ratio * (1 + wobble2));
  }
  return runner::compare_paired(inc, cand);
}

runner::PairedComparison fixed(double ratio, double lo, double hi, runner::Verdict v, int rounds = 40) {
  runner::PairedComparison p;
  p.rounds = rounds;
  p.median_ratio = ratio;
  p.ci95_low = lo;
  p.ci95_high = hi;
  p.verdict = v;
  return p;
}

}  // namespace

TEST(MultiCase, OneCaseKeepsItsRatioAndLogHalfWidth) {
  auto p = fixed(0.9, 0.85, 0.95, runner::Verdict::kFaster);
  auto m = combine_cases({{"full", 1.0, p}});
  ASSERT_TRUE(m.valid);
  EXPECT_NEAR(m.geomean_ratio, 0.9, 1e-12);
  // The delta method's CI has the case's half-width on the log scale, centred on the median.
  double half = (std::log(0.95) - std::log(0.85)) / 2;
  EXPECT_NEAR(std::log(m.ci95_high) - std::log(0.9), half, 1e-9);
  EXPECT_NEAR(std::log(0.9) - std::log(m.ci95_low), half, 1e-9);
  EXPECT_EQ(m.verdict, runner::Verdict::kFaster);
  EXPECT_TRUE(m.regressions.empty());
}

TEST(MultiCase, WeightedGeometricMeanOfMedianRatios) {
  auto m = combine_cases({{"full", 0.5, paired_at(0.8)}, {"scale_0.75", 0.3, paired_at(0.9)}, {"scale_0.5", 0.2, paired_at(1.0)}});
  ASSERT_TRUE(m.valid);
  double expect = std::exp(0.5 * std::log(m.cases[0].cmp.median_ratio) + 0.3 * std::log(m.cases[1].cmp.median_ratio) +
                           0.2 * std::log(m.cases[2].cmp.median_ratio));
  EXPECT_NEAR(m.geomean_ratio, expect, 1e-12);
  EXPECT_NEAR(m.geomean_ratio, std::pow(0.8, 0.5) * std::pow(0.9, 0.3), 0.02);
  EXPECT_LT(m.ci95_low, m.geomean_ratio);
  EXPECT_GT(m.ci95_high, m.geomean_ratio);
  EXPECT_EQ(m.verdict, runner::Verdict::kFaster);
  EXPECT_EQ(m.rounds, 120);
  // Weights need not sum to 1: they are normalised.
  auto scaled = combine_cases({{"a", 5, m.cases[0].cmp}, {"b", 3, m.cases[1].cmp}, {"c", 2, m.cases[2].cmp}});
  EXPECT_NEAR(scaled.geomean_ratio, m.geomean_ratio, 1e-12);
  EXPECT_NEAR(scaled.ci95_high, m.ci95_high, 1e-12);
}

TEST(MultiCase, IndependentCasesNarrowTheIntervalBySqrtTwo) {
  auto p = fixed(1.0, 0.96, 1.04, runner::Verdict::kAmbiguous);
  auto one = combine_cases({{"a", 1, p}});
  auto two = combine_cases({{"a", 0.5, p}, {"b", 0.5, p}});
  EXPECT_NEAR(two.log_se, one.log_se / std::sqrt(2.0), 1e-12);
  EXPECT_LT(two.ci95_high, one.ci95_high);
}

TEST(MultiCase, ASlowerCaseIsARegressionFlaggedOrRejected) {
  // Faster overall (0.7 and 0.75 at the larger cases) but 10% slower at the small one.
  std::vector<CaseComparison> cs = {{"full", 0.5, paired_at(0.7)}, {"scale_0.75", 0.3, paired_at(0.75)}, {"scale_0.5", 0.2, paired_at(1.1)}};
  auto m = combine_cases(cs);
  ASSERT_TRUE(m.valid);
  EXPECT_EQ(m.verdict, runner::Verdict::kFaster);
  ASSERT_EQ(m.regressions.size(), 1u);
  EXPECT_EQ(m.regressions[0].rfind("scale_0.5: ", 0), 0u) << m.regressions[0];
  Contender inc{"base", true, 1.0, 0}, fin{"cand", true, 0.8, 1};
  auto flagged = decide_over_cases(inc, fin, m, false);
  EXPECT_EQ(flagged.decision, ChampionDecision::kNewChampion);
  EXPECT_NE(flagged.reason.find("flagged: slower at scale_0.5"), std::string::npos) << flagged.reason;
  auto rejected = decide_over_cases(inc, fin, m, true);
  EXPECT_EQ(rejected.decision, ChampionDecision::kKeepIncumbent);
  EXPECT_EQ(rejected.champion_id, "base");
  EXPECT_NE(rejected.reason.find("rejected under --no-regressions"), std::string::npos);
  // An ambiguous case (within the noise) is no regression.
  auto noisy = combine_cases({{"full", 0.5, paired_at(0.7)}, {"small", 0.5, fixed(1.01, 0.97, 1.05, runner::Verdict::kAmbiguous)}});
  EXPECT_TRUE(noisy.regressions.empty());
}

TEST(MultiCase, ACaseWithoutEvidenceMakesTheComparisonInvalid) {
  auto m = combine_cases({{"full", 0.5, paired_at(0.7)}, {"scale_0.5", 0.5, fixed(1, 0, 0, runner::Verdict::kAmbiguous, 3)}});
  EXPECT_FALSE(m.valid);
  EXPECT_EQ(m.verdict, runner::Verdict::kAmbiguous);
  ASSERT_EQ(m.invalid.size(), 1u);
  EXPECT_EQ(m.invalid[0], "scale_0.5");
  auto d = decide_over_cases({"base", true, 1, 0}, {"cand", true, 0.7, 1}, m, false);
  EXPECT_EQ(d.champion_id, "base");
  EXPECT_FALSE(combine_cases({}).valid);
  auto j = to_json(m);
  EXPECT_EQ(j["valid"], false);
  EXPECT_EQ(j["invalid_cases"][0], "scale_0.5");
}

TEST(MultiCase, SameSpeedEverywhereLetsFewerMethodsWin) {
  auto m = combine_cases({{"full", 0.5, fixed(1.0, 0.995, 1.005, runner::Verdict::kSame)},
                          {"small", 0.5, fixed(1.0, 0.995, 1.005, runner::Verdict::kSame)}});
  EXPECT_EQ(m.verdict, runner::Verdict::kSame);
  auto d = decide_over_cases({"heavy", true, 1, 3}, {"light", true, 1, 1}, m, true);
  EXPECT_EQ(d.champion_id, "light");
}

TEST(MultiCase, FinalistKeyIsTheWeightedGeomeanOfUnpairedRatios) {
  auto r = weighted_geomean_ratio({{"full", 0.5, 2.0, 1.0}, {"scale_0.75", 0.3, 1.0, 0.8}, {"scale_0.5", 0.2, 0.5, 0.5}});
  ASSERT_TRUE(r);
  EXPECT_NEAR(*r, std::exp(0.5 * std::log(0.5) + 0.3 * std::log(0.8)), 1e-12);
  EXPECT_FALSE(weighted_geomean_ratio({{"full", 0.5, 2.0, 0.0}}));  // a missing time
  EXPECT_FALSE(weighted_geomean_ratio({}));
}

TEST(MultiCase, CorrectAtEveryCaseNamesTheFirstFailure) {
  auto ok = correct_at_every_case({{"full", runner::RunStatus::kOk, ""}, {"scale_0.5", runner::RunStatus::kOk, ""}});
  EXPECT_TRUE(ok.correct);
  auto bad = correct_at_every_case({{"full", runner::RunStatus::kOk, ""},
                                    {"scale_0.75", runner::RunStatus::kWrongResult, "output c: MISMATCH 3/100 elements"},
                                    {"scale_0.5", runner::RunStatus::kCudaError, "illegal address"}});
  EXPECT_FALSE(bad.correct);
  EXPECT_EQ(bad.first_failing_case, "scale_0.75");
  EXPECT_NE(bad.reason.find("at case scale_0.75: output c: MISMATCH"), std::string::npos) << bad.reason;
  EXPECT_FALSE(correct_at_every_case({}).correct);
}

TEST(MultiCase, PerCaseTableHasTimesRatiosEfficiencyAndGeomean) {
  std::vector<CaseRow> rows(3);
  rows[0] = {"full", {{"n", 4096}}, {{"n", 4096}}, 0.5, 2.0, 1.0, std::nullopt, 0.8, "the dims given"};
  rows[1] = {"scale_0.5", {{"n", 2048}}, {{"n", 1024}}, 0.5, 1.0, 0.8, fixed(0.78, 0.75, 0.81, runner::Verdict::kFaster), std::nullopt, ""};
  rows[2] = {"broken", {{"n", 8}}, {{"n", 8}}, 0.0, std::nullopt, 0.1, std::nullopt, std::nullopt, ""};
  auto j = case_table_json(rows);
  ASSERT_EQ(j["cases"].size(), 3u);
  const auto& a = j["cases"][0];
  EXPECT_DOUBLE_EQ(a["ratio"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(a["speedup"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(a["efficiency"].get<double>(), 0.8);
  EXPECT_EQ(a["fitted"], false);
  const auto& b = j["cases"][1];
  EXPECT_DOUBLE_EQ(b["ratio"].get<double>(), 0.78);  // the paired median, not 0.8/1.0
  EXPECT_EQ(b["fitted"], true);
  EXPECT_DOUBLE_EQ(b["ratio_ci95"][1].get<double>(), 0.81);
  EXPECT_TRUE(b["efficiency"].is_null());
  EXPECT_TRUE(j["cases"][2]["ratio"].is_null());
  EXPECT_EQ(j["geomean"]["cases"], 2);
  EXPECT_NEAR(j["geomean"]["ratio"].get<double>(), std::sqrt(0.5 * 0.78), 1e-12);
}

}  // namespace kopt::loop
