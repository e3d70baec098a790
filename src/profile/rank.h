#pragma once
// Top metrics per axis, ranked by normalised distance from the ideal (docs/PROFILING.md, "Ranking").
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/axis.h"
#include "profile/details_page.h"
#include "profile/registry.h"

namespace kopt::profile {

struct RankedMetric {
  const MetricSpec* spec = nullptr;
  std::string name_used;   // the canonical name or the alias the report had
  double value = 0;
  double scale = 0;        // the scale that was applied
  double distance = 0;     // 0 (at ideal) .. 1 (as far as it gets)
  std::vector<RuleResult> rules;  // ncu's OPT/ERR rules of the metric's section (each rule on one metric)
};

// distance = clamp(gap / scale, 0, 1), gap = ideal - value (higher_better) or value - ideal (lower_better),
// scale = spec.scale or the value of spec.scale_metric. A metric is skipped when its value (or its scale
// metric's) is unknown, when the scale is not positive, when skip_if_zero and it is 0, or at distance 0.
// Sorted by distance, then registry order; at most top_n. Each OPT/ERR rule is attached to the
// highest-ranked metric of its section, when the section belongs to this axis (section_axis).
using MetricLookup = std::function<std::optional<double>(const std::string&)>;
std::vector<RankedMetric> rank_axis(Axis axis, const MetricLookup& lookup, int top_n,
                                    const std::vector<RuleResult>& rules = {});

// The axis a section's rules speak to: WarpStateStats, SchedulerStats, Occupancy, LaunchStats -> latency;
// MemoryWorkloadAnalysis* -> memory; ComputeWorkloadAnalysis, InstructionStats -> compute; else none (any).
std::optional<Axis> section_axis(const std::string& section);

// The value of a spec under its canonical name or, failing that, its first alias that has one.
std::optional<std::pair<std::string, double>> lookup_spec(const MetricSpec& spec, const MetricLookup& lookup);

}  // namespace kopt::profile
