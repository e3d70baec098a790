#pragma once
// Utilisation of the three axes, the axis gaps (Δc, Δm, Δl) and the bound (the resource nearest saturation).
// Inputs are Nsight Compute metrics keyed by their real names (ncu 2025.3.1), values in ncu's base units
// (percentages for *.pct_of_peak_*, bytes for dram__bytes*). A missing metric is unknown, never 0 or 1.
// Formulas and thresholds: docs/ROOFLINE.md.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/axis.h"
#include "core/result.h"

namespace kopt::roofline {

namespace ncu {
inline constexpr const char* kSmThroughput = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kTensorPipe = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kMemThroughput = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kDramThroughput = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kWarpsActive = "sm__warps_active.avg.pct_of_peak_sustained_active";
// Issue activity, in order of preference (the first present is used).
inline constexpr const char* kIssueActive = "smsp__issue_active.avg.pct_of_peak_sustained_active";
inline constexpr const char* kInstIssued = "sm__inst_issued.avg.pct_of_peak_sustained_active";
inline constexpr const char* kIssueActivePerCycle = "smsp__issue_active.avg.per_cycle_active";  // a fraction
inline constexpr const char* kSmIssueActive = "sm__issue_active.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kDramBytes = "dram__bytes.sum";
inline constexpr const char* kDramBytesRead = "dram__bytes_read.sum";
inline constexpr const char* kDramBytesWrite = "dram__bytes_write.sum";
inline constexpr const char* kDramBytesPerSecond = "dram__bytes.sum.per_second";
inline constexpr const char* kDuration = "gpu__time_duration.sum";  // ns
// Stall reasons: smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio
inline constexpr const char* kStallPrefix = "smsp__average_warps_issue_stalled_";
inline constexpr const char* kStallSuffix = "_per_issue_active.ratio";
}  // namespace ncu

// Fractions of peak in [0, 1]; nullopt = unknown.
struct Utilisation {
  std::optional<double> compute;    // U_c: the busiest SM unit (SOL "Compute (SM) Throughput")
  std::optional<double> memory;     // U_m: the busiest memory unit (SOL "Memory Throughput", DRAM included)
  std::optional<double> dram;       // DRAM alone: achieved / the measured DRAM ceiling, else ncu's DRAM %
  std::optional<double> issue;      // U_l: the fraction of cycles a scheduler issued an instruction
  std::optional<double> occupancy;  // achieved warps / the SM's maximum
  std::optional<double> dram_bytes;  // DRAM traffic measured by ncu (bytes read + written)
  std::optional<std::string> top_stall;  // the largest stall reason ("long_scoreboard"), evidence only
  std::optional<double> top_stall_ratio;  // its warps stalled per issued instruction
  std::map<std::string, std::string> sources;  // field -> the metric (or "workload model") it came from
  std::vector<std::string> ignored;  // metrics with impossible values, treated as missing (why, in words)
};

// Reads the metrics kopt knows from a name -> value map. A negative or non-finite value, or a percentage
// above 110, is impossible: that metric is treated as missing (unknown, never 0 or 1) and listed in `ignored`
// (ncu reports such values for some max-over-units percentages, e.g. smsp__issue_inst0.max.pct... at 413%
// on the H200); the run goes on. With `dram_ceiling_gbps` (the roofline's DRAM ceiling), the DRAM
// utilisation is the achieved bandwidth (dram__bytes.sum.per_second, or dram bytes / gpu__time_duration)
// over that ceiling rather than over the theoretical peak ncu uses, which no kernel reaches.
Result<Utilisation> utilisation_from_ncu(const std::map<std::string, double>& metrics,
                                         std::optional<double> dram_ceiling_gbps = std::nullopt);

struct Gaps {
  std::optional<double> compute;  // Δc = 1 - U_c
  std::optional<double> memory;   // Δm = 1 - U_m
  std::optional<double> latency;  // Δl = 1 - issue activity
};
Gaps axis_gaps(const Utilisation& u);

inline constexpr double kLatencyBoundBelow = 0.60;  // neither throughput above 60% of peak: latency-bound
// The bound: the resource nearest saturation, max(U_c, U_m) (memory on a tie); latency when both are below
// `latency_bound_below`. Nullopt when U_c or U_m is unknown.
std::optional<Axis> bound_axis(const Utilisation& u, double latency_bound_below = kLatencyBoundBelow);

}  // namespace kopt::roofline
