#pragma once
// The metrics every profiled kernel must report (the gate requires them) and that the summary prints.
// Names are Nsight Compute 2025.3 names, checked against a real H200 report (tests/data/profile/).
#include <array>
#include <string_view>

namespace kopt::profile::metric {

inline constexpr std::string_view kDuration = "gpu__time_duration.sum";                        // SpeedOfLight
inline constexpr std::string_view kComputeSol = "sm__throughput.avg.pct_of_peak_sustained_elapsed";  // SpeedOfLight
inline constexpr std::string_view kMemorySol =
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";                           // SpeedOfLight
inline constexpr std::string_view kAchievedOccupancy = "sm__warps_active.avg.pct_of_peak_sustained_active";  // Occupancy
inline constexpr std::string_view kTheoreticalOccupancy = "sm__maximum_warps_per_active_cycle_pct";       // Occupancy
inline constexpr std::string_view kIssueActive = "sm__issue_active.avg.pct_of_peak_sustained_elapsed";    // SOL breakdown
inline constexpr std::string_view kRegisters = "launch__registers_per_thread";  // LaunchStats
inline constexpr std::string_view kGridSize = "launch__grid_size";              // LaunchStats
inline constexpr std::string_view kBlockSize = "launch__block_size";            // LaunchStats

// Required in every report, whatever the plan: pass 1 (SpeedOfLight, LaunchStats, Occupancy) collects them.
inline constexpr std::array<std::string_view, 7> kRequired = {kDuration,          kComputeSol, kMemorySol,
                                                              kAchievedOccupancy, kRegisters,  kGridSize,
                                                              kBlockSize};

}  // namespace kopt::profile::metric
