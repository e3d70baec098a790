#include "runner/smem_fill.h"

#include <gtest/gtest.h>

namespace kopt::runner {

TEST(SmemFill, ThePatternIsOneHexWord) {
  EXPECT_EQ(parse_fill_pattern("0xffffffff"), 0xffffffffu);
  EXPECT_EQ(parse_fill_pattern("7F7F7F7F"), 0x7f7f7f7fu);
  EXPECT_EQ(parse_fill_pattern("0X0"), 0u);
  EXPECT_FALSE(parse_fill_pattern("").has_value());
  EXPECT_FALSE(parse_fill_pattern("0x").has_value());
  EXPECT_FALSE(parse_fill_pattern("0x1ffffffff").has_value()) << "more than 32 bits";
  EXPECT_FALSE(parse_fill_pattern("nan").has_value());
  EXPECT_FALSE(parse_fill_pattern("12 ").has_value());
}

}  // namespace kopt::runner
