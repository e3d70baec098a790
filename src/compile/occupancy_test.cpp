#include "compile/occupancy.h"

#include <gtest/gtest.h>

namespace kopt::compile {
namespace {

// Known values of the CUDA occupancy calculator (cuda_occupancy.h's cudaOccMaxActiveBlocksPerMultiprocessor) for
// compute capability 9.0: 64K registers and 2048 threads per SM, 32 blocks, 228 KiB shared memory (1 KiB of each block
// reserved, 128-byte units), registers in 256-register units per warp over 4 sub-partitions.
struct Case {
  int threads, registers;
  long long shared_bytes;
  int blocks;
  double pct;
  OccupancyLimiter limiter;
  const char* text;
};

TEST(Occupancy, MatchesTheOccupancyCalculatorOnSm90) {
  const SmLimits sm = *sm_limits("sm_90a");
  const Case cases[] = {
      {256, 32, 0, 8, 100, OccupancyLimiter::kWarps, "100% (threads)"},
      {256, 64, 0, 4, 50, OccupancyLimiter::kRegisters, "50% (registers)"},
      {128, 128, 0, 4, 25, OccupancyLimiter::kRegisters, "25% (registers)"},
      {256, 66, 8448, 3, 37.5, OccupancyLimiter::kRegisters, "38% (registers)"},  // the recorded SGEMM's i1c1
      {128, 32, 49152, 4, 25, OccupancyLimiter::kSharedMemory, "25% (shared memory)"},
      {32, 16, 0, 32, 50, OccupancyLimiter::kBlocks, "50% (blocks per SM)"},
      {1024, 64, 0, 1, 50, OccupancyLimiter::kRegisters, "50% (registers)"},
      {96, 40, 0, 16, 75, OccupancyLimiter::kRegisters, "75% (registers)"},
      {1024, 255, 0, 0, 0, OccupancyLimiter::kRegisters, "0% (registers: the block cannot launch)"},
      {256, 32, 233 * 1024, 0, 0, OccupancyLimiter::kSharedMemory, "0% (shared memory: the block cannot launch)"},
      {512, 0, 0, 4, 100, OccupancyLimiter::kWarps, "100% (threads)"},
  };
  for (const Case& c : cases) {
    auto o = theoretical_occupancy(c.registers, c.shared_bytes, c.threads, sm);
    ASSERT_TRUE(o) << c.threads;
    EXPECT_EQ(o->blocks_per_sm, c.blocks) << c.threads << " threads, " << c.registers << " registers";
    EXPECT_DOUBLE_EQ(o->fraction * 100, c.pct) << c.threads << " threads, " << c.registers << " registers";
    EXPECT_EQ(o->limiter, c.limiter) << c.threads << " threads, " << c.registers << " registers";
    EXPECT_EQ(format_occupancy(*o), c.text);
  }
}

TEST(Occupancy, OtherArchitecturesAndAnUnknownBlock) {
  // sm_86: 1536 threads (48 warps) per SM, 16 blocks, 100 KiB shared memory.
  auto o = theoretical_occupancy(32, 0, 256, *sm_limits("sm_86"));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->blocks_per_sm, 6);
  EXPECT_DOUBLE_EQ(o->fraction, 1.0);
  auto small = theoretical_occupancy(16, 0, 32, *sm_limits("sm_86"));
  EXPECT_EQ(small->blocks_per_sm, 16);
  EXPECT_EQ(small->limiter, OccupancyLimiter::kBlocks);
  // sm_80: 164 KiB shared memory per SM: two blocks of 80 KiB.
  EXPECT_EQ(theoretical_occupancy(32, 80 * 1024, 128, *sm_limits("sm_80"))->blocks_per_sm, 2);
  EXPECT_FALSE(sm_limits("sm_999"));
  EXPECT_FALSE(theoretical_occupancy(32, 0, 0, *sm_limits("sm_90")));  // the block size is not known
  EXPECT_FALSE(theoretical_occupancy(32, 0, 2048, *sm_limits("sm_90")));
}

}  // namespace
}  // namespace kopt::compile
