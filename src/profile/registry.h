#pragma once
// The metric registry: the metrics kopt ranks per axis, with what "good" means for each. Data in code,
// one table (registry.cpp); `lint_registry` checks it and a test runs the lint.
#include <optional>
#include <string>
#include <vector>

#include "core/axis.h"

namespace kopt::profile {

enum class Direction { kHigherBetter, kLowerBetter };
std::string_view describe(Direction d);  // "higher_better" / "lower_better"

struct MetricSpec {
  std::string name;                  // canonical: the Nsight Compute 2025.3 name
  std::vector<std::string> aliases;  // the same quantity under other ncu versions' names
  std::string unit;                  // "%", "cycle", "warp", "thread", "byte/sector", "inst/cycle", ""
  Axis axis = Axis::kLatency;
  Direction direction = Direction::kHigherBetter;
  double ideal = 0;                  // the best value the metric can reach
  double scale = 0;                  // the gap that counts as "as far from ideal as it gets" (distance 1)
  std::string scale_metric;          // if set, the scale is this metric's value (e.g. total cycles per issue)
  bool skip_if_zero = false;         // a pipe that is not used at all is not a gap (tensor pipe in saxpy)
  std::string section;               // the ncu section that collects it and whose rules discuss it
  std::string description;
};

const std::vector<MetricSpec>& metric_registry();
const MetricSpec* find_metric(const std::string& name_or_alias);
std::vector<const MetricSpec*> metrics_for_axis(Axis a);

// Problems in the table (duplicate names or aliases, unknown unit or section, empty description, a scale
// that is neither positive nor a metric of the registry, an ideal outside 0..100 for a percentage).
std::vector<std::string> lint_registry(const std::vector<MetricSpec>& registry);

// Sections that may appear in a plan; lint checks each spec's section against it.
const std::vector<std::string>& known_sections();

}  // namespace kopt::profile
