#include "runner/race.h"

#include <gtest/gtest.h>

#include <random>

namespace kopt::runner {
namespace {

// Samples around `ms` with a relative spread, from a fixed seed.
std::vector<double> noisy(double ms, double spread, int n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(-spread, spread);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(ms * (1 + u(g)));
  return v;
}

// Rounds until the rule stops, as the worker would run it.
int rounds_to_stop(double champ_ms, double cand_ms, double spread, const RaceRule& rule, RaceState* how) {
  std::vector<double> a, b;
  auto all_a = noisy(champ_ms, spread, rule.max_rounds, 1), all_b = noisy(cand_ms, spread, rule.max_rounds, 2);
  for (int i = 0; i < rule.max_rounds; ++i) {
    a.push_back(all_a[i]);
    b.push_back(all_b[i]);
    auto s = race_state(a, b, rule, 0.0);
    if (s != RaceState::kContinue) {
      *how = s;
      return i + 1;
    }
  }
  *how = RaceState::kCapped;
  return rule.max_rounds;
}

TEST(Race, AClearlySlowerCandidateIsRankedAtTheFirstDecisionPoint) {
  RaceRule rule;
  RaceState how;
  EXPECT_EQ(rounds_to_stop(1.0, 1.5, 0.01, rule, &how), rule.min_rounds);
  EXPECT_EQ(how, RaceState::kDecided);
  auto cmp = compare_paired(noisy(1.0, 0.01, 6, 1), noisy(1.5, 0.01, 6, 2));
  EXPECT_EQ(cmp.verdict, Verdict::kSlower);
}

TEST(Race, AClearlyFasterCandidateIsDecidedQuicklyToo) {
  RaceRule rule;
  RaceState how;
  EXPECT_EQ(rounds_to_stop(1.0, 0.7, 0.01, rule, &how), rule.min_rounds);
  EXPECT_EQ(how, RaceState::kDecided);
}

TEST(Race, ACloseCandidateGetsMoreRoundsThanAFarOneAndStopsAtTheCap) {
  RaceRule rule;
  RaceState how_close, how_far;
  int close = rounds_to_stop(1.0, 1.012, 0.02, rule, &how_close);
  int far = rounds_to_stop(1.0, 1.3, 0.02, rule, &how_far);
  EXPECT_GT(close, far);
  EXPECT_LE(close, rule.max_rounds);
}

TEST(Race, TheTimeBudgetCapsARaceOnlyAfterTheMinimumRounds) {
  RaceRule rule;
  std::vector<double> a(3, 1.0), b(3, 1.0);
  EXPECT_EQ(race_state(a, b, rule, 100.0), RaceState::kContinue) << "fewer than min_rounds: no CI yet";
  std::vector<double> c = noisy(1.0, 0.05, 6, 3), d = noisy(1.005, 0.05, 6, 4);
  EXPECT_EQ(race_state(c, d, rule, 100.0), RaceState::kCapped);
}

TEST(Race, DecisionsAreTakenEveryFewRoundsNotEveryRound) {
  RaceRule rule;
  rule.check_every = 4;
  auto a = noisy(1.0, 0.001, 7, 1), b = noisy(2.0, 0.001, 7, 2);
  EXPECT_EQ(race_state(a, b, rule, 0.0), RaceState::kContinue) << "7 rounds: between decision points";
  a.push_back(1.0);
  a.push_back(1.0);
  a.push_back(1.0);
  b.push_back(2.0);
  b.push_back(2.0);
  b.push_back(2.0);
  EXPECT_EQ(race_state(a, b, rule, 0.0), RaceState::kDecided);
}

}  // namespace
}  // namespace kopt::runner
