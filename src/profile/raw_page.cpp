#include "profile/raw_page.h"

#include <algorithm>
#include <set>

#include "profile/csv.h"
#include "profile/metric_names.h"

namespace kopt::profile {

const MetricValue* KernelRecord::find(const std::string& metric) const {
  auto it = metrics.find(metric);
  return it == metrics.end() ? nullptr : &it->second;
}

std::optional<double> KernelRecord::number(const std::string& metric) const {
  const MetricValue* v = find(metric);
  return v ? v->value : std::nullopt;
}

bool RawPage::has_column(const std::string& metric) const {
  return std::find(metric_columns.begin(), metric_columns.end(), metric) != metric_columns.end();
}

namespace {
// Columns that describe the launch, not metrics.
const std::set<std::string>& descriptor_columns() {
  static const std::set<std::string> cols = {"ID",         "Process ID", "Process Name", "Host Name",
                                             "Kernel Name", "Context",    "Stream",       "Block Size",
                                             "Grid Size",  "Device",     "CC",           "Kernel Time"};
  return cols;
}
}  // namespace

Result<RawPage> parse_raw_page(const std::string& text) {
  std::vector<CsvRow> rows = parse_ncu_csv(text);
  if (rows.empty())
    return gate_error("the ncu raw page has no table (no line starting with \"ID\"); ncu printed: " +
                      text.substr(0, 300));
  const CsvRow& header = rows[0];
  if (rows.size() < 2 || rows[1].size() != header.size() || !rows[1][0].empty())
    return gate_error("the ncu raw page has no units row after its header");
  const CsvRow& units = rows[1];
  auto column = [&](const std::string& name) -> int {
    auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? -1 : static_cast<int>(it - header.begin());
  };
  int c_id = column("ID"), c_name = column("Kernel Name"), c_block = column("Block Size"), c_grid = column("Grid Size");
  if (c_id < 0 || c_name < 0) return gate_error("the ncu raw page has no ID or Kernel Name column");

  RawPage page;
  for (size_t c = 0; c < header.size(); ++c)
    if (!descriptor_columns().count(header[c])) page.metric_columns.push_back(header[c]);

  for (size_t r = 2; r < rows.size(); ++r) {
    const CsvRow& row = rows[r];
    auto id = parse_ncu_number(row[0]);
    if (!id) continue;  // not a table line (output printed after the table)
    if (row.size() != header.size())
      return gate_error("the ncu raw page row " + std::to_string(r + 1) + " has " + std::to_string(row.size()) +
                        " fields; the header has " + std::to_string(header.size()));
    KernelRecord k;
    auto kid = parse_ncu_number(row[c_id]);
    k.id = kid ? static_cast<int>(*kid) : static_cast<int>(r - 2);
    k.name = row[c_name];
    if (c_block >= 0) k.block_size = row[c_block];
    if (c_grid >= 0) k.grid_size = row[c_grid];
    for (size_t c = 0; c < header.size(); ++c) {
      if (descriptor_columns().count(header[c])) continue;
      k.metrics[header[c]] = MetricValue{parse_ncu_number(row[c]), row[c], units[c]};
    }
    page.kernels.push_back(std::move(k));
  }
  return page;
}

std::optional<double> to_nanoseconds(double value, const std::string& unit) {
  if (unit == "ns" || unit == "nsecond") return value;
  if (unit == "us" || unit == "usecond") return value * 1e3;
  if (unit == "ms" || unit == "msecond") return value * 1e6;
  if (unit == "s" || unit == "second") return value * 1e9;
  return std::nullopt;
}

std::optional<double> duration_ns(const KernelRecord& k) {
  const MetricValue* v = k.find(std::string(metric::kDuration));
  if (!v || !v->value) return std::nullopt;
  return to_nanoseconds(*v->value, v->unit);
}

}  // namespace kopt::profile
