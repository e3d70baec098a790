#include "roofline/speed_of_light.h"

#include <gtest/gtest.h>

#include "roofline/testing.h"

namespace kopt::roofline {

namespace {
WorkloadModel sgemm(double n) {
  WorkloadModel m;
  m.flops_by_dtype["float32"] = 2 * n * n * n;
  m.bytes_read_min = 4 * 2 * n * n;
  m.bytes_written_min = 4 * n * n;
  m.bytes_min = *m.bytes_read_min + *m.bytes_written_min;
  return m;
}
constexpr long long kL2 = 50ll << 20;
}  // namespace

// The memoising SGEMM of issue 40 read 0.062 ms at 4096^3 ("2.22 PFLOP/s"): beyond even the TF32 tensor roof.
TEST(SpeedOfLight, AMemoisedSgemmIsImpossibleAndAnHonestOneIsNot) {
  Ceilings c = testing::round_ceilings();  // fp32 60, tf32 400 TFLOP/s; DRAM 4000 GB/s
  auto s = speed_of_light(c, sgemm(4096), {"float32", "float32", "float32"}, kL2, false);
  ASSERT_TRUE(s.ok()) << s.error().message;
  // float32 FLOPs may run on the TF32 tensor cores: the floor uses the faster roof, not the FMA one.
  EXPECT_NEAR(s->compute_ms, 2.0 * 4096 * 4096 * 4096 / 400e12 * 1e3, 1e-9);
  EXPECT_NE(s->compute_roof.find("tf32_tensor 400.0 TFLOP/s (measured)"), std::string::npos) << s->compute_roof;
  EXPECT_TRUE(s->binding_compute());
  auto v = below_speed_of_light(*s, 0.062);
  ASSERT_TRUE(v.has_value());
  EXPECT_NE(v->find("0.0620 ms is below the speed-of-light floor 0.3436 ms"), std::string::npos) << *v;
  EXPECT_NE(v->find("5.5x faster than this GPU can run it"), std::string::npos) << *v;
  EXPECT_FALSE(below_speed_of_light(*s, 3.0)) << "a plain FMA SGEMM";
  EXPECT_FALSE(below_speed_of_light(*s, 0.40)) << "a TF32 GEMM near the measured roof";
  EXPECT_FALSE(below_speed_of_light(*s, 0.3436 * 0.91)) << "inside the margin: the ceilings are kopt's own measurements";
  EXPECT_TRUE(below_speed_of_light(*s, 0.3436 * 0.89));
}

// An int32 scan: no integer ALU ceiling, so only its bytes bound it (before: "unknown dtype 'int32'" at gate 2).
TEST(SpeedOfLight, IntegerOperationsBoundNothingTheirBytesDo) {
  Ceilings c = testing::round_ceilings();
  WorkloadModel m;
  const double n = 1 << 24;
  m.flops_by_dtype["int32"] = n;
  m.bytes_read_min = 4 * n;
  m.bytes_written_min = 4 * n;
  m.bytes_min = 8 * n;
  auto s = speed_of_light(c, m, {"int32", "int32"}, kL2, false);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_DOUBLE_EQ(s->compute_ms, 0);
  EXPECT_GT(s->memory_ms, 0);
  EXPECT_FALSE(s->binding_compute());
}

// Reads must come from DRAM after the flush; written lines may still be in the L2 when the kernel ends, and the
// floor takes the fastest DRAM rate of any mix.
TEST(SpeedOfLight, MemoryCountsReadsAndTheWritesTheL2CannotHold) {
  Ceilings c = testing::round_ceilings();
  c.roofs[Roof::kDramWrite] = testing::measured(4200);
  WorkloadModel m;
  m.flops_by_dtype[""] = 2.0 * (16 << 20);
  m.bytes_read_min = 4.0 * (16 << 20);
  m.bytes_written_min = 4.0 * (16 << 20);
  m.bytes_min = *m.bytes_read_min + *m.bytes_written_min;
  auto s = speed_of_light(c, m, {"float32", "float32"}, kL2, false);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_DOUBLE_EQ(s->bytes, 4.0 * (16 << 20) + (4.0 * (16 << 20) - kL2));
  EXPECT_NEAR(s->memory_ms, s->bytes / 4200e9 * 1e3, 1e-12);
  EXPECT_NE(s->memory_roof.find("dram_write 4200"), std::string::npos) << s->memory_roof;
  EXPECT_FALSE(s->binding_compute());
  // Small outputs: all of them may stay in the L2.
  m.bytes_written_min = 1 << 20;
  m.bytes_min = *m.bytes_read_min + *m.bytes_written_min;
  s = speed_of_light(c, m, {"float32"}, kL2, false);
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->bytes, 4.0 * (16 << 20));
  // Without the split, everything beyond the L2's size.
  WorkloadModel t;
  t.flops_by_dtype[""] = 0;
  t.bytes_min = 200e6;
  s = speed_of_light(c, t, {"float32"}, kL2, false);
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->bytes, 200e6 - kL2);
  // A warm L2: every byte at the L2's rate.
  s = speed_of_light(c, t, {"float32"}, kL2, true);
  ASSERT_TRUE(s.ok());
  EXPECT_NEAR(s->memory_ms, 200e6 / 10000e9 * 1e3, 1e-12);
  EXPECT_NE(s->memory_roof.find("l2_read"), std::string::npos);
}

TEST(SpeedOfLight, SixteenBitFlopsTakeEitherTensorRoofAndFloat64TheDmmaOne) {
  Ceilings c = testing::round_ceilings();
  c.roofs[Roof::kBf16Tensor] = testing::measured(900);
  WorkloadModel m;
  m.flops_by_dtype["float16"] = 1e12;
  m.bytes_min = 0;
  auto s = speed_of_light(c, m, {"float16"}, kL2, false);
  ASSERT_TRUE(s.ok());
  EXPECT_NE(s->compute_roof.find("bf16_tensor 900.0"), std::string::npos) << s->compute_roof;
  m.flops_by_dtype.clear();
  m.flops_by_dtype["float64"] = 1e12;
  s = speed_of_light(c, m, {"float64"}, kL2, false);
  ASSERT_TRUE(s.ok());
  EXPECT_NE(s->compute_roof.find("fp64_tensor 60.0 TFLOP/s (datasheet)"), std::string::npos) << s->compute_roof;
}

TEST(SpeedOfLight, MissingCeilingsAreNamedAndNothingIsBelowAnEmptyFloor) {
  Ceilings c = testing::round_ceilings();
  c.roofs.erase(Roof::kFp32Fma);
  c.roofs.erase(Roof::kTf32Tensor);
  auto s = speed_of_light(c, sgemm(64), {"float32"}, kL2, false);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("fp32_fma"), std::string::npos) << s.error().message;
  c = testing::round_ceilings();
  c.roofs.erase(Roof::kL2Read);
  WorkloadModel t;
  t.bytes_min = 1e6;
  EXPECT_FALSE(speed_of_light(c, t, {"float32"}, kL2, true).ok());
  SpeedOfLight zero;
  EXPECT_FALSE(below_speed_of_light(zero, 1e-9));
  auto small = speed_of_light(testing::round_ceilings(), t, {"float32"}, kL2, false);  // fits in the L2: no floor
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->floor_ms, 0);
  EXPECT_FALSE(below_speed_of_light(*small, 1e-6));
}

}  // namespace kopt::roofline
