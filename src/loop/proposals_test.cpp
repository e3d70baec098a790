#include "loop/proposals.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace kopt::loop {
namespace {

search::Candidate candidate(const std::string& id, int64_t tile, bool vec, const std::string& source = "kernels/k.cu") {
  search::Candidate c;
  c.id = id;
  c.source = source;
  c.params = {{"TILE", tile}, {"UNROLL", 2}};
  c.defines = {{"TILE", std::to_string(tile)}, {"UNROLL", "2"}};
  c.guards = {{"vectorized_access", vec}};
  if (vec) c.methods = {"vectorized_access"};
  c.config = search::Config{static_cast<int>(tile / 32), vec ? 1 : 0};
  return c;
}

search::Measurement measured(const search::Candidate& c, double ms, search::CandidateStatus s = search::CandidateStatus::kOk) {
  search::Measurement m;
  m.candidate = c;
  m.status = s;
  if (s == search::CandidateStatus::kOk) m.median_ms = ms, m.objective_ms = ms * 1.01;
  return m;
}

search::GeneratorInput state() {
  search::GeneratorInput in;
  in.iteration = 3;
  in.k = 12;
  in.seed = 45;
  in.champion = measured(candidate("i1c2", 64, true), 0.9);
  in.history = {measured(candidate("baseline", 32, false), 1.6), measured(candidate("i1c1", 128, false), 1.1),
                measured(candidate("i1c2", 64, true), 0.9), measured(candidate("i2c1", 96, false), 0, search::CandidateStatus::kIncorrect)};
  in.ablations = {measured(candidate("i1c2_no_vectorized_access", 64, false), 1.0)};
  search::MethodVerdict v;
  v.method = "vectorized_access";
  v.verdict = search::Verdict::kEffective;
  in.verdicts = {v};
  return in;
}

TEST(Proposals, TheStateLeavesTheFiguresAndTheOrderOut) {
  const std::string h = proposal_state_hash("kernel", "builtin", state());
  EXPECT_EQ(proposal_state_hash("kernel", "builtin", state()), h);
  auto luck = state();  // every figure a little off, as in another process
  for (auto* list : {&luck.history, &luck.ablations})
    for (auto& m : *list)
      if (m.median_ms) *m.median_ms *= 1.02, *m.objective_ms *= 0.97;
  luck.champion->median_ms = 0.91;
  luck.metrics = {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 81}};
  luck.method_bonus = {{"vectorized_access", 0.2}};  // the strategy memory an identical earlier run left
  std::reverse(luck.history.begin(), luck.history.end());
  luck.history.push_back(luck.history.front());  // measured twice (a reused finalist raced again)
  EXPECT_EQ(proposal_state_hash("kernel", "builtin", luck), h);
}

TEST(Proposals, TheStateChangesWithWhatTheGeneratorProposesFrom) {
  const std::string h = proposal_state_hash("kernel", "builtin", state());
  EXPECT_NE(proposal_state_hash("another kernel key", "builtin", state()), h);
  EXPECT_NE(proposal_state_hash("kernel", "llm", state()), h);
  std::vector<std::function<void(search::GeneratorInput&)>> changes = {
      [](auto& in) { in.iteration = 4; },
      [](auto& in) { in.k = 8; },
      [](auto& in) { in.seed = 46; },
      [](auto& in) { in.champion = measured(candidate("i1c1", 128, false), 1.1); },
      [](auto& in) { in.champion->candidate.flags = {"-lineinfo"}; },
      [](auto& in) { in.history.push_back(measured(candidate("i3c1", 256, true), 1.3)); },
      [](auto& in) { in.history[3].status = search::CandidateStatus::kCrashed; },
      [](auto& in) { in.ablations.clear(); },
      [](auto& in) { in.verdicts[0].verdict = search::Verdict::kIneffective; },
  };
  for (size_t i = 0; i < changes.size(); ++i) {
    auto in = state();
    changes[i](in);
    EXPECT_NE(proposal_state_hash("kernel", "builtin", in), h) << "change " << i;
  }
}

TEST(Proposals, KeptProposalsComeBackWrittenAgainstThisRunsBaseline) {
  search::GeneratorOutput out;
  out.candidates = {candidate("i3c1", 256, true, "runs/a/derived/k.cu"), candidate("i3c2", 32, false, "runs/a/derived/k.cu")};
  out.exploring = true;
  out.notes = {"every configuration the evidence allows was measured"};
  out.outlook = search::Outlook{7, 0.85, search::Config{1, 1}, 14, 2};
  const util::Json body = proposal_json(out, "runs/a/derived/k.cu");

  search::GeneratorOutput live;  // this run's generator: other candidates, its own method selection
  live.candidates = {candidate("i3c1", 128, false, "runs/b/derived/k.cu")};
  live.selection.skipped = {{"register_cap", "no evidence"}};
  ASSERT_TRUE(apply_proposal(body, "runs/b/derived/k.cu", live).ok());
  ASSERT_EQ(live.candidates.size(), 2u);
  EXPECT_EQ(live.candidates[0].id, "i3c1");
  EXPECT_EQ(live.candidates[0].params, out.candidates[0].params);
  EXPECT_EQ(live.candidates[0].guards, out.candidates[0].guards);
  EXPECT_EQ(live.candidates[0].methods, out.candidates[0].methods);
  EXPECT_EQ(live.candidates[0].config, out.candidates[0].config);
  EXPECT_EQ(live.candidates[1].defines, out.candidates[1].defines);
  for (const auto& c : live.candidates) EXPECT_EQ(c.source, "runs/b/derived/k.cu");
  EXPECT_TRUE(live.exploring);
  EXPECT_EQ(live.notes, out.notes);
  ASSERT_TRUE(live.outlook.has_value());
  EXPECT_EQ(live.outlook->remaining, 7);
  EXPECT_EQ(live.outlook->best_lcb_ms, 0.85);
  EXPECT_EQ(live.outlook->best_config, (search::Config{1, 1}));
  EXPECT_EQ(live.outlook->observations, 14);
  EXPECT_EQ(live.outlook->predicted_infeasible, 2);
  ASSERT_EQ(live.selection.skipped.size(), 1u) << "the method selection stays the generator's";
}

TEST(Proposals, AMalformedBodyOrAnotherSourceLeavesTheGeneratorsOwn) {
  search::GeneratorOutput out;
  out.candidates = {candidate("i2c1", 64, false)};
  util::Json body = proposal_json(out, "kernels/k.cu");
  body["candidates"].push_back(util::Json(search::to_json(candidate("i2c2", 64, false, "kernels/other.cu"))));
  search::GeneratorOutput live;
  live.candidates = {candidate("mine", 32, false)};
  auto other = apply_proposal(body, "kernels/k.cu", live);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("kernels/other.cu"), std::string::npos) << other.error().message;
  ASSERT_EQ(live.candidates.size(), 1u);
  EXPECT_EQ(live.candidates[0].id, "mine");
  for (util::Json bad : {util::Json{{"candidates", 3}}, util::Json::object(),
                         util::Json{{"candidates", util::Json::array()}, {"baseline_source", "kernels/k.cu"}, {"exploring", "yes"}}}) {
    auto st = apply_proposal(bad, "kernels/k.cu", live);
    ASSERT_FALSE(st.ok()) << bad.dump();
    EXPECT_NE(st.error().message.find("malformed"), std::string::npos) << st.error().message;
    EXPECT_EQ(live.candidates[0].id, "mine");
  }
}

}  // namespace
}  // namespace kopt::loop
