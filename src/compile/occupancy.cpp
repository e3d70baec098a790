#include "compile/occupancy.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace kopt::compile {

namespace {
int div_up(long long a, long long b) { return static_cast<int>((a + b - 1) / b); }
long long round_up(long long a, long long b) { return (a + b - 1) / b * b; }
}  // namespace

std::optional<SmLimits> sm_limits(std::string_view arch) {
  std::string a(arch);
  while (!a.empty() && !std::isdigit(static_cast<unsigned char>(a.back()))) a.pop_back();  // sm_90a -> sm_90
  SmLimits l;  // sm_80's defaults differ below
  if (a == "sm_90" || a == "sm_100" || a == "sm_103") return l;
  if (a == "sm_80" || a == "sm_87") {
    l.shared_bytes_per_sm = 164 * 1024;
    l.max_shared_bytes_per_block = 163 * 1024;
    return l;
  }
  if (a == "sm_86" || a == "sm_89") {
    l.max_threads_per_sm = 1536;
    l.max_warps_per_sm = 48;
    l.max_blocks_per_sm = a == "sm_86" ? 16 : 24;
    l.shared_bytes_per_sm = 100 * 1024;
    l.max_shared_bytes_per_block = 99 * 1024;
    return l;
  }
  return std::nullopt;
}

std::string_view limiter_name(OccupancyLimiter l) {
  switch (l) {
    case OccupancyLimiter::kWarps: return "threads";
    case OccupancyLimiter::kRegisters: return "registers";
    case OccupancyLimiter::kSharedMemory: return "shared memory";
    case OccupancyLimiter::kBlocks: return "blocks per SM";
  }
  return "?";
}

std::optional<Occupancy> theoretical_occupancy(int registers_per_thread, long long shared_bytes_per_block,
                                               int threads_per_block, const SmLimits& sm) {
  if (threads_per_block < 1 || threads_per_block > 1024 || registers_per_thread < 0 || shared_bytes_per_block < 0)
    return std::nullopt;
  const int warps = div_up(threads_per_block, 32);
  const int by_warps = std::min(sm.max_warps_per_sm / warps, sm.max_threads_per_sm / threads_per_block);
  // Registers (cudaOccMaxBlocksPerSMRegsLimit): per warp, rounded up to the allocation unit; each sub-partition holds
  // whole warps; a block whose warps (rounded up to the sub-partitions) need more than the SM's file cannot launch.
  constexpr int kNoLimit = 1 << 30;
  int by_regs = kNoLimit;
  if (registers_per_thread > 0) {
    const long long per_warp = round_up(static_cast<long long>(registers_per_thread) * 32, sm.register_unit_per_warp);
    const long long per_block = per_warp * round_up(warps, sm.register_sub_partitions);
    if (registers_per_thread > sm.max_registers_per_thread || per_block > sm.registers_per_sm) {
      by_regs = 0;
    } else {
      const long long warps_per_part = (sm.registers_per_sm / sm.register_sub_partitions) / per_warp;
      by_regs = static_cast<int>(warps_per_part * sm.register_sub_partitions / warps);
    }
  }
  // Shared memory (cudaOccMaxBlocksPerSMSmemLimit): the block's bytes plus the system's reserve, in allocation units.
  int by_smem = kNoLimit;
  if (shared_bytes_per_block > sm.max_shared_bytes_per_block) {
    by_smem = 0;
  } else {
    const long long per_block = round_up(shared_bytes_per_block + sm.reserved_shared_bytes_per_block, sm.shared_unit_bytes);
    if (per_block > 0) by_smem = static_cast<int>(sm.shared_bytes_per_sm / per_block);
  }
  const std::array<std::pair<int, OccupancyLimiter>, 4> limits = {{{by_warps, OccupancyLimiter::kWarps},
                                                                   {by_regs, OccupancyLimiter::kRegisters},
                                                                   {by_smem, OccupancyLimiter::kSharedMemory},
                                                                   {sm.max_blocks_per_sm, OccupancyLimiter::kBlocks}}};
  Occupancy o;
  o.blocks_per_sm = limits[0].first;
  o.limiter = limits[0].second;
  for (const auto& [blocks, why] : limits)
    if (blocks < o.blocks_per_sm) {
      o.blocks_per_sm = blocks;
      o.limiter = why;
    }
  o.warps_per_sm = o.blocks_per_sm * warps;
  o.fraction = static_cast<double>(o.warps_per_sm) / sm.max_warps_per_sm;
  return o;
}

std::string format_occupancy(const Occupancy& o) {
  if (o.blocks_per_sm == 0) return fmt::format("0% ({}: the block cannot launch)", limiter_name(o.limiter));
  return fmt::format("{:.0f}% ({})", o.fraction * 100, limiter_name(o.limiter));
}

}  // namespace kopt::compile
