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
