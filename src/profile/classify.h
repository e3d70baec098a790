#pragma once
// Which axes bind a kernel, from pass-1 evidence (speed-of-light throughput, occupancy, issue activity).
#include <optional>
#include <string>
#include <vector>

#include "core/axis.h"

namespace kopt::profile {

struct Pass1Evidence {
  std::optional<double> compute_sol_pct;         // sm__throughput (SOL compute)
  std::optional<double> memory_sol_pct;          // gpu__compute_memory_throughput (SOL memory)
  std::optional<double> achieved_occupancy_pct;  // sm__warps_active.avg.pct_of_peak_sustained_active
  std::optional<double> issue_active_pct;        // sm__issue_active.avg.pct_of_peak_sustained_elapsed
};

// Thresholds (Nsight Compute's own SOLBottleneck rule uses the same 60 % "busy" and 10-point "more heavily
// utilized" figures): a unit at >= 60 % of its peak binds; when neither does, latency binds (the kernel
// cannot keep the units busy), and a unit that leads the other by >= 10 points binds after it.
inline constexpr double kBusySolPct = 60.0;
inline constexpr double kLeadPoints = 10.0;

struct Classification {
  std::vector<Axis> binding;  // primary first; never empty
  bool known = false;         // false: SOL values unknown, every axis is listed
  std::string reason;         // one sentence with the numbers
};

Classification classify(const Pass1Evidence& e);

}  // namespace kopt::profile
