#include "pipeline/placement.h"

#include <gtest/gtest.h>

namespace kopt::pipeline {

TEST(NcuUnits, ToBaseUnits) {
  EXPECT_DOUBLE_EQ(ncu_to_base_units(2.314896, "Tbyte/s"), 2.314896e12);
  EXPECT_DOUBLE_EQ(ncu_to_base_units(48.2, "Gbyte/s"), 48.2e9);
  EXPECT_DOUBLE_EQ(ncu_to_base_units(3, "Mbyte"), 3e6);
  EXPECT_DOUBLE_EQ(ncu_to_base_units(7, "byte"), 7);
  EXPECT_DOUBLE_EQ(ncu_to_base_units(49.76, "us"), 49760);
  EXPECT_DOUBLE_EQ(ncu_to_base_units(1.98, "Ghz"), 1.98e9);
  EXPECT_DOUBLE_EQ(ncu_to_base_units(48.16, "%"), 48.16);
  EXPECT_DOUBLE_EQ(ncu_to_base_units(5, "cycle"), 5);
}

}  // namespace kopt::pipeline

#include "roofline/testing.h"

namespace kopt::pipeline {

namespace {
util::Json manifest(double in_bytes, double out_bytes) {
  return {{"buffers", {{{"name", "a"}, {"role", "input"}, {"nbytes", in_bytes}}, {{"name", "c"}, {"role", "output"}, {"nbytes", out_bytes}}}},
          {"workload_model", {{"flops", 1e6}, {"bytes_min", in_bytes + out_bytes}, {"dtype", "float32"}}}};
}
}  // namespace

TEST(Placement, TheFloorUsesTheHighestDramMeasurementWhateverTheTraffic) {
  // Seen on the H200 (2026-11-30): a Triton softmax (half its bytes written) moved 4.02 TB/s, above the copy
  // probe's 3.92 TB/s, so the copy rate is no lower bound on time for kernels that write.
  roofline::Ceilings c = roofline::testing::round_ceilings();
  c.roofs[roofline::Roof::kDramCopy] = roofline::testing::measured(3900);
  c.roofs[roofline::Roof::kDramRead] = roofline::testing::measured(4600);
  runner::TimingStats t;
  t.median_ms = 1.0;
  t.ci95_low_ms = 0.99;
  t.ci95_high_ms = 1.01;
  for (double out_bytes : {1e9, 4.0}) {
    auto r = place(c, manifest(2e9, out_bytes), {"float32", "float32"}, t, {}, "k");
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_TRUE(r->floor);
    EXPECT_NEAR(r->floor->memory_floor_ms, (2e9 + out_bytes) / 4600e9 * 1e3, 1e-9);
  }
}

}  // namespace kopt::pipeline
