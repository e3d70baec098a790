#include "search/feasibility.h"

#include <gtest/gtest.h>

#include "search/testing.h"

namespace kopt::search {
namespace {

// CUTLASS's layernorm as kopt derives it (examples/corpus/cutlass_layernorm): items per thread T2, and the block
// (0: the launcher's own, N/4 = 1024 threads at N = 4096). Correct iff BLOCK == 0 or T2 * BLOCK >= 1024.
constexpr const char* kLayernorm = R"(// @kopt param T2 values=1,2,4,8 default=1
// @kopt param BLOCK values=0,32,64,128,256,512,1024 default=0
// @kopt method vectorized_access
#if KOPT_VECTORIZED_ACCESS
#endif
extern "C" void solve(const float* x, float* y, int n) {}
)";

SearchSpace layernorm_space(bool flags = false) {
  auto a = parse_annotations(kLayernorm, "k.cu");
  EXPECT_TRUE(a.ok());
  SpaceOptions o;
  o.offer_flag_methods = flags;
  auto s = build_space(*a, testing::test_registry(), o);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return *s;
}

// The config with these values (the guard, when there is one, off; flags at their default).
Config at(const SearchSpace& s, int64_t t2, int64_t block, int guard = 0) {
  Config c = s.default_config();
  auto set = [&](const char* name, int64_t v) {
    const int d = s.dim_index(name);
    const auto& vals = s.dims[static_cast<size_t>(d)].values;
    c[static_cast<size_t>(d)] = static_cast<int>(std::find(vals.begin(), vals.end(), v) - vals.begin());
  };
  set("T2", t2);
  set("BLOCK", block);
  c[static_cast<size_t>(s.dim_index("KOPT_VECTORIZED_ACCESS"))] = guard;
  return c;
}

bool truly_feasible(int64_t t2, int64_t block) { return block == 0 || t2 * block >= 1024; }
double unwritten(int64_t t2, int64_t block) { return 1 - static_cast<double>(t2 * block) / 1024; }

FeasibilityObservation failed_at(const SearchSpace& s, int64_t t2, int64_t block, int guard = 0) {
  return {at(s, t2, block, guard), false, unwritten(t2, block)};
}
FeasibilityObservation ok_at(const SearchSpace& s, int64_t t2, int64_t block, int guard = 0) {
  return {at(s, t2, block, guard), true, std::nullopt};
}

const std::vector<int64_t> kT2 = {1, 2, 4, 8}, kBlock = {0, 32, 64, 128, 256, 512, 1024};

TEST(Feasibility, WithoutUnderCoverageFailuresNothingIsPredicted) {
  auto s = layernorm_space();
  FeasibilityModel none(s, {ok_at(s, 1, 0), ok_at(s, 2, 512)});
  EXPECT_FALSE(none.active());
  for (auto t : kT2)
    for (auto b : kBlock) EXPECT_FALSE(none.predict(at(s, t, b)));
}

TEST(Feasibility, DominanceFromOneFailure) {
  auto s = layernorm_space();
  FeasibilityModel m(s, {ok_at(s, 1, 0), failed_at(s, 2, 256)});
  ASSERT_TRUE(m.active());
  // Every size <= (2, 256): predicted, by dominance.
  for (auto [t, b] : std::vector<std::pair<int64_t, int64_t>>{{1, 32}, {1, 256}, {2, 128}, {2, 256}}) {
    auto p = m.predict(at(s, t, b));
    ASSERT_TRUE(p) << t << "," << b;
    EXPECT_EQ(p->basis, InfeasibleBasis::kDominated);
    EXPECT_EQ(p->because_of, at(s, 2, 256));
    EXPECT_NE(p->reason(s).find("T2=2,BLOCK=256"), std::string::npos) << p->reason(s);
  }
  // The launcher's own block (0) is no size: never dominated, though 0 < 256.
  for (auto t : kT2) EXPECT_FALSE(m.predict(at(s, t, 0))) << t;
  // A method switched on is another class: nothing is said about it.
  EXPECT_FALSE(m.predict(at(s, 1, 32, 1)));
}

TEST(Feasibility, TheProductModelPredictsTheNeededProduct) {
  auto s = layernorm_space();
  // Two failures that move one parameter each pin both exponents at 1: T2 * BLOCK >= 1024.
  FeasibilityModel m(s, {ok_at(s, 1, 0), failed_at(s, 1, 32), failed_at(s, 1, 64), failed_at(s, 2, 32)});
  for (auto t : kT2)
    for (auto b : kBlock) {
      SCOPED_TRACE(std::to_string(t) + "," + std::to_string(b));
      auto p = m.predict(at(s, t, b));
      EXPECT_EQ(p.has_value(), !truly_feasible(t, b));
      if (p && t * b > 64) {
        EXPECT_EQ(p->basis, InfeasibleBasis::kProduct);
      }
      if (p && p->basis == InfeasibleBasis::kProduct) {
        EXPECT_NEAR(p->predicted_coverage, static_cast<double>(t * b) / 1024, 1e-9);
      }
    }
  auto lines = m.describe(s);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("T2*BLOCK >= 1024"), std::string::npos) << lines[0];
}

TEST(Feasibility, OneFailureIsConservativeAcrossTheModelsItCannotTellApart) {
  auto s = layernorm_space();
  // One failure (1, 32), 1/32 covered: the exponents are unknown; only what every model {0,1,2}^2 calls short is.
  FeasibilityModel m(s, {ok_at(s, 1, 0), failed_at(s, 1, 32)});
  int predicted = 0;
  for (auto t : kT2)
    for (auto b : kBlock) {
      auto p = m.predict(at(s, t, b));
      if (!p) continue;
      ++predicted;
      EXPECT_FALSE(truly_feasible(t, b)) << t << "," << b;
    }
  EXPECT_GE(predicted, 3);  // (1,32) itself, (1,64), (2,32) at least: T2^2*BLOCK^2 short of 1024^2/ 32
}

TEST(Feasibility, EveryPredictionOnTheWholeLayernormSpaceIsRightWhateverWasMeasured) {
  // The false-infeasible guard: for every subset of up to three failures of the true space, with or without the
  // correct points measured so far, no truly feasible point is ever predicted infeasible.
  auto s = layernorm_space();
  std::vector<std::pair<int64_t, int64_t>> bad, good;
  for (auto t : kT2)
    for (auto b : kBlock) (truly_feasible(t, b) ? good : bad).push_back({t, b});
  ASSERT_EQ(bad.size(), 14u);
  ASSERT_EQ(good.size(), 14u);
  int predictions = 0;
  for (size_t i = 0; i < bad.size(); ++i)
    for (size_t j = i; j < bad.size(); ++j)
      for (size_t k = j; k < bad.size(); ++k)
        for (bool with_good : {false, true}) {
          std::vector<FeasibilityObservation> obs = {ok_at(s, 1, 0)};
          for (size_t x : {i, j, k}) obs.push_back(failed_at(s, bad[x].first, bad[x].second));
          if (with_good)
            for (auto [t, b] : good) obs.push_back(ok_at(s, t, b));
          FeasibilityModel m(s, obs);
          for (auto [t, b] : good) EXPECT_FALSE(m.predict(at(s, t, b))) << t << "," << b << " after " << i << j << k;
          for (auto [t, b] : bad) predictions += m.predict(at(s, t, b)).has_value();
        }
  EXPECT_GT(predictions, 0);
}

TEST(Feasibility, FailuresWithoutTheSignalTeachNothing) {
  auto s = layernorm_space();
  // Wrong values everywhere (no unwritten share), nothing written (a launch that never ran), a crash: no prediction.
  FeasibilityModel wrong(s, {ok_at(s, 1, 0), {at(s, 8, 1024), false, std::nullopt}});
  EXPECT_FALSE(wrong.active());
  EXPECT_FALSE(wrong.predict(at(s, 1, 32)));
  EXPECT_FALSE(wrong.predict(at(s, 8, 512)));
  FeasibilityModel nothing(s, {ok_at(s, 1, 0), {at(s, 8, 1024), false, 1.0}});
  EXPECT_FALSE(nothing.active());
  EXPECT_FALSE(nothing.predict(at(s, 4, 1024)));
}

TEST(Feasibility, AContradictionSwitchesTheClassOff) {
  auto s = layernorm_space();
  // A space where coverage falls as BLOCK grows: (1, 512) left half unwritten, yet (1, 256) was correct.
  FeasibilityModel m(s, {failed_at(s, 1, 512), ok_at(s, 1, 256)});
  ASSERT_TRUE(m.active());
  for (auto t : kT2)
    for (auto b : kBlock) EXPECT_FALSE(m.predict(at(s, t, b))) << t << "," << b;
  auto lines = m.describe(s);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("not monotone"), std::string::npos) << lines[0];
}

TEST(Feasibility, TwoFailuresKeepOnlyTheProductModelTheyAgreeWith) {
  auto s = layernorm_space();
  // Coverage depends on BLOCK alone here (BLOCK >= 512 is correct whatever T2): (1, 256) half covered, (1, 512)
  // correct, (8, 128) three quarters unwritten. The two failures agree only with BLOCK alone (a T2 in the model would
  // make (8, 128) cover more than (1, 256)): it predicts (8, 256) short, where a product T2*BLOCK would not.
  FeasibilityModel m(s, {{at(s, 1, 256), false, 0.5}, {at(s, 8, 128), false, 0.75}, ok_at(s, 1, 512)});
  auto p = m.predict(at(s, 8, 256));
  ASSERT_TRUE(p) << ::testing::PrintToString(m.describe(s));
  EXPECT_EQ(p->basis, InfeasibleBasis::kProduct);
  EXPECT_FALSE(m.predict(at(s, 2, 512)));
  EXPECT_FALSE(m.predict(at(s, 1, 1024)));
}

TEST(Feasibility, CompilerFlagsDoNotChangeTheClass) {
  auto s = layernorm_space(true);
  Config failed = at(s, 2, 256);
  Config flagged = at(s, 1, 128);
  bool any_flag = false;
  for (size_t d = 0; d < s.dims.size(); ++d)
    if (s.dims[d].kind == DimKind::kFlag && s.dims[d].values.size() > 1) flagged[d] = 1, any_flag = true;
  ASSERT_TRUE(any_flag);
  FeasibilityModel m(s, {{failed, false, 0.5}});
  auto p = m.predict(flagged);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->basis, InfeasibleBasis::kDominated);
}

}  // namespace
}  // namespace kopt::search
