#include "profile/aggregate.h"

#include <set>

namespace kopt::profile {

std::string_view describe(AggregateMethod m) { return m == AggregateMethod::kSum ? "sum" : "time_weighted_mean"; }

AggregateMethod aggregate_method(const std::string& metric) {
  return metric.size() > 4 && metric.compare(metric.size() - 4, 4, ".sum") == 0 ? AggregateMethod::kSum
                                                                                : AggregateMethod::kTimeWeightedMean;
}

std::optional<double> Aggregate::number(const std::string& metric) const {
  auto it = metrics.find(metric);
  return it == metrics.end() ? std::nullopt : it->second.value;
}

Aggregate aggregate_kernels(const std::vector<KernelRecord>& kernels) {
  Aggregate agg;
  agg.kernels = static_cast<int>(kernels.size());
  std::vector<std::optional<double>> weights;
  double total = 0;
  for (const auto& k : kernels) {
    auto d = duration_ns(k);
    weights.push_back(d);
    if (d)
      total += *d;
    else
      ++agg.kernels_without_duration;
  }
  if (!kernels.empty() && agg.kernels_without_duration == 0) agg.total_duration_ns = total;

  std::set<std::string> names;
  for (const auto& k : kernels)
    for (const auto& [name, v] : k.metrics) names.insert(name);
  for (const auto& name : names) {
    AggregateValue out;
    out.method = aggregate_method(name);
    double weighted = 0, weight = 0, sum = 0;
    bool any = false, all = true;
    for (size_t i = 0; i < kernels.size(); ++i) {
      const MetricValue* v = kernels[i].find(name);
      if (v && out.unit.empty()) out.unit = v->unit;
      if (!v || !v->value) {
        all = false;
        continue;
      }
      any = true;
      sum += *v->value;
      if (weights[i]) {
        weighted += *v->value * *weights[i];
        weight += *weights[i];
      }
    }
    if (out.method == AggregateMethod::kSum) {
      // A sum over some kernels only would understate the call: unknown unless every kernel reported it.
      if (any && all) out.value = sum;
      out.time_coverage = (any && all) ? 1.0 : (total > 0 ? weight / total : 0.0);
    } else {
      if (weight > 0) out.value = weighted / weight;
      out.time_coverage = total > 0 ? weight / total : 0.0;
    }
    agg.metrics[name] = std::move(out);
  }
  return agg;
}

}  // namespace kopt::profile
