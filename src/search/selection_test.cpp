#include "search/selection.h"

#include <gtest/gtest.h>

#include "search/testing.h"

#include <algorithm>

#include "util/json_io.h"
#include "testing/test_support.h"

namespace kopt::search {
namespace {

const Registry& reg() { return testing::test_registry(); }

// The profile of a real DRAM-bound kernel: saxpy on an H200 (70.8% of DRAM peak, long-scoreboard stalls,
// a 248-wave grid of one-element threads), captured with Nsight Compute 2025.3.1.
std::map<std::string, double> saxpy_metrics() {
  auto j = util::read_json(testing_support::test_data_dir() + "/search/ncu-2025.3.1/saxpy_h200_metrics.json");
  EXPECT_TRUE(j.ok());
  std::map<std::string, double> m;
  for (auto it = j.value()["metrics"].begin(); it != j.value()["metrics"].end(); ++it) m[it.key()] = it.value().get<double>();
  return m;
}

SelectionInput base_input() {
  SelectionInput in;
  in.registry = &reg();
  in.offered = {"vectorized_access", "shared_memory_tiling", "smem_padding", "tensor_cores_mma_sync",
                "loop_unrolling",    "grid_stride_loop",     "fast_math",    "register_cap"};
  in.plan.slots = {{Axis::kMemory, 2}, {Axis::kCompute, 1}, {Axis::kLatency, 1}};
  in.metrics = saxpy_metrics();
  return in;
}

bool picked(const MethodSelection& s, const std::string& id) {
  return std::any_of(s.picks.begin(), s.picks.end(), [&](const MethodPick& p) { return p.id == id; });
}
std::string skip_reason(const MethodSelection& s, const std::string& id) {
  for (const auto& k : s.skipped)
    if (k.id == id) return k.reason;
  return "";
}

TEST(MethodSelection, DramBoundProfilePicksTheMemoryMethodsTheKernelOffers) {
  auto in = base_input();
  ASSERT_NEAR(in.metrics.at("dram__throughput.avg.pct_of_peak_sustained_elapsed"), 70.81, 1e-9);
  MethodSelection s = select_methods(in);
  // Strongest evidence first: a 248-wave grid of 262144 blocks (both readings far past their thresholds),
  // then tiling (DRAM 71%, L1 hits 33%, L2 80% busy), then vectorized access (DRAM above 50%).
  EXPECT_EQ(s.ids(), (std::vector<std::string>{"grid_stride_loop", "shared_memory_tiling", "vectorized_access"}));
  // Every pick says which readings called for it.
  for (const auto& p : s.picks) EXPECT_FALSE(p.fired.empty()) << p.id;
  EXPECT_NE(s.picks[2].fired[0].find("dram__throughput.avg.pct_of_peak_sustained_elapsed = 70.81 > 50"), std::string::npos)
      << s.picks[2].fired[0];
  EXPECT_EQ(s.picks[0].axis, Axis::kLatency);
  EXPECT_EQ(s.picks[1].axis, Axis::kMemory);
  EXPECT_GT(s.picks[0].score, s.picks[1].score);
  EXPECT_GT(s.picks[1].score, s.picks[2].score);
  // And every other offered method has a reason.
  EXPECT_EQ(skip_reason(s, "smem_padding"), "no evidence for it in the current profile");
  EXPECT_EQ(skip_reason(s, "tensor_cores_mma_sync"), "no evidence for it in the current profile");  // FMA pipe at 5%
  EXPECT_EQ(skip_reason(s, "loop_unrolling"), "no latency slot left in this iteration's budget");
  EXPECT_EQ(skip_reason(s, "fast_math"), "tolerance_changing is not allowed in numerics mode reference");
  EXPECT_EQ(skip_reason(s, "register_cap"), "no evidence for it in the current profile");  // 16 registers, 74% occupancy
  EXPECT_EQ(s.picks.size() + s.skipped.size(), in.offered.size());
}

TEST(MethodSelection, BudgetBoundsEachAxis) {
  auto in = base_input();
  in.plan.slots = {{Axis::kMemory, 1}, {Axis::kLatency, 0}};
  MethodSelection s = select_methods(in);
  EXPECT_EQ(s.ids(), std::vector<std::string>{"shared_memory_tiling"});
  EXPECT_EQ(skip_reason(s, "vectorized_access"), "no memory slot left in this iteration's budget");
  EXPECT_EQ(skip_reason(s, "grid_stride_loop"), "no latency slot left in this iteration's budget");
  in.numerics = NumericsMode::kApproximate;
  EXPECT_EQ(skip_reason(select_methods(in), "fast_math"), "no evidence for it in the current profile");  // XU idle
}

// Issue 39 item 2(c): the strategy memory's bonus reorders methods whose evidence fires, within kMaxMethodBonus; it
// never picks a method without evidence, and never removes one (a negative bonus only ranks it later).
TEST(MethodSelection, TheStrategyMemorysBonusReordersWithinItsBoundAndNeverRemovesAMethod) {
  // Close evidence: DRAM at 66% fires vectorized_access (> 50: score 1.32) and shared_memory_tiling (> 60: 1.10).
  SelectionInput in;
  in.registry = &reg();
  in.offered = {"vectorized_access", "shared_memory_tiling"};
  in.plan.slots = {{Axis::kMemory, 1}};
  in.metrics = {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 66.0}};
  EXPECT_EQ(select_methods(in).ids(), std::vector<std::string>{"vectorized_access"});
  // A record of shared_memory_tiling paying off at this position (and of vectorized_access not) gives it the slot.
  in.bonus = {{"shared_memory_tiling", kMaxMethodBonus}, {"vectorized_access", -kMaxMethodBonus}};
  auto s = select_methods(in);
  EXPECT_EQ(s.ids(), std::vector<std::string>{"shared_memory_tiling"});
  EXPECT_NE(s.picks[0].fired.back().find("strategy memory: +0.50"), std::string::npos) << s.picks[0].fired.back();
  EXPECT_NEAR(s.picks[0].score, 1.1 + kMaxMethodBonus, 1e-9);
  EXPECT_EQ(skip_reason(s, "vectorized_access"), "no memory slot left in this iteration's budget") << "ranked later, kept";
  // Clamped: a bonus of 100 is worth kMaxMethodBonus.
  in.bonus = {{"shared_memory_tiling", 100.0}};
  EXPECT_NEAR(select_methods(in).picks[0].score, 1.1 + kMaxMethodBonus, 1e-9);
  // Bounded: on the saxpy profile tiling's evidence leads vectorized_access's by 2.4, more than the bonus can move.
  auto sax = base_input();
  sax.plan.slots = {{Axis::kMemory, 1}, {Axis::kLatency, 1}};
  sax.bonus = {{"vectorized_access", 100.0}, {"shared_memory_tiling", -100.0}};
  EXPECT_EQ(select_methods(sax).ids(), (std::vector<std::string>{"grid_stride_loop", "shared_memory_tiling"}));
  // Never a method without evidence (smem_padding), however large its bonus; never a removal: with slots for all,
  // every method whose evidence fires is picked whatever its (negative) bonus.
  in = base_input();
  in.plan.slots = {{Axis::kMemory, 2}, {Axis::kLatency, 1}, {Axis::kCompute, 1}};
  const auto plain = select_methods(in).ids();
  in.bonus = {{"smem_padding", 100.0}, {"grid_stride_loop", -100.0}, {"shared_memory_tiling", -100.0},
              {"vectorized_access", -100.0}};
  auto penalised = select_methods(in);
  EXPECT_FALSE(picked(penalised, "smem_padding"));
  EXPECT_EQ(skip_reason(penalised, "smem_padding"), "no evidence for it in the current profile");
  auto sorted = [](std::vector<std::string> v) { std::sort(v.begin(), v.end()); return v; };
  EXPECT_EQ(sorted(penalised.ids()), sorted(plain));
}

TEST(MethodSelection, IneffectiveMethodsAreNotRepickedUnlessTheEvidenceChanged) {
  auto in = base_input();
  in.verdicts = {{"shared_memory_tiling", Verdict::kIneffective, 2, false, in.metrics}};
  MethodSelection s = select_methods(in);
  EXPECT_FALSE(picked(s, "shared_memory_tiling"));
  EXPECT_EQ(skip_reason(s, "shared_memory_tiling"), "ineffective in iteration 2 and the evidence has not changed since");
  EXPECT_TRUE(picked(s, "vectorized_access"));

  // Judged when DRAM was only 40% busy: the DRAM evidence fires now and did not then, so it is offered again.
  auto then = in.metrics;
  then["dram__throughput.avg.pct_of_peak_sustained_elapsed"] = 40;
  in.verdicts = {{"shared_memory_tiling", Verdict::kImplementationFailed, 2, false, then}};
  EXPECT_TRUE(picked(select_methods(in), "shared_memory_tiling"));

  // A later verdict wins; an effective or unverified one does not block.
  in.verdicts = {{"vectorized_access", Verdict::kIneffective, 1, false, in.metrics},
                 {"vectorized_access", Verdict::kUnverified, 3, false, in.metrics}};
  EXPECT_TRUE(picked(select_methods(in), "vectorized_access"));
  // Without a recorded profile the evidence counts as unchanged.
  in.verdicts = {{"vectorized_access", Verdict::kImplementationFailed, 1, false, {}}};
  EXPECT_FALSE(picked(select_methods(in), "vectorized_access"));
}

TEST(MethodSelection, ChampionMethodsAreNotPickedAgainAndBlockConflictsAndSubsumed) {
  auto in = base_input();
  in.active = {"shared_memory_tiling"};
  MethodSelection s = select_methods(in);
  EXPECT_EQ(skip_reason(s, "shared_memory_tiling"), "already on in the champion");

  in = base_input();
  in.offered = {"smem_padding", "smem_swizzle", "cp_async_pipeline", "double_buffering"};
  in.plan.slots = {{Axis::kMemory, 2}, {Axis::kLatency, 2}};
  in.metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] = 5e6;
  in.metrics["smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"] = 3;
  s = select_methods(in);
  // Both fix bank conflicts, on equal evidence here (a tie goes to the first id); they conflict, so one only.
  ASSERT_EQ(s.picks.size(), 2u);
  EXPECT_TRUE(picked(s, "smem_padding"));
  EXPECT_EQ(skip_reason(s, "smem_swizzle"), "conflicts with 'smem_padding', picked with stronger evidence");
  // cp.async pipelining subsumes double buffering.
  EXPECT_TRUE(picked(s, "cp_async_pipeline"));
  EXPECT_NE(skip_reason(s, "double_buffering").find("subsumed by 'cp_async_pipeline'"), std::string::npos);

  in.active = {"smem_swizzle"};
  s = select_methods(in);
  EXPECT_EQ(skip_reason(s, "smem_padding"), "conflicts with 'smem_swizzle', on in the champion");
}

TEST(MethodSelection, RequirementsArePickedWithTheirDependentsOrBlockThem) {
  SelectionInput in;
  in.registry = &reg();
  in.offered = {"setmaxnreg", "warp_specialization"};  // sm90a_target is not offered: assumed structural
  in.metrics = {{"launch__registers_per_thread", 200}};
  in.plan.slots = {{Axis::kLatency, 2}};
  in.arch = 90;
  MethodSelection s = select_methods(in);
  ASSERT_EQ(s.ids(), (std::vector<std::string>{"setmaxnreg", "warp_specialization"}));
  EXPECT_EQ(s.picks[1].required_by, "setmaxnreg");
  EXPECT_TRUE(s.skipped.empty());

  in.plan.slots = {{Axis::kLatency, 1}};
  s = select_methods(in);
  EXPECT_TRUE(s.picks.empty());
  EXPECT_EQ(skip_reason(s, "setmaxnreg"), "it and its requirements need 2 latency slot(s), 1 left");

  in.plan.slots = {{Axis::kLatency, 2}};
  in.arch = 80;
  s = select_methods(in);
  EXPECT_EQ(skip_reason(s, "setmaxnreg"), "needs sm_90, the device is sm_80");

  in.arch = 90;
  in.backend = Backend::kTriton;
  EXPECT_EQ(skip_reason(select_methods(in), "setmaxnreg"), "does not apply to triton kernels");
}

TEST(MethodSelection, EvidenceScoringAndMissingMetrics) {
  const Method* m = reg().find("vectorized_access");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(fired_evidence(*m, {}).empty());  // absent metrics never fire
  auto hits = fired_evidence(*m, {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 100.0}});
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_DOUBLE_EQ(hits[0].margin, 1.0);  // (100 - 50) / 50
  EXPECT_DOUBLE_EQ(evidence_score(hits), 2.0);
  auto weaker = fired_evidence(*m, {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 55.0}});
  EXPECT_LT(evidence_score(weaker), evidence_score(hits));
  EXPECT_TRUE(fired_evidence(*m, {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 50.0}}).empty());  // strict >
}

}  // namespace
}  // namespace kopt::search
