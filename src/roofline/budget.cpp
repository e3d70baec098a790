#include "roofline/budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace kopt::roofline {

Status validate(const BudgetOptions& o) {
  if (o.total < 0) return input_error(fmt::format("the method budget must be >= 0, got {}", o.total));
  if (o.max_per_axis < 0) return input_error(fmt::format("the methods per axis must be >= 0, got {}", o.max_per_axis));
  auto frac = [](double v) { return std::isfinite(v) && v > 0 && v <= 1; };
  if (!frac(o.saturated) || !frac(o.latency_bound_below))
    return input_error("budget thresholds (saturated, latency_bound_below) must be in (0, 1]");
  if (!(std::isfinite(o.traffic_excess) && o.traffic_excess >= 1))
    return input_error(fmt::format("traffic_excess must be >= 1, got {}", o.traffic_excess));
  if (!(std::isfinite(o.min_weight) && o.min_weight >= 0)) return input_error("min_weight must be >= 0");
  return ok_status();
}

std::map<Axis, int> allocate(const std::map<Axis, double>& weights, int total, int max_per_axis, double min_weight) {
  std::map<Axis, int> n;
  for (Axis a : kAllAxes) n[a] = 0;
  for (int i = 0; i < total; ++i) {
    std::optional<Axis> best;
    double best_q = 0;
    for (Axis a : kAllAxes) {
      auto it = weights.find(a);
      double w = it == weights.end() ? 0 : it->second;
      if (w < min_weight || w <= 0 || n[a] >= max_per_axis) continue;
      double q = w / (n[a] + 1);
      if (!best || q > best_q) {
        best = a;
        best_q = q;
      }
    }
    if (!best) break;
    ++n[*best];
  }
  return n;
}

Result<BudgetSplit> split_budget(const BudgetInput& in, const BudgetOptions& o) {
  KOPT_TRY(validate(o));
  BudgetSplit s;
  for (Axis a : kAllAxes) s.weights[a] = 0;
  auto raise = [&](Axis a, double w, std::string why) {
    w = std::clamp(w, 0.0, 1.0);
    if (w > s.weights[a]) s.weights[a] = w;
    s.reasons.push_back(fmt::format("{} {:.2f}: {}", axis_name(a), w, why));
  };
  if (in.below_floor) {
    s.reasons.push_back("no methods: the time is below the floor, fix the measurement (or the model) first");
  } else if (in.near_peak) {
    s.reasons.push_back("no methods: the kernel is near peak, no axis can shorten it by much");
  } else if (!in.bound) {
    s.reasons.push_back("no methods: the bound is unknown (profile with ncu or give a workload model)");
  } else {
    const Utilisation& u = in.util;
    const Axis b = *in.bound;
    std::optional<double> excess;
    if (u.dram_bytes && in.bytes_min && *in.bytes_min > 0) excess = *u.dram_bytes / *in.bytes_min;
    if (b == Axis::kMemory) {
      const double um = u.memory.value_or(0);
      if (excess && *excess >= o.traffic_excess)
        raise(Axis::kMemory, 1 - 1 / *excess,
              fmt::format("moves {:.2f}x bytes_min: traffic-reduction methods (reuse, fusion, caching)", *excess));
      if (um < o.saturated && in.gaps.memory)
        raise(Axis::kMemory, *in.gaps.memory,
              fmt::format("memory-bound at {:.0f}% of peak: access-pattern methods (coalescing, vector width)", um * 100));
      // The memory-pipe figure is the busiest memory unit's. Saturated with DRAM well below its own peak, the
      // busy unit is on chip (L1 / shared memory wavefronts, L2): the access pattern, not the traffic, limits.
      const bool dram_idle = u.dram && *u.dram < o.saturated;
      if (um >= o.saturated && dram_idle)
        raise(Axis::kMemory, in.efficiency ? 1 - *in.efficiency : 1 - *u.dram,
              fmt::format("memory pipes at {:.0f}% of peak while DRAM is at {:.0f}%: an on-chip unit (L1 / shared "
                          "memory, L2) limits: access-pattern methods (bank conflicts, vector width, fewer "
                          "wavefronts)", um * 100, *u.dram * 100));
      if (um >= o.saturated && !excess && !dram_idle)
        raise(Axis::kMemory, 0.25, "memory saturated, traffic versus bytes_min unknown: traffic reduction may help");
      if (um >= o.saturated && excess && *excess < o.traffic_excess && !dram_idle)
        s.reasons.push_back(fmt::format("memory: saturated while moving {:.2f}x bytes_min, nothing to gain", *excess));
      if (in.efficiency && !excess)
        raise(Axis::kMemory, 1 - *in.efficiency,
              fmt::format("memory-bound at {:.0f}% of the floor", *in.efficiency * 100));
    } else if (b == Axis::kCompute) {
      const double uc = u.compute.value_or(0);
      if (in.efficiency)
        raise(Axis::kCompute, 1 - *in.efficiency,
              fmt::format("compute-bound at {:.0f}% of the floor: faster or fewer instructions", *in.efficiency * 100));
      if (uc < o.saturated && in.gaps.compute)
        raise(Axis::kCompute, *in.gaps.compute, fmt::format("compute-bound at {:.0f}% of peak", uc * 100));
      if (uc >= o.saturated && !in.efficiency)
        raise(Axis::kCompute, 0.25, "compute pipes saturated: fewer or cheaper instructions may help");
    } else {
      const double w = in.gaps.latency ? *in.gaps.latency
                                       : 1 - std::max(u.compute.value_or(0), u.memory.value_or(0));
      raise(Axis::kLatency, w, "latency-bound (no throughput near its peak): occupancy, ILP, more work in flight");
    }
    // A compute- or memory-bound axis below saturation with idle issue slots: hiding latency lifts it.
    if (b != Axis::kLatency && in.gaps.latency) {
      const double ub = (b == Axis::kMemory ? u.memory : u.compute).value_or(0);
      if (ub < o.saturated)
        raise(Axis::kLatency, *in.gaps.latency * (o.saturated - ub) / o.saturated,
              fmt::format("issue slots {:.0f}% idle while {} is below saturation: latency hiding",
                          *in.gaps.latency * 100, axis_name(b)));
    }
  }
  s.methods = allocate(s.weights, o.total, o.max_per_axis, o.min_weight);
  return s;
}

Result<std::map<Axis, int>> method_budget(const BudgetInput& in, const BudgetOptions& o) {
  KOPT_TRY_ASSIGN(BudgetSplit s, split_budget(in, o));
  return s.methods;
}

}  // namespace kopt::roofline
