#pragma once
// Theoretical occupancy of a kernel from its ptxas resources and the launch's block size, as the CUDA occupancy
// calculator (cuda_occupancy.h) computes it: the resident blocks per SM are the fewest any one limit allows (warps,
// registers, shared memory, blocks), and occupancy is their warps over the SM's. Pure: values in, values out.
#include <optional>
#include <string>
#include <string_view>

namespace kopt::compile {

// One SM's limits for an architecture (the CUDA C Programming Guide's table of compute capabilities).
struct SmLimits {
  int max_threads_per_sm = 2048;
  int max_warps_per_sm = 64;
  int max_blocks_per_sm = 32;
  int registers_per_sm = 65536;
  int max_registers_per_thread = 255;
  int register_unit_per_warp = 256;      // a warp's registers are allocated in units of this many
  int register_sub_partitions = 4;       // registers are allocated per SM sub-partition (one scheduler each)
  int shared_bytes_per_sm = 228 * 1024;
  int max_shared_bytes_per_block = 227 * 1024;  // with the opt-in attribute; 48 KiB without
  int shared_unit_bytes = 128;                  // shared memory is allocated in units of this many bytes
  int reserved_shared_bytes_per_block = 1024;   // the system's share of each block (sm_80 on)
};

// sm_80, sm_86, sm_87, sm_89, sm_90 (a/f suffixes ignored); nullopt for an architecture kopt has no table for.
std::optional<SmLimits> sm_limits(std::string_view arch);

enum class OccupancyLimiter { kWarps, kRegisters, kSharedMemory, kBlocks };
std::string_view limiter_name(OccupancyLimiter l);  // "threads", "registers", "shared memory", "blocks per SM"

struct Occupancy {
  int blocks_per_sm = 0;     // 0: the block cannot launch (too many registers or too much shared memory)
  int warps_per_sm = 0;
  double fraction = 0;       // warps_per_sm / max_warps_per_sm
  OccupancyLimiter limiter = OccupancyLimiter::kWarps;  // the tightest limit (the first of the order above on a tie)
};

// threads_per_block 1..1024; shared_bytes_per_block static plus dynamic. nullopt when threads_per_block is out of
// range (the block size is not known).
std::optional<Occupancy> theoretical_occupancy(int registers_per_thread, long long shared_bytes_per_block,
                                               int threads_per_block, const SmLimits& sm);

// "50% (registers)", "0% (registers: the block cannot launch)".
std::string format_occupancy(const Occupancy& o);

}  // namespace kopt::compile
