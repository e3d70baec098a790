#include "profile/classify.h"

#include <fmt/format.h>

namespace kopt::profile {

namespace {
std::string opt_pct(const std::optional<double>& v) { return v ? fmt::format("{:.1f} %", *v) : "unknown"; }
}  // namespace

Classification classify(const Pass1Evidence& e) {
  Classification c;
  if (!e.compute_sol_pct || !e.memory_sol_pct) {
    c.binding = {Axis::kCompute, Axis::kMemory, Axis::kLatency};
    c.reason = "speed-of-light throughput unknown (compute " + opt_pct(e.compute_sol_pct) + ", memory " +
               opt_pct(e.memory_sol_pct) + "): every axis is profiled";
    return c;
  }
  c.known = true;
  const double C = *e.compute_sol_pct, M = *e.memory_sol_pct;
  const bool compute_busy = C >= kBusySolPct, memory_busy = M >= kBusySolPct;
  std::string numbers = fmt::format("SOL compute {:.1f} %, memory {:.1f} %, achieved occupancy {}, issue active {}",
                                    C, M, opt_pct(e.achieved_occupancy_pct), opt_pct(e.issue_active_pct));
  if (compute_busy && memory_busy) {
    c.binding = C >= M ? std::vector<Axis>{Axis::kCompute, Axis::kMemory} : std::vector<Axis>{Axis::kMemory, Axis::kCompute};
    c.reason = fmt::format("both units are busy (>= {:.0f} %): {}", kBusySolPct, numbers);
  } else if (compute_busy || memory_busy) {
    c.binding = {compute_busy ? Axis::kCompute : Axis::kMemory};
    c.reason = fmt::format("{} is busy (>= {:.0f} %): {}", compute_busy ? "compute" : "memory", kBusySolPct, numbers);
  } else {
    c.binding = {Axis::kLatency};
    if (C - M >= kLeadPoints) c.binding.push_back(Axis::kCompute);
    if (M - C >= kLeadPoints) c.binding.push_back(Axis::kMemory);
    c.reason = fmt::format("neither unit reaches {:.0f} % of its peak, so latency binds{}: {}", kBusySolPct,
                           c.binding.size() > 1 ? fmt::format(", then {} (leads by >= {:.0f} points)",
                                                              axis_name(c.binding[1]), kLeadPoints)
                                                : std::string(),
                           numbers);
  }
  return c;
}

}  // namespace kopt::profile
