#include "profile/rank.h"

#include <algorithm>

namespace kopt::profile {

std::optional<std::pair<std::string, double>> lookup_spec(const MetricSpec& spec, const MetricLookup& lookup) {
  if (auto v = lookup(spec.name)) return std::make_pair(spec.name, *v);
  for (const auto& a : spec.aliases)
    if (auto v = lookup(a)) return std::make_pair(a, *v);
  return std::nullopt;
}

std::optional<Axis> section_axis(const std::string& section) {
  if (section == "WarpStateStats" || section == "SchedulerStats" || section == "Occupancy" || section == "LaunchStats")
    return Axis::kLatency;
  if (section.starts_with("MemoryWorkloadAnalysis")) return Axis::kMemory;
  if (section == "ComputeWorkloadAnalysis" || section == "InstructionStats") return Axis::kCompute;
  return std::nullopt;  // SpeedOfLight weighs compute against memory: it speaks to both
}

std::vector<RankedMetric> rank_axis(Axis axis, const MetricLookup& lookup, int top_n,
                                    const std::vector<RuleResult>& rules) {
  std::vector<RankedMetric> out;
  for (const MetricSpec* spec : metrics_for_axis(axis)) {
    auto found = lookup_spec(*spec, lookup);
    if (!found) continue;
    double value = found->second;
    if (spec->skip_if_zero && value == 0) continue;
    double scale = spec->scale;
    if (!spec->scale_metric.empty()) {
      auto s = lookup(spec->scale_metric);
      if (!s) continue;
      scale = *s;
    }
    if (!(scale > 0)) continue;
    double gap = spec->direction == Direction::kHigherBetter ? spec->ideal - value : value - spec->ideal;
    double distance = std::clamp(gap / scale, 0.0, 1.0);
    if (distance <= 0) continue;
    RankedMetric r;
    r.spec = spec;
    r.name_used = found->first;
    r.value = value;
    r.scale = scale;
    r.distance = distance;
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const RankedMetric& a, const RankedMetric& b) { return a.distance > b.distance; });
  if (top_n >= 0 && static_cast<int>(out.size()) > top_n) out.resize(top_n);
  // Each actionable rule goes to the highest-ranked metric of its section, on that section's axis.
  std::vector<bool> used(rules.size(), false);
  for (auto& r : out)
    for (size_t i = 0; i < rules.size(); ++i) {
      const RuleResult& rule = rules[i];
      if (used[i] || rule.section != r.spec->section) continue;
      if (rule.type != RuleType::kOpt && rule.type != RuleType::kErr) continue;
      auto sa = section_axis(rule.section);
      if (sa && *sa != axis) continue;
      r.rules.push_back(rule);
      used[i] = true;
    }
  return out;
}

}  // namespace kopt::profile
