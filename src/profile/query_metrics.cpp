#include "profile/query_metrics.h"

#include <array>
#include <cctype>
#include <string_view>

#include "util/strings.h"

namespace kopt::profile {

namespace {
bool looks_like_metric(std::string_view s) {
  size_t sep = s.find("__");
  if (sep == std::string_view::npos || sep == 0 || sep + 2 >= s.size()) return false;
  for (char c : s)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}
}  // namespace

std::set<std::string> parse_query_metrics(const std::string& text) {
  std::set<std::string> out;
  for (const std::string& line : util::split_lines(text)) {
    std::string t = util::trim(line);
    std::string first = t.substr(0, t.find_first_of(" \t"));
    if (looks_like_metric(first)) out.insert(first);
  }
  return out;
}

std::string metric_base_name(const std::string& metric) { return metric.substr(0, metric.find('.')); }

bool listed_by_query_metrics(const std::string& metric) {
  static constexpr std::array<std::string_view, 8> kNotCounters = {
      "launch__", "device__", "profiler__", "derived__", "numa__", "nvlink__", "sass__", "c2clink__"};
  for (auto p : kNotCounters)
    if (util::starts_with(metric, p)) return false;
  // Section-computed ratios that the Occupancy section reports but --query-metrics does not list
  // (seen on the H200 with ncu 2025.3.1: present in the raw page, absent from the gh100 listing).
  static constexpr std::array<std::string_view, 1> kSectionComputed = {"sm__maximum_warps_per_active_cycle_pct"};
  for (auto p : kSectionComputed)
    if (metric == p) return false;
  return true;
}

std::string chip_for_compute_capability(int major, int minor) {
  struct Chip {
    int major, minor;
    const char* name;
  };
  // Only compute capabilities that one chip has; 7.5, 8.6, 8.9, ... span several chips (tu102/tu104, ...).
  static constexpr Chip kChips[] = {{7, 0, "gv100"}, {8, 0, "ga100"}, {9, 0, "gh100"}};
  for (const auto& c : kChips)
    if (c.major == major && c.minor == minor) return c.name;
  return "";
}

MetricCheck check_metrics(const std::vector<std::string>& requested, const std::set<std::string>& chip_metrics) {
  MetricCheck c;
  for (const auto& m : requested) {
    if (!listed_by_query_metrics(m))
      c.unchecked.push_back(m);
    else if (chip_metrics.count(metric_base_name(m)))
      c.available.push_back(m);
    else
      c.missing.push_back(m);
  }
  return c;
}

}  // namespace kopt::profile
