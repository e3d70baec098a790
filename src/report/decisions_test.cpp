#include "report/decisions.h"

#include <gtest/gtest.h>

#include "report/compare.h"

namespace kopt::report {
namespace {

using util::Json;

// A load_run document's candidate row: its id, iteration, parameters and methods; times do not matter here.
Json cand(const std::string& id, int iteration, Json params, std::vector<std::string> methods = {},
          const std::string& role = "candidate") {
  return {{"id", id},         {"role", role},     {"iteration", iteration}, {"status", "ok"},
          {"median_ms", 1.0}, {"params", params}, {"methods", methods},     {"content_hash", id}};
}

// Two iterations over BLOCK x ITEMS: i1c1 crowned in iteration 1 and kept, an ablation of ITEMS, stopped near peak.
Json run(const std::string& dir, int second_items = 4) {
  return {{"run", {{"dir", dir}, {"kernel", "k.cu"}, {"dims_text", "n=1"}, {"stop_reason", "near_peak"}, {"iterations_done", 2}}},
          {"candidates",
           {cand("baseline", 0, {{"BLOCK", 256}, {"ITEMS", 1}}, {}, "baseline"), cand("i1c1", 1, {{"BLOCK", 128}, {"ITEMS", 8}}),
            cand("i1c2", 1, {{"BLOCK", 512}, {"ITEMS", 2}}, {"vectorized_access"}),
            cand("i2c1", 2, {{"BLOCK", 64}, {"ITEMS", second_items}}),
            cand("i1c1_base_ITEMS", 1, {{"BLOCK", 128}, {"ITEMS", 1}}, {}, "ablation")}},
          {"timeline",
           {{{"iteration", 0}, {"champion_id", "baseline"}},
            {{"iteration", 1}, {"champion_id", "i1c1"}},
            {{"iteration", 2}, {"champion_id", "i1c1"}}}},
          {"ablation", Json::array()},
          {"param_ablation", {{{"iteration", 1}, {"param", "ITEMS"}, {"effect", "helps"}}}}};
}

TEST(Decisions, AreNamedByConfigurationPerIteration) {
  RunDecisions d = run_decisions(run("A"));
  ASSERT_EQ(d.proposed.size(), 2u);
  EXPECT_EQ(d.proposed[1], (std::set<std::string>{"BLOCK=128 ITEMS=8", "BLOCK=512 ITEMS=2 +vectorized_access"}))
      << "the ablation build is not a proposal";
  EXPECT_EQ(d.proposed[2], (std::set<std::string>{"BLOCK=64 ITEMS=4"}));
  EXPECT_EQ(d.champion[1], "BLOCK=128 ITEMS=8");
  EXPECT_EQ(d.champion[2], "BLOCK=128 ITEMS=8");
  EXPECT_FALSE(d.champion.count(0)) << "the gates' baseline is not an iteration's decision";
  EXPECT_EQ(d.verdicts[1], (std::set<std::string>{"param ITEMS: helps"}));
  EXPECT_EQ(d.stop_reason, "near_peak");
  EXPECT_EQ(d.iterations, 2);
}

TEST(Decisions, TheSameChoicesUnderOtherIdsAreTheSame) {
  Json b = run("B");
  // B numbered its batch the other way round and measured other times: the same decisions.
  b["candidates"][1]["id"] = "i1c2";
  b["candidates"][2]["id"] = "i1c1";
  b["timeline"][1]["champion_id"] = "i1c2";
  b["timeline"][2]["champion_id"] = "i1c2";
  for (auto& c : b["candidates"]) c["median_ms"] = 2.0;
  DecisionsDiff same = compare_decisions(run_decisions(run("A")), run_decisions(b));
  EXPECT_TRUE(same.same);
  EXPECT_TRUE(same.differences.empty());
  EXPECT_FALSE(same.first_difference.has_value());
}

TEST(Decisions, EachDifferenceIsNamedWithTheFirstIteration) {
  Json b = run("B", 16);
  b["run"]["stop_reason"] = "max_iterations";
  b["param_ablation"][0]["effect"] = "no_effect";
  DecisionsDiff d = compare_decisions(run_decisions(run("A")), run_decisions(b));
  EXPECT_FALSE(d.same);
  ASSERT_TRUE(d.first_difference.has_value());
  EXPECT_EQ(*d.first_difference, 1) << "the ablation verdict of iteration 1 differs first";
  ASSERT_EQ(d.differences.size(), 3u) << ::testing::PrintToString(d.differences);
  EXPECT_EQ(d.differences[0], "iteration 1: ablation verdicts: A {param ITEMS: helps}, B {param ITEMS: no_effect}");
  EXPECT_EQ(d.differences[1], "iteration 2: proposals: 1 in A, 1 in B; A only {BLOCK=64 ITEMS=4}, B only {BLOCK=64 ITEMS=16}");
  EXPECT_EQ(d.differences[2], "stop: A near_peak, B max_iterations");
}

TEST(Decisions, KoptCompareSaysWhetherTheRunsDecidedAlike) {
  Json a = run("A"), b = run("B");
  Json cmp = compare_runs(a, b);
  EXPECT_EQ(cmp["decisions"]["same"], true) << cmp["decisions"].dump();
  EXPECT_TRUE(cmp["decisions"]["first_difference"].is_null());
  EXPECT_NE(format_compare(cmp).find("decisions: the same (by configuration) in each of the 2 iteration(s)"), std::string::npos)
      << format_compare(cmp);
  b["timeline"][2]["champion_id"] = "i2c1";
  cmp = compare_runs(a, b);
  EXPECT_EQ(cmp["decisions"]["first_difference"], 2);
  EXPECT_NE(
      format_compare(cmp).find("  iteration 2: champion: A BLOCK=128 ITEMS=8, B BLOCK=64 ITEMS=4; in B, A's champion: not raced "
                               "there; in A, B's champion: not raced there\n"),
      std::string::npos)
      << format_compare(cmp);
}

// Two runs that part at a race within the noise: each raced the other's champion and kept its own.
TEST(Decisions, ChampionsThatDifferSayHowEachRunRacedTheOthers) {
  Json a = run("A"), b = run("B");
  // A crowned i1c1 and kept it against i1c2; B crowned i1c2 and kept it against i1c1.
  a["candidates"][2]["selection"] = {{"decision", "keep"},
                                     {"incumbent", "i1c1"},
                                     {"reason",
                                      "i1c2: difference not larger than the noise (ambiguous); the incumbent keeps its "
                                      "place [weighted geometric mean over 3 case(s): 0.98]"}};
  b["timeline"][1]["champion_id"] = "i1c2";
  b["timeline"][2]["champion_id"] = "i1c2";
  b["candidates"][1]["selection"] = {
      {"decision", "keep"},
      {"incumbent", "i1c2"},
      {"reason", "i1c1: difference not larger than the noise (ambiguous); the incumbent keeps its place"}};
  b["candidates"][2]["selection"] = {
      {"decision", "new_champion"}, {"incumbent", "baseline"}, {"reason", "i1c2 is significantly faster"}};
  DecisionsDiff d = compare_decisions(run_decisions(a), run_decisions(b));
  ASSERT_FALSE(d.same);
  EXPECT_EQ(d.differences[0],
            "iteration 1: champion: A BLOCK=128 ITEMS=8, B BLOCK=512 ITEMS=2 +vectorized_access; in B, A's champion: kept the "
            "incumbent against BLOCK=512 ITEMS=2 +vectorized_access: i1c1: difference not larger than the noise (ambiguous); the "
            "incumbent keeps its place; in A, B's champion: kept the incumbent against BLOCK=128 ITEMS=8: i1c2: difference not "
            "larger than the noise (ambiguous); the incumbent keeps its place")
      << "the reason up to its per-case detail";
}

TEST(Decisions, TheBaselineAndAnEmptyConfiguration) {
  EXPECT_EQ(configuration_text(cand("baseline", 0, {{"BLOCK", 1}}, {}, "baseline")), "baseline");
  EXPECT_EQ(configuration_text(cand("i1c1", 1, Json::object(), {"b", "a"})), "+a +b");
  EXPECT_EQ(configuration_text(cand("i1c1", 1, Json::object())), "(no parameters)");
}

}  // namespace
}  // namespace kopt::report
