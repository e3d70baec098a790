#pragma once
// Which metrics a chip has: `ncu --query-metrics --chip gh100` lists base metric names (one a line, with a
// description column in ncu's full output). kopt checks every metric it requests against that list, so a
// metric that does not exist is reported as missing, never dropped or read as 0.
#include <set>
#include <string>
#include <vector>

namespace kopt::profile {

// The base names listed (first token of each line that looks like "unit__counter"); headers, separators
// and descriptions are skipped.
std::set<std::string> parse_query_metrics(const std::string& text);

// "sm__throughput.avg.pct_of_peak_sustained_elapsed" -> "sm__throughput";
// "lts__t_sector_hit_rate.pct" -> "lts__t_sector_hit_rate".
std::string metric_base_name(const std::string& metric);

// Launch, device, profiler and derived metrics ("launch__registers_per_thread", "derived__...") are not
// hardware counters and --query-metrics does not list them: they are checked in the report only.
bool listed_by_query_metrics(const std::string& metric);

// The --chip name of a compute capability that only one chip has (7.0 gv100, 8.0 ga100, 9.0 gh100); empty
// otherwise (the metrics are then not checked with --query-metrics, and the summary says so).
std::string chip_for_compute_capability(int major, int minor);

struct MetricCheck {
  std::vector<std::string> available;  // listed by the chip
  std::vector<std::string> missing;    // hardware metric the chip does not list
  std::vector<std::string> unchecked;  // not a hardware counter (see listed_by_query_metrics)
};
MetricCheck check_metrics(const std::vector<std::string>& requested, const std::set<std::string>& chip_metrics);

}  // namespace kopt::profile
