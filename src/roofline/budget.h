#pragma once
// The per-iteration method budget over the compute / memory / latency axes: methods go where they can shorten
// the time. Pure; the rules are in docs/ROOFLINE.md ("The method budget").
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/axis.h"
#include "core/result.h"
#include "roofline/gaps.h"

namespace kopt::roofline {

struct BudgetOptions {
  int total = 3;                  // methods per iteration, over all axes
  int max_per_axis = 2;
  double saturated = 0.80;        // a utilisation at or above this is saturated
  double traffic_excess = 1.25;   // dram bytes / bytes_min at or above this: avoidable traffic
  double latency_bound_below = kLatencyBoundBelow;
  double min_weight = 0.05;       // an axis whose weight is below this gets nothing
};
Status validate(const BudgetOptions& o);

struct BudgetInput {
  std::optional<Axis> bound;        // from bound_axis()
  Utilisation util;                 // U_c, U_m, issue, dram bytes (ncu or workload model)
  Gaps gaps;
  bool near_peak = false;           // workload-model mode only
  bool below_floor = false;         // workload-model mode only
  std::optional<double> efficiency;  // workload-model mode only
  std::optional<double> bytes_min;   // workload-model mode only
};

struct BudgetSplit {
  std::map<Axis, int> methods;      // every axis present, 0 where no method is expected to help
  std::map<Axis, double> weights;   // the share of the time a method on the axis could plausibly remove
  std::vector<std::string> reasons;  // one line per rule that fired
};
Result<BudgetSplit> split_budget(const BudgetInput& in, const BudgetOptions& o = {});
// The methods per axis alone.
Result<std::map<Axis, int>> method_budget(const BudgetInput& in, const BudgetOptions& o = {});

// Hands out `total` methods one at a time to the axis with the largest weight / (methods it has + 1)
// (D'Hondt), skipping axes below min_weight or at max_per_axis. Ties go to the earlier axis in kAllAxes.
std::map<Axis, int> allocate(const std::map<Axis, double>& weights, int total, int max_per_axis, double min_weight);

}  // namespace kopt::roofline
