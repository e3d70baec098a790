#include "roofline/analysis.h"

#include <gtest/gtest.h>

#include "roofline/testing.h"
#include "testing/test_support.h"

namespace kopt::roofline {

namespace {

// The saxpy kernel of the H200 capture: 2^26 elements, y = a*x + y (2 FLOP, 12 bytes each), 230.912 us.
constexpr double kN = 1 << 26;

std::map<std::string, double> saxpy_metrics() {
  auto j = util::read_json(testing_support::test_data_dir() + "/roofline/ncu-2025.3.1/saxpy_h200_metrics.json");
  return (*j)["metrics"].get<std::map<std::string, double>>();
}

RooflineInput saxpy(bool with_metrics) {
  RooflineInput in;
  in.kernel = "saxpy.cu";
  in.model = WorkloadModel{{{"float32", 2 * kN}}, 12 * kN};
  in.buffer_dtypes = {"float32", "float32"};
  in.time = {0.230912, 0.002};
  if (with_metrics) in.ncu_metrics = saxpy_metrics();
  return in;
}

Ceilings datasheet_only() {
  Ceilings c;
  c.gpu_name = "NVIDIA H200";
  fill_from_datasheet(c, *datasheet_for("NVIDIA H200"));
  return c;
}

}  // namespace

TEST(Analyze, SaxpyAtMeasuredBandwidthIsNearPeakAndGetsNoMethods) {
  auto r = analyze(testing::round_ceilings(), saxpy(true));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->mode, Mode::kWorkloadModel);
  EXPECT_NEAR(r->floor->floor_ms, 12 * kN / 4000e9 * 1e3, 1e-12);  // 0.2013 ms
  EXPECT_NEAR(r->efficiency->efficiency, 0.20133 / 0.230912, 1e-4);  // 87%
  EXPECT_EQ(r->floor->binding, Axis::kMemory);
  EXPECT_TRUE(r->near_peak());
  EXPECT_FALSE(r->at_roof()) << "87% of the floor: near, not at the roof";
  EXPECT_EQ(r->verdict, Verdict::kNearPeak);
  EXPECT_EQ(r->bound, Axis::kMemory);
  auto at = *r;
  at.efficiency->efficiency = 1.08;  // vector_add 2^24's champion on the H100 (issue 36)
  EXPECT_TRUE(at.at_roof());
  EXPECT_NEAR(*r->util.memory, 3407243902439.02 / 4000e9, 1e-9);  // ncu's achieved bandwidth / the ceiling
  EXPECT_EQ(r->budget.methods, (std::map<Axis, int>{{Axis::kCompute, 0}, {Axis::kMemory, 0}, {Axis::kLatency, 0}}));
}

TEST(Analyze, SaxpyAgainstTheDatasheetIsBelowPeakAndGetsMemoryMethods) {
  auto r = analyze(datasheet_only(), saxpy(true));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_NEAR(r->efficiency->efficiency, 12 * kN / 4800e9 * 1e3 / 0.230912, 1e-9);  // 72.7%
  EXPECT_EQ(r->verdict, Verdict::kBelowPeak);
  EXPECT_FALSE(r->near_peak());
  EXPECT_FALSE(r->at_roof());
  EXPECT_EQ(r->budget.methods.at(Axis::kMemory), 2);
  EXPECT_EQ(r->budget.methods.at(Axis::kCompute), 0);
  bool says_datasheet = false;
  for (const auto& n : r->notes) says_datasheet |= n.find("datasheet") != std::string::npos;
  EXPECT_TRUE(says_datasheet);
}

TEST(Analyze, WithoutNcuTheModelGivesTheUtilisation) {
  auto r = analyze(testing::round_ceilings(), saxpy(false));
  ASSERT_TRUE(r);
  EXPECT_NEAR(*r->util.memory, r->efficiency->efficiency, 1e-12);
  EXPECT_EQ(r->util.sources.at("memory"), "workload model: memory floor / time");
  EXPECT_EQ(r->bound, Axis::kMemory);
  EXPECT_FALSE(r->gaps.latency);  // no issue metric: unknown
}

TEST(Analyze, HeuristicModeIsLabelledAndNeverNearPeak) {
  RooflineInput in;
  in.kernel = "k.cu";
  in.time = {1.0, 0.01};
  in.ncu_metrics = {{ncu::kSmThroughput, 100}, {ncu::kMemThroughput, 50}, {ncu::kIssueActive, 99}};
  auto r = analyze(testing::round_ceilings(), in);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->mode, Mode::kBottleneckGapHeuristic);
  EXPECT_EQ(r->verdict, Verdict::kHeuristicOnly);
  EXPECT_FALSE(r->near_peak());
  EXPECT_FALSE(r->floor);
  EXPECT_EQ(r->bound, Axis::kCompute);
  EXPECT_EQ(r->budget.methods.at(Axis::kCompute), 2);  // saturated pipes: fewer or cheaper instructions
  auto j = to_json(*r);
  EXPECT_EQ(j["mode"], "bottleneck_gap_heuristic");
  EXPECT_EQ(j["near_peak"], false);
  EXPECT_TRUE(j["efficiency"].is_null());
  EXPECT_NE(format_text(*r).find("[mode: bottleneck_gap_heuristic]"), std::string::npos);
}

TEST(Analyze, NothingToCompareIsSaidNotInvented) {
  RooflineInput in;
  in.time = {1.0, 0};
  auto r = analyze(testing::round_ceilings(), in);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->bound);
  EXPECT_FALSE(r->gaps.compute);
  EXPECT_EQ(r->budget.methods.at(Axis::kMemory), 0);
  EXPECT_NE(r->notes.front().find("nothing to compare"), std::string::npos);
  EXPECT_TRUE(to_json(*r)["gaps"]["memory"].is_null());
}

TEST(Analyze, BelowTheFloorIsAProblemNeverASuccess) {
  const double n = 4096;
  RooflineInput in;
  in.kernel = "sgemm.cu";
  in.model = WorkloadModel{{{"float32", 2 * n * n * n}}, 12 * n * n};
  in.buffer_dtypes = {"float32", "float32", "float32"};
  in.time = {1.5, 0.05};  // the fp32 floor is 2.29 ms
  auto r = analyze(testing::round_ceilings(), in);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->verdict, Verdict::kBelowFloor);
  EXPECT_TRUE(r->below_floor());
  EXPECT_FALSE(r->near_peak());
  EXPECT_GT(r->efficiency->efficiency, 1.0);
  EXPECT_EQ(r->budget.methods.at(Axis::kCompute), 0);
  EXPECT_NE(format_text(*r).find("BELOW THE FLOOR"), std::string::npos);
  EXPECT_EQ(to_json(*r)["verdict"], "below_floor");
  // The same kernel naming tf32: the floor drops to 0.34 ms and 1.5 ms is honest, far from peak.
  in.model = WorkloadModel{{{"tf32", 2 * n * n * n}}, 12 * n * n};
  auto t = analyze(testing::round_ceilings(), in);
  EXPECT_EQ(t->verdict, Verdict::kBelowPeak);
  EXPECT_EQ(t->floor->binding, Axis::kCompute);
  EXPECT_EQ(t->bound, Axis::kLatency);  // the model's utilisation: 23% compute, 3% memory
}

TEST(Analyze, RejectsBadInputsClearly) {
  RooflineInput in = saxpy(false);
  in.time.median_ms = 0;
  EXPECT_NE(analyze(testing::round_ceilings(), in).error().message.find("must be > 0 ms"), std::string::npos);
  in = saxpy(false);
  in.ncu_metrics[ncu::kSmThroughput] = -1;  // an impossible metric is dropped with a note, not fatal
  auto dropped = analyze(testing::round_ceilings(), in);
  ASSERT_TRUE(dropped) << dropped.error().message;
  EXPECT_NE(dropped->util.sources["compute"], ncu::kSmThroughput);  // from another metric, if any
  ASSERT_FALSE(dropped->notes.empty());
  EXPECT_NE(dropped->notes.back().find(ncu::kSmThroughput), std::string::npos);
  EXPECT_EQ(to_json(*dropped)["utilisation"]["ignored"].size(), 1u);
  in = saxpy(false);
  in.model->flops_by_dtype = {{"complex64", 1}};
  EXPECT_NE(analyze(testing::round_ceilings(), in).error().message.find("unknown dtype"), std::string::npos);
  in = saxpy(false);
  AnalyzeOptions o;
  o.budget.total = -3;
  EXPECT_EQ(analyze(testing::round_ceilings(), in, o).error().code, ExitCode::kInput);
}

TEST(Analyze, JsonCarriesTheFloorTermsAndTheBudget) {
  auto r = analyze(testing::round_ceilings(), saxpy(true));
  auto j = to_json(*r);
  EXPECT_EQ(j["mode"], "workload_model");
  EXPECT_EQ(j["floor"]["compute_terms"][0]["roof"], "fp32_fma");
  EXPECT_EQ(j["floor"]["dram_roof"], "dram_copy");
  EXPECT_EQ(j["floor"]["binding"], "memory");
  EXPECT_EQ(j["bound"], "memory");
  EXPECT_EQ(j["budget"]["methods"]["latency"], 0);
  EXPECT_EQ(j["utilisation"]["top_stall"], "long_scoreboard");
  std::string text = format_text(*r);
  EXPECT_NE(text.find("[mode: workload_model]"), std::string::npos);
  EXPECT_NE(text.find("efficiency  87.2% of the floor"), std::string::npos);
}

}  // namespace kopt::roofline
