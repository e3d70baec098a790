#pragma once
// One view of a call that launched several kernels: metrics combined across kernels, weighted by each
// kernel's duration (a kernel that ran 9x longer counts 9x more).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "profile/raw_page.h"

namespace kopt::profile {

enum class AggregateMethod { kSum, kTimeWeightedMean };
std::string_view describe(AggregateMethod m);  // "sum" / "time_weighted_mean"

// Extensive counts add up: a metric whose name ends in ".sum" (dram__bytes_read.sum, gpu__time_duration.sum)
// is summed. Every other metric (rates, percentages, ratios, averages) is a time-weighted mean.
AggregateMethod aggregate_method(const std::string& metric);

struct AggregateValue {
  std::optional<double> value;   // unknown when no kernel with a known duration reported a number
  std::string unit;
  AggregateMethod method = AggregateMethod::kTimeWeightedMean;
  double time_coverage = 0;      // share (0..1) of the call's kernel time whose kernels reported a number
};

struct Aggregate {
  std::optional<double> total_duration_ns;  // sum over kernels; unknown if any kernel's duration is unknown
  int kernels = 0;
  int kernels_without_duration = 0;         // excluded from weighted means (they cannot be weighted)
  std::map<std::string, AggregateValue> metrics;
  std::optional<double> number(const std::string& metric) const;
};

Aggregate aggregate_kernels(const std::vector<KernelRecord>& kernels);

}  // namespace kopt::profile
