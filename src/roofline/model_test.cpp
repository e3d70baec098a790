#include "roofline/model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "roofline/testing.h"

namespace kopt::roofline {

namespace {

using util::Json;

Floor floor_of(const Json& model, const std::vector<std::string>& buffers = {"float32"}) {
  auto m = parse_workload_model(model);
  EXPECT_TRUE(m) << m.error().message;
  auto f = compute_floor(testing::round_ceilings(), *m, buffers);
  EXPECT_TRUE(f) << f.error().message;
  return f ? *f : Floor{};
}

std::string model_error(const Json& j) {
  auto m = parse_workload_model(j);
  return m ? "" : m.error().message;
}

}  // namespace

TEST(WorkloadModel, ParsesOneDtypeOrFlopsPerDtype) {
  auto a = parse_workload_model({{"flops", 2e9}, {"bytes_min", 1.2e7}, {"dtype", "float32"}});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->flops_by_dtype, (std::map<std::string, double>{{"float32", 2e9}}));
  EXPECT_EQ(a->bytes_min, 1.2e7);
  auto b = parse_workload_model({{"flops", {{"bfloat16", 1e12}, {"float32", 1e9}}}, {"bytes_min", 1}});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->flops_by_dtype.size(), 2u);
  auto c = parse_workload_model({{"flops", 10}, {"bytes_min", 0}});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->flops_by_dtype.begin()->first, "");  // dtype to be inferred from the buffers
  auto d = parse_workload_model({{"flops", 0}, {"bytes_min", 4096}, {"dtype", nullptr}});
  ASSERT_TRUE(d);
}

TEST(WorkloadModel, RejectsMissingNegativeZeroAndMalformedInputs) {
  EXPECT_NE(model_error({{"flops", 1}}).find("must return 'flops' and 'bytes_min'"), std::string::npos);
  EXPECT_NE(model_error({{"flops", 1}, {"bytes_read_min", 8}}).find("without 'bytes_written_min'"), std::string::npos);
  EXPECT_NE(model_error({{"flops", 1}, {"bytes_min", 12}, {"bytes_read_min", 8}, {"bytes_written_min", 8}})
                .find("must equal bytes_read_min + bytes_written_min"),
            std::string::npos);
  EXPECT_NE(model_error({{"flops", 1}, {"bytes_read_min", -8}, {"bytes_written_min", 8}}).find("bytes_read_min must be >= 0"),
            std::string::npos);
  EXPECT_NE(model_error({{"flops", -1}, {"bytes_min", 8}}).find("flops must be >= 0, got -1"), std::string::npos);
  EXPECT_NE(model_error({{"flops", 1}, {"bytes_min", -8}}).find("bytes_min must be >= 0"), std::string::npos);
  EXPECT_NE(model_error({{"flops", "many"}, {"bytes_min", 8}}).find("must be a number"), std::string::npos);
  EXPECT_NE(model_error({{"flops", 0}, {"bytes_min", 0}}).find("both 0"), std::string::npos);
  EXPECT_NE(model_error({{"flops", Json::object()}, {"bytes_min", 8}}).find("empty dict"), std::string::npos);
  EXPECT_NE(model_error({{"flops", {{"float32", 1}}}, {"bytes_min", 8}, {"dtype", "float32"}}).find("not both"),
            std::string::npos);
  EXPECT_NE(model_error({{"flops", {{"float32", -2}}}, {"bytes_min", 8}}).find("flops[float32]"), std::string::npos);
  EXPECT_NE(model_error(Json::array({1, 2})).find("must return a dict"), std::string::npos);
  EXPECT_NE(model_error({{"flops", 1}, {"bytes_min", 8}, {"dtype", 3}}).find("'dtype' must be a string"),
            std::string::npos);
}

TEST(DtypeRules, ModelDtypesNameTheirRoof) {
  EXPECT_EQ(roof_for_dtype("float32")->roof, Roof::kFp32Fma);
  EXPECT_EQ(roof_for_dtype("torch.bfloat16")->roof, Roof::kBf16Tensor);
  EXPECT_EQ(roof_for_dtype("TF32")->roof, Roof::kTf32Tensor);
  EXPECT_EQ(roof_for_dtype("float16")->roof, Roof::kFp16Tensor);
  EXPECT_EQ(roof_for_dtype("float64")->roof, Roof::kFp64Fma);
  EXPECT_EQ(roof_for_dtype("float64_tensor")->roof, Roof::kFp64Tensor);
  EXPECT_EQ(roof_for_dtype("float8_e4m3fn")->roof, Roof::kFp8Tensor);
  EXPECT_EQ(roof_for_dtype("int8")->roof, Roof::kInt8Tensor);
  auto bad = roof_for_dtype("complex64");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ExitCode::kInput);
  EXPECT_NE(bad.error().message.find("unknown dtype 'complex64'"), std::string::npos);
}

TEST(DtypeRules, InferredFromBuffersByTheLowestFloatingPrecision) {
  EXPECT_EQ(infer_roof_from_buffers({"float32", "float32", "float32"})->roof, Roof::kFp32Fma);
  EXPECT_EQ(infer_roof_from_buffers({"float16", "float16", "float32"})->roof, Roof::kFp16Tensor);
  EXPECT_EQ(infer_roof_from_buffers({"bfloat16", "float32"})->roof, Roof::kBf16Tensor);
  EXPECT_EQ(infer_roof_from_buffers({"float64", "float32"})->roof, Roof::kFp32Fma);
  EXPECT_EQ(infer_roof_from_buffers({"float64", "int64"})->roof, Roof::kFp64Fma);
  EXPECT_EQ(infer_roof_from_buffers({"float8_e4m3fn", "bfloat16"})->roof, Roof::kFp8Tensor);
  EXPECT_EQ(infer_roof_from_buffers({"int8", "int8", "int32"})->roof, Roof::kInt8Tensor);
  EXPECT_EQ(infer_roof_from_buffers({"uint8", "float32"})->roof, Roof::kFp32Fma);  // a mask is not int8 math
  EXPECT_NE(infer_roof_from_buffers({"float32"})->rule.find("tf32 only when the model says so"), std::string::npos);
  EXPECT_NE(infer_roof_from_buffers({"int32", "bool"}).error().message.find("[int32, bool]"), std::string::npos);
  EXPECT_NE(infer_roof_from_buffers({}).error().message.find("no buffers"), std::string::npos);
  EXPECT_NE(infer_roof_from_buffers({"complex64"}).error().message.find("unknown buffer dtype"), std::string::npos);
}

TEST(WorkloadModel, AReadWriteSplitGivesTheReadFraction) {
  auto m = parse_workload_model({{"flops", 1}, {"bytes_read_min", 8}, {"bytes_written_min", 4}});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_DOUBLE_EQ(m->bytes_min, 12);  // the sum when bytes_min is left out
  EXPECT_NEAR(*m->read_fraction(), 2.0 / 3.0, 1e-12);
  auto n = parse_workload_model({{"flops", 1}, {"bytes_min", 12}, {"bytes_read_min", 8}, {"bytes_written_min", 4}});
  ASSERT_TRUE(n);
  EXPECT_DOUBLE_EQ(n->bytes_min, 12);
  EXPECT_FALSE(parse_workload_model({{"flops", 1}, {"bytes_min", 12}})->read_fraction());
}

TEST(Floor, AKnownMixUsesItsOwnDramRate) {
  Ceilings c = testing::round_ceilings();  // copy 4000, read 3900 (no triad/write measured)
  c.roofs[Roof::kDramRead] = testing::measured(4500);
  c.roofs[Roof::kDramTriad] = testing::measured(4100);
  const double n = 1 << 26;
  auto m = parse_workload_model({{"flops", n}, {"bytes_read_min", 8 * n}, {"bytes_written_min", 4 * n}});
  ASSERT_TRUE(m);
  auto f = compute_floor(c, *m, {"float32"});
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->dram_roof, Roof::kDramTriad);
  EXPECT_DOUBLE_EQ(f->dram_gbps, 4100);
  EXPECT_NEAR(f->memory_floor_ms, 12 * n / 4100e9 * 1e3, 1e-9);
  EXPECT_NEAR(*f->read_fraction, 2.0 / 3.0, 1e-12);
  // The same bytes with the mix unknown: the highest rate (read-only), so a lower floor.
  auto u = compute_floor(c, *parse_workload_model({{"flops", n}, {"bytes_min", 12 * n}}), {"float32"});
  EXPECT_DOUBLE_EQ(u->dram_gbps, 4500);
  EXPECT_LT(u->memory_floor_ms, f->memory_floor_ms);
  EXPECT_NE(u->dram_rule.find("mix unknown"), std::string::npos);
}

TEST(Floor, SgemmIsComputeBound) {
  const double n = 4096;
  Floor f = floor_of({{"flops", 2 * n * n * n}, {"bytes_min", 4 * 3 * n * n}, {"dtype", "float32"}});
  ASSERT_EQ(f.terms.size(), 1u);
  EXPECT_EQ(f.terms[0].choice.roof, Roof::kFp32Fma);
  EXPECT_NEAR(f.compute_floor_ms, 2 * n * n * n / 60e12 * 1e3, 1e-9);  // 2.2906 ms
  EXPECT_NEAR(f.memory_floor_ms, 4 * 3 * n * n / 4000e9 * 1e3, 1e-9);  // 0.0503 ms
  EXPECT_DOUBLE_EQ(f.floor_ms, f.compute_floor_ms);
  EXPECT_EQ(f.binding, Axis::kCompute);
  EXPECT_NEAR(*f.arithmetic_intensity, n / 6, 1e-9);
  EXPECT_EQ(f.dram_roof, Roof::kDramCopy);  // 4000 > 3900
}

TEST(Floor, SaxpyIsMemoryBoundWithTheDtypeInferred) {
  const double n = 1 << 26;
  Floor f = floor_of({{"flops", 2 * n}, {"bytes_min", 12 * n}}, {"float32", "float32"});
  EXPECT_EQ(f.terms[0].dtype, "");
  EXPECT_NE(f.terms[0].choice.rule.find("inferred from the buffers"), std::string::npos);
  EXPECT_EQ(f.binding, Axis::kMemory);
  EXPECT_NEAR(f.floor_ms, 12 * n / 4e12 * 1e3, 1e-9);  // 0.2013 ms
}

TEST(Floor, WorkOnOneUnitAddsUpAndUnitsOverlap) {
  // bf16 on the tensor cores (1.0 ms) and fp32 on the CUDA cores (0.5 ms) run concurrently: max.
  Floor a = floor_of({{"flops", {{"bfloat16", 8e11}, {"float32", 3e10}}}, {"bytes_min", 1}});
  EXPECT_NEAR(a.compute_floor_ms, 1.0, 1e-12);
  // bf16 and fp16 share the tensor cores: their times add up.
  Floor b = floor_of({{"flops", {{"bfloat16", 8e11}, {"float16", 8e11}}}, {"bytes_min", 1}});
  EXPECT_NEAR(b.compute_floor_ms, 2.0, 1e-12);
  EXPECT_DOUBLE_EQ(b.flops, 1.6e12);
}

TEST(Floor, BytesOnlyAndDatasheetTerms) {
  Floor a = floor_of({{"flops", 0}, {"bytes_min", 4e9}}, {"int32"});  // no compute: no dtype needed
  EXPECT_TRUE(a.terms.empty());
  EXPECT_EQ(a.binding, Axis::kMemory);
  EXPECT_NEAR(a.floor_ms, 1.0, 1e-12);
  Floor b = floor_of({{"flops", 6e10}, {"bytes_min", 1}, {"dtype", "float64_tensor"}});
  EXPECT_EQ(b.terms[0].source, CeilingSource::kDatasheet);
  EXPECT_NEAR(b.floor_ms, 1.0, 1e-12);
  Floor c = floor_of({{"flops", 1e9}, {"bytes_min", 0}, {"dtype", "float32"}});
  EXPECT_FALSE(c.arithmetic_intensity);
}

// CUB's inclusive sum (examples/corpus/cub_inclusive_sum): n int32 additions, 8 bytes each. No integer ALU ceiling is
// measured, so the additions are left out of the compute floor and said so; the memory floor places the scan. Before
// this the run stopped at the roofline gate ("unknown dtype 'int32'") with no candidate (H200, 2026-12-06).
TEST(Floor, IntegerOperationsWithoutACeilingAreLeftOutAndNamed) {
  const double n = 1 << 24;
  Floor f = floor_of({{"flops", n}, {"bytes_read_min", 4 * n}, {"bytes_written_min", 4 * n}, {"dtype", "int32"}});
  EXPECT_TRUE(f.terms.empty());
  EXPECT_DOUBLE_EQ(f.compute_floor_ms, 0);
  EXPECT_EQ(f.binding, Axis::kMemory);
  EXPECT_GT(f.memory_floor_ms, 0);
  EXPECT_DOUBLE_EQ(f.flops, n);
  ASSERT_EQ(f.unmodelled.size(), 1u);
  EXPECT_NE(f.unmodelled[0].find("int32: 1.678e+07 operations not in the compute floor"), std::string::npos) << f.unmodelled[0];
  // Beside a modelled dtype, that one's term stays.
  Floor g = floor_of({{"flops", {{"float32", 6e10}, {"uint64", 1e12}}}, {"bytes_min", 1}});
  ASSERT_EQ(g.terms.size(), 1u);
  EXPECT_EQ(g.terms[0].dtype, "float32");
  EXPECT_NEAR(g.compute_floor_ms, 1.0, 1e-12);
  EXPECT_EQ(g.unmodelled.size(), 1u);
  for (const char* d : {"int16", "int32", "torch.int64", "uint32", "bool"}) EXPECT_TRUE(unmodelled_integer_dtype(d)) << d;
  for (const char* d : {"int8", "uint8", "float32", "complex64"}) EXPECT_FALSE(unmodelled_integer_dtype(d)) << d;
  EXPECT_NE(roof_for_dtype("complex64").error().message.find("counted in bytes only"), std::string::npos);
}

TEST(Floor, AMissingCeilingIsNamed) {
  Ceilings c = testing::round_ceilings();
  c.roofs.erase(Roof::kFp8Tensor);
  auto m = parse_workload_model({{"flops", 1e12}, {"bytes_min", 1}, {"dtype", "float8_e4m3fn"}});
  auto f = compute_floor(c, *m, {});
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().message.find("no fp8_tensor ceiling"), std::string::npos);
  c = testing::round_ceilings();
  c.roofs.erase(Roof::kDramCopy);
  c.roofs.erase(Roof::kDramRead);
  EXPECT_NE(compute_floor(c, *m, {}).error().message.find("no DRAM bandwidth ceiling"), std::string::npos);
  WorkloadModel neg;
  neg.flops_by_dtype["float32"] = -1;
  neg.bytes_min = 8;
  EXPECT_NE(compute_floor(testing::round_ceilings(), neg, {}).error().message.find(">= 0"), std::string::npos);
}

TEST(Efficiency, NearPeakAtTheThresholdInclusive) {
  Floor f;
  f.floor_ms = 1.0;
  f.flops = 1e12;
  f.bytes_min = 4e9;
  auto at = assess(f, {1.25, 0.01});
  ASSERT_TRUE(at);
  EXPECT_DOUBLE_EQ(at->efficiency, 0.8);
  EXPECT_TRUE(at->near_peak);
  EXPECT_NEAR(at->achieved_tflops, 800, 1e-9);
  EXPECT_NEAR(at->achieved_gbps, 3200, 1e-9);
  auto below = assess(f, {1.26, 0.01});
  EXPECT_FALSE(below->near_peak);
  EXPECT_FALSE(below->below_floor);
  auto custom = assess(f, {1.26, 0.01}, 0.7);
  EXPECT_TRUE(custom->near_peak);
}

TEST(Efficiency, BelowTheFloorBeyondTheNoiseIsFlaggedNeverCelebrated) {
  Floor f;
  f.floor_ms = 1.0;
  f.flops = 1;
  // The floor at ceilings kCeilingMargin (10%) faster: 1 / 1.1 = 0.9091 ms.
  auto at_roof = assess(f, {0.95, 0});  // 105% of the floor's efficiency: within the ceilings' margin
  EXPECT_FALSE(at_roof->below_floor);
  EXPECT_TRUE(at_roof->near_peak);
  EXPECT_GT(at_roof->efficiency, 1.0);
  auto edge = assess(f, {0.9091, 0});  // just at 110%
  EXPECT_FALSE(edge->below_floor);
  auto within = assess(f, {0.86, 0.06});  // 0.049 ms under 0.9091, noise 0.06: fine
  EXPECT_FALSE(within->below_floor);
  EXPECT_TRUE(within->near_peak);
  auto beyond = assess(f, {0.86, 0.04});  // 0.049 ms under 0.9091, noise 0.04: impossible
  EXPECT_TRUE(beyond->below_floor);
  EXPECT_FALSE(beyond->near_peak);
  auto no_noise = assess(f, {0.9, 0});  // 111%
  EXPECT_TRUE(no_noise->below_floor);
}

TEST(Efficiency, RejectsZeroNegativeAndNonFiniteInputs) {
  Floor f;
  f.floor_ms = 1.0;
  EXPECT_NE(assess(f, {0, 0}).error().message.find("must be > 0 ms, got 0"), std::string::npos);
  EXPECT_NE(assess(f, {-1, 0}).error().message.find("got -1"), std::string::npos);
  EXPECT_FALSE(assess(f, {std::numeric_limits<double>::quiet_NaN(), 0}));
  EXPECT_NE(assess(f, {1, -0.1}).error().message.find("noise must be >= 0"), std::string::npos);
  EXPECT_NE(assess(f, {1, 0}, 0).error().message.find("near-peak threshold"), std::string::npos);
  EXPECT_NE(assess(f, {1, 0}, 1.5).error().message.find("near-peak threshold"), std::string::npos);
  Floor empty;
  EXPECT_NE(assess(empty, {1, 0}).error().message.find("no work"), std::string::npos);
  EXPECT_EQ(assess(empty, {1, 0}).error().code, ExitCode::kInput);
}

}  // namespace kopt::roofline
