#include <gtest/gtest.h>

#include "loop/candidate_run.h"

namespace kopt::loop {
namespace {

search::Measurement measured(const std::string& id, bool reused) {
  search::Measurement m;
  m.candidate.id = id;
  m.iteration = 1;
  if (reused) m.reused = {{"run_dir", "runs/first"}, {"record_id", 7}};
  return m;
}

// A reused ablation variant raced again by the adoption step kept its ablation record from before the race (H200,
// 2026-12-05: "20 reused, 10 raced again" of 29 evaluations): the summary counts it measured, once.
TEST(ReuseSummary, AnEvaluationRacedAgainIsNotCountedReused) {
  std::vector<search::Measurement> history = {measured("baseline", false), measured("i1c1", true), measured("i1c2", false)};
  std::vector<search::Measurement> ablations = {measured("i1c2_base_BLOCK", true)};
  auto s = reuse_summary(history, ablations, {"i1c2", "i1c2_base_BLOCK"});
  EXPECT_EQ(s["evaluations"], 3);
  EXPECT_EQ(s["reused"], 1);
  ASSERT_EQ(s["records"].size(), 1u);
  EXPECT_EQ(s["records"][0]["id"], "i1c1");
  EXPECT_EQ(s["raced_again"].size(), 2u);
}

}  // namespace
}  // namespace kopt::loop
