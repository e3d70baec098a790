#include "loop/strategy_memory.h"

#include <gtest/gtest.h>

#include "search/selection.h"

namespace kopt::loop {
namespace {

db::MethodOutcome outcome(const std::string& method, const std::string& position, const std::string& kind,
                          const std::string& run_dir = "kopt_runs/run_a") {
  db::MethodOutcome o;
  o.gpu_model = "NVIDIA H200";
  o.method = method;
  o.position = position;
  o.outcome = kind;
  o.run_dir = run_dir;
  return o;
}

TEST(StrategyMemory, ThePositionIsTheRooflinesBoundAxis) {
  EXPECT_EQ(roofline_position({{"bound", "memory"}}), "memory");
  EXPECT_EQ(roofline_position({{"bound", "compute"}}), "compute");
  EXPECT_EQ(roofline_position({{"bound", "latency"}}), "latency");
  EXPECT_EQ(roofline_position({{"bound", nullptr}}), "unknown");
  EXPECT_EQ(roofline_position(nullptr), "unknown");
  EXPECT_EQ(roofline_position({{"bound", "sideways"}}), "unknown");
}

TEST(StrategyMemory, AVerdictsOutcome) {
  struct Row {
    const char* verdict;
    bool gain;
    const char* outcome;
  };
  for (const Row& r : std::vector<Row>{{"effective", false, "paid"},
                                       {"effective_measured", true, "paid"},
                                       {"unverified", true, "paid"},
                                       {"unverified", false, "adopted"},
                                       {"not_ablatable", false, "adopted"},
                                       {"ineffective", false, "no_gain"},
                                       {"implementation_failed", false, "no_gain"}})
    EXPECT_EQ(outcome_of(r.verdict, r.gain), r.outcome) << r.verdict << " " << r.gain;
}

// The table: outcomes at a position -> the bonus per method.
TEST(StrategyMemory, TheBonusFollowsThePayOffRateAndIsBounded) {
  const double kMax = search::kMaxMethodBonus;
  struct Row {
    int paid, adopted, no_gain;
    double bonus;
  };
  for (const Row& r : std::vector<Row>{
           {1, 0, 0, kMax * (2 * 2.0 / 3 - 1)},      // +0.167: one success moves it a little
           {3, 0, 0, kMax * (2 * 4.0 / 5 - 1)},      // +0.30
           {0, 0, 1, kMax * (2 * 1.0 / 3 - 1)},      // -0.167
           {2, 0, 2, 0.0},                           // even: nothing
           {0, 2, 0, 0.0},                           // adopted only: half a success each, the prior's own rate
           {1, 2, 0, kMax * (2 * 3.0 / 5 - 1)},      // +0.10
           {1000, 0, 0, kMax * (2 * 1001.0 / 1002 - 1)},  // near, never past, the bound
           {0, 0, 1000, kMax * (2 * 1.0 / 1002 - 1)},
       }) {
    std::map<std::string, MethodTally> t = {{"m", {r.paid, r.adopted, r.no_gain}}};
    auto b = method_bonus(t);
    ASSERT_EQ(b.count("m"), 1u);
    EXPECT_NEAR(b["m"], r.bonus, 1e-12) << r.paid << "/" << r.adopted << "/" << r.no_gain;
    EXPECT_LT(std::abs(b["m"]), kMax);
  }
  EXPECT_TRUE(method_bonus({{"m", {0, 0, 0}}}).empty()) << "no outcome, no bonus";
}

TEST(StrategyMemory, OnlyThisPositionsOutcomesOfOtherRunsCount) {
  const std::vector<db::MethodOutcome> outcomes = {
      outcome("vectorized_access", "memory", "paid"),
      outcome("vectorized_access", "memory", "paid", "kopt_runs/run_b"),
      outcome("vectorized_access", "compute", "no_gain"),           // another position
      outcome("smem_padding", "memory", "no_gain"),
      outcome("smem_padding", "memory", "paid", "kopt_runs/this"),  // this run's own
      outcome("register_cap", "memory", "adopted"),
      outcome("loop_unrolling", "memory", "something else"),        // unknown kind: ignored
  };
  auto t = tally_outcomes(outcomes, "memory", "kopt_runs/this");
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t["vectorized_access"].paid, 2);
  EXPECT_EQ(t["vectorized_access"].no_gain, 0);
  EXPECT_EQ(t["smem_padding"].paid, 0);
  EXPECT_EQ(t["smem_padding"].no_gain, 1);
  EXPECT_EQ(t["register_cap"].adopted, 1);
  auto b = method_bonus(t);
  EXPECT_GT(b["vectorized_access"], 0);
  EXPECT_LT(b["smem_padding"], 0);
  EXPECT_DOUBLE_EQ(b["register_cap"], 0);
  auto j = strategy_memory_json("memory", t, b);
  EXPECT_EQ(j["position"], "memory");
  EXPECT_EQ(j["evidence"]["vectorized_access"]["paid"], 2);
  EXPECT_DOUBLE_EQ(j["bonus"]["smem_padding"].get<double>(), b["smem_padding"]);
  EXPECT_TRUE(tally_outcomes(outcomes, "latency").empty());
}

}  // namespace
}  // namespace kopt::loop
