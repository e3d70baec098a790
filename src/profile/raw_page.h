#pragma once
// The raw page of an Nsight Compute report (`ncu --import R.ncu-rep --csv --page raw`): one header row of
// metric names, one row of units, then one row per profiled kernel.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace kopt::profile {

// One metric of one kernel. `value` is empty when ncu printed no number ("n/a", "no data", a text value):
// unknown is never 0.
struct MetricValue {
  std::optional<double> value;
  std::string text;  // as printed
  std::string unit;  // from the units row ("%", "ns", "byte/s", "" for dimensionless)
};

struct KernelRecord {
  int id = -1;             // ncu's ID column: launch order within the report
  std::string name;        // "Kernel Name": demangled signature
  std::string block_size;  // "(256, 1, 1)"
  std::string grid_size;   // "(262144, 1, 1)"
  std::map<std::string, MetricValue> metrics;

  const MetricValue* find(const std::string& metric) const;
  std::optional<double> number(const std::string& metric) const;
};

struct RawPage {
  std::vector<std::string> metric_columns;  // every metric name in the header (present even when unknown)
  std::vector<KernelRecord> kernels;
  bool has_column(const std::string& metric) const;
};

// Errors (exit 3: a tool's output kopt cannot read) when there is no header or no units row. A header
// and units with no kernel rows is a valid, empty page: the gate reports it.
Result<RawPage> parse_raw_page(const std::string& text);

// Converts a duration to nanoseconds from the unit ncu printed ("ns", "nsecond", "us", "usecond", "ms",
// "msecond", "s", "second"); unknown for any other unit.
std::optional<double> to_nanoseconds(double value, const std::string& unit);
// gpu__time_duration.sum of a kernel, in ns.
std::optional<double> duration_ns(const KernelRecord& k);

}  // namespace kopt::profile
