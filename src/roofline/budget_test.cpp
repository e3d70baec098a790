#include "roofline/budget.h"

#include <gtest/gtest.h>

namespace kopt::roofline {

namespace {

using Methods = std::map<Axis, int>;

BudgetInput input(std::optional<double> uc, std::optional<double> um, std::optional<double> issue) {
  BudgetInput in;
  in.util.compute = uc;
  in.util.memory = um;
  in.util.issue = issue;
  in.gaps = axis_gaps(in.util);
  in.bound = bound_axis(in.util);
  return in;
}

Methods methods(const BudgetInput& in, const BudgetOptions& o = {}) {
  auto m = method_budget(in, o);
  EXPECT_TRUE(m) << m.error().message;
  return m ? *m : Methods{};
}

Methods m(int c, int mem, int l) { return {{Axis::kCompute, c}, {Axis::kMemory, mem}, {Axis::kLatency, l}}; }

}  // namespace

// The brief's first case: DRAM saturated, but moving twice bytes_min: memory-traffic methods.
TEST(Budget, DramSaturatedWithExcessTrafficGetsMemoryMethods) {
  BudgetInput in = input(0.30, 0.95, 0.20);
  in.util.dram_bytes = 2e9;
  in.bytes_min = 1e9;
  in.efficiency = 0.48;
  auto s = split_budget(in);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->methods, m(0, 2, 0));
  EXPECT_NEAR(s->weights.at(Axis::kMemory), 0.5, 1e-12);  // half the traffic is avoidable
  EXPECT_NE(s->reasons.front().find("moves 2.00x bytes_min"), std::string::npos);
}

// The brief's second case: near bytes_min at full bandwidth is near peak: nothing.
TEST(Budget, NearBytesMinAtFullBandwidthIsNearPeakAndGetsNothing) {
  BudgetInput in = input(0.30, 0.95, 0.20);
  in.util.dram_bytes = 1.02e9;
  in.bytes_min = 1e9;
  in.efficiency = 0.93;
  in.near_peak = true;
  auto s = split_budget(in);
  EXPECT_EQ(s->methods, m(0, 0, 0));
  EXPECT_NE(s->reasons.front().find("near peak"), std::string::npos);
  // Even were it not flagged near peak, saturated memory at ~bytes_min has nothing to gain on memory.
  in.near_peak = false;
  in.efficiency = std::nullopt;
  auto t = split_budget(in);
  EXPECT_EQ(t->methods, m(0, 0, 0));
}

// The H200 transpose (check9, 8192 x 8192, 32 x 32 tiles, no padding): the memory pipes at 94% but DRAM at 36%
// and only 0.96x bytes_min moved: the shared memory's 32-way bank conflicts limit. Not "nothing to gain": the
// memory axis gets the methods that fix the access pattern, weighted by the distance to the floor.
TEST(Budget, SaturatedMemoryPipesWithIdleDramGetMemoryMethods) {
  BudgetInput in = input(0.40, 0.94, 0.40);
  in.util.dram = 0.36;
  in.util.dram_bytes = 0.96 * 536870912.0;
  in.bytes_min = 536870912.0;
  in.efficiency = 0.42;
  auto s = split_budget(in);
  ASSERT_TRUE(s);
  EXPECT_GE(s->methods.at(Axis::kMemory), 1);
  EXPECT_NEAR(s->weights.at(Axis::kMemory), 0.58, 1e-12);
  ASSERT_FALSE(s->reasons.empty());
  EXPECT_NE(s->reasons.front().find("while DRAM is at 36%"), std::string::npos) << s->reasons.front();
  for (const auto& r : s->reasons) EXPECT_EQ(r.find("nothing to gain"), std::string::npos) << r;
  // The same pipes with DRAM saturated too: the traffic is minimal and the bandwidth used, nothing to gain.
  in.util.dram = 0.93;
  in.efficiency = std::nullopt;
  auto t = split_budget(in);
  EXPECT_EQ(t->methods.at(Axis::kMemory), 0);
  EXPECT_NE(t->reasons.back().find("nothing to gain"), std::string::npos);
}

TEST(Budget, LatencyBoundGetsLatencyMethods) {
  EXPECT_EQ(methods(input(0.20, 0.25, 0.15)), m(0, 0, 2));
}

TEST(Budget, BelowTheFloorGetsNothing) {
  BudgetInput in = input(0.30, 0.95, 0.20);
  in.below_floor = true;
  auto s = split_budget(in);
  EXPECT_EQ(s->methods, m(0, 0, 0));
  EXPECT_NE(s->reasons.front().find("below the floor"), std::string::npos);
}

TEST(Budget, UnknownBoundGetsNothingAndSaysWhy) {
  auto s = split_budget(input(std::nullopt, 0.95, 0.2));
  EXPECT_EQ(s->methods, m(0, 0, 0));
  EXPECT_NE(s->reasons.front().find("bound is unknown"), std::string::npos);
}

TEST(Budget, MemoryBoundBelowSaturationSharesWithLatencyHiding) {
  // The H200 saxpy capture, heuristic mode: memory 70.8%, compute 34.8%, issue 17%.
  auto s = split_budget(input(0.3479, 0.7081, 0.17));
  ASSERT_TRUE(s);
  EXPECT_NEAR(s->weights.at(Axis::kMemory), 1 - 0.7081, 1e-9);
  EXPECT_NEAR(s->weights.at(Axis::kLatency), 0.83 * (0.8 - 0.7081) / 0.8, 1e-9);
  EXPECT_EQ(s->methods, m(0, 2, 1));
}

TEST(Budget, SaturatedWithUnknownTrafficStillTriesTrafficReduction) {
  EXPECT_EQ(methods(input(0.30, 0.90, 0.30)), m(0, 2, 0));  // heuristic mode: no bytes_min
  EXPECT_EQ(methods(input(0.92, 0.30, 0.90)), m(2, 0, 0));  // compute pipes saturated
}

TEST(Budget, ComputeBoundFarFromTheFloorGetsComputeMethods) {
  BudgetInput in = input(0.70, 0.20, 0.50);
  in.efficiency = 0.25;
  in.bytes_min = 1e6;
  auto s = split_budget(in);
  EXPECT_NEAR(s->weights.at(Axis::kCompute), 0.75, 1e-12);
  EXPECT_EQ(s->methods.at(Axis::kCompute), 2);
  EXPECT_EQ(s->methods.at(Axis::kMemory), 0);
  EXPECT_NEAR(s->weights.at(Axis::kLatency), 0.5 * (0.8 - 0.7) / 0.8, 1e-12);  // issue half idle
  EXPECT_EQ(s->methods.at(Axis::kLatency), 1);
}

TEST(Budget, TotalAndPerAxisCapAreConfigurable) {
  BudgetInput in = input(0.3479, 0.7081, 0.17);
  BudgetOptions o;
  o.total = 5;
  o.max_per_axis = 3;
  EXPECT_EQ(methods(in, o), m(0, 3, 2));
  o.total = 1;
  EXPECT_EQ(methods(in, o), m(0, 1, 0));
  o.total = 0;
  EXPECT_EQ(methods(in, o), m(0, 0, 0));
  o.total = 3;
  o.max_per_axis = 1;
  EXPECT_EQ(methods(in, o), m(0, 1, 1));
}

TEST(Budget, RejectsNegativeAndOutOfRangeOptions) {
  BudgetInput in = input(0.3, 0.7, 0.2);
  BudgetOptions o;
  o.total = -1;
  EXPECT_NE(method_budget(in, o).error().message.find("budget must be >= 0, got -1"), std::string::npos);
  o = {};
  o.max_per_axis = -2;
  EXPECT_FALSE(method_budget(in, o));
  o = {};
  o.saturated = 0;
  EXPECT_FALSE(method_budget(in, o));
  o = {};
  o.traffic_excess = 0.5;
  EXPECT_EQ(method_budget(in, o).error().code, ExitCode::kInput);
}

TEST(Allocate, IsDHondtWithACapAndAFloor) {
  std::map<Axis, double> w = {{Axis::kCompute, 0.6}, {Axis::kMemory, 0.5}, {Axis::kLatency, 0.04}};
  EXPECT_EQ(allocate(w, 3, 2, 0.05), m(2, 1, 0));  // 0.6, 0.5, then 0.6/2=0.3 beats 0.5/2=0.25
  EXPECT_EQ(allocate(w, 4, 2, 0.05), m(2, 2, 0));  // latency below the floor never gets one
  EXPECT_EQ(allocate(w, 5, 2, 0.0), m(2, 2, 1));
  EXPECT_EQ(allocate({}, 3, 2, 0.05), m(0, 0, 0));
  std::map<Axis, double> tie = {{Axis::kCompute, 0.5}, {Axis::kMemory, 0.5}};
  EXPECT_EQ(allocate(tie, 1, 2, 0.05), m(1, 0, 0));  // ties: the earlier axis
}

}  // namespace kopt::roofline
