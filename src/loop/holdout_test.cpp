#include "loop/holdout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "runner/compare.h"

namespace kopt::loop {

namespace {

// A check-mode runner result whose seed 1 output "C" (2 x 3) is wrong at element 4 (NaN where 2.5 was due),
// built with the runner's own comparison.
util::Json wrong_result() {
  std::vector<float> expected = {1, 2, 3, 4, 2.5f, 6}, actual = expected, good = expected;
  actual[4] = std::nanf("");
  auto cmp = [&](const std::vector<float>& got) {
    return runner::to_json(runner::compare(contract::DType::kF32, {2, 3}, reinterpret_cast<const unsigned char*>(expected.data()),
                                           reinterpret_cast<const unsigned char*>(got.data()), 6, {1e-4, 1e-4}));
  };
  util::Json seeds = util::Json::array();
  seeds.push_back({{"seed", 0}, {"outputs", {{"C", cmp(good)}}}, {"inputs", {{"A", {{"unchanged", true}, {"first_changed_index", -1}}}}}});
  seeds.push_back({{"seed", 1}, {"outputs", {{"C", cmp(actual)}}}, {"inputs", {{"A", {{"unchanged", true}, {"first_changed_index", -1}}}}}});
  return {{"status", "wrong_result"}, {"message", "output C: MISMATCH"}, {"seeds", seeds}};
}

HoldoutRun ok_run(double ms) {
  HoldoutRun r;
  r.status = runner::RunStatus::kOk;
  r.median_ms = ms;
  return r;
}

workload::Case shape(const std::string& name) {
  workload::Case c;
  c.name = name;
  c.requested = c.realised = {{"M", 2039}, {"N", 2029}};
  c.origin = workload::CaseOrigin::kHoldoutDerived;
  return c;
}

}  // namespace

TEST(Holdout, FirstBadElementComesFromTheRunnersComparison) {
  auto f = first_bad_element(wrong_result());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->buffer, "C");
  EXPECT_EQ(f->seed, 1);
  EXPECT_EQ(f->index, 4);
  EXPECT_EQ(f->coords, (std::vector<int64_t>{1, 1}));
  ASSERT_TRUE(f->expected);
  EXPECT_DOUBLE_EQ(*f->expected, 2.5);
  EXPECT_FALSE(f->actual);  // NaN is written as text
  EXPECT_EQ(f->text(), "output C, seed 1: first bad index 4 [1,1]: expected 2.5, got nan/inf");
  auto modified = util::Json::parse(
      R"({"seeds": [{"seed": 0, "outputs": {}, "inputs": {"A": {"unchanged": false, "first_changed_index": 7}}}]})");
  auto m = first_bad_element(modified);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->input_modified);
  EXPECT_EQ(m->index, 7);
  EXPECT_FALSE(first_bad_element(util::Json::object()));
}

TEST(Holdout, VerdictsAndTheWarning) {
  HoldoutRun wrong;
  wrong.status = runner::RunStatus::kWrongResult;
  wrong.message = "output C: MISMATCH";
  wrong.details = wrong_result();
  HoldoutRun crashed;
  crashed.status = runner::RunStatus::kCudaError;
  crashed.message = "CUDA_ERROR_ILLEGAL_ADDRESS";

  auto pass = judge_holdout_case(shape("tile_plus_one"), ok_run(2.0), ok_run(1.0));
  EXPECT_EQ(pass.verdict, HoldoutVerdict::kPass);
  EXPECT_NE(pass.text.find("2.00x"), std::string::npos) << pass.text;

  auto domain = judge_holdout_case(shape("unit_M"), crashed, ok_run(1.0));
  EXPECT_EQ(domain.verdict, HoldoutVerdict::kOutsideDomain);
  EXPECT_NE(domain.text.find("outside the kernel's domain"), std::string::npos);
  EXPECT_NE(domain.text.find("the champion passes"), std::string::npos);

  auto fails = judge_holdout_case(shape("primes"), ok_run(2.0), wrong);
  EXPECT_EQ(fails.verdict, HoldoutVerdict::kChampionFails);
  ASSERT_TRUE(fails.first_bad);
  EXPECT_NE(fails.text.find("first bad index 4 [1,1]"), std::string::npos) << fails.text;

  auto crash = judge_holdout_case(shape("tile_minus_one"), ok_run(2.0), crashed);
  EXPECT_EQ(crash.verdict, HoldoutVerdict::kChampionFails);
  EXPECT_FALSE(crash.first_bad);
  EXPECT_NE(crash.text.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos);

  auto s = summarize_holdout({pass, domain, fails, crash});
  EXPECT_EQ(s.passed, 1);
  EXPECT_EQ(s.outside_domain, 1);
  EXPECT_EQ(s.champion_fails, 2);
  EXPECT_NE(s.warning.find("the champion fails at 2 held-out shape(s)"), std::string::npos) << s.warning;
  EXPECT_NE(s.warning.find("primes (M=2039 N=2029)"), std::string::npos) << s.warning;
  auto j = to_json(s);
  EXPECT_EQ(j["cases"][2]["verdict"], "champion_fails");
  EXPECT_EQ(j["cases"][2]["first_bad"]["index"], 4);
  EXPECT_EQ(j["cases"][1]["verdict"], "outside_domain");

  auto clean = summarize_holdout({pass, domain});
  EXPECT_TRUE(clean.warning.empty());
  HoldoutRun interrupted;  // default: interrupted
  EXPECT_EQ(judge_holdout_case(shape("x"), ok_run(1), interrupted).verdict, HoldoutVerdict::kNotRun);
}

}  // namespace kopt::loop
