#include "runner/paired.h"

#include "runner/stats.h"

namespace kopt::runner {

std::vector<size_t> timed_libs(const std::vector<PairedEntry>& entries) {
  std::vector<size_t> out;
  for (size_t k = 0; k < entries.size(); ++k)
    if (entries[k].status == RunStatus::kOk) out.push_back(k);
  return out;
}

std::pair<RunStatus, std::string> paired_status(const std::vector<PairedEntry>& entries) {
  for (size_t k = 0; k < entries.size(); ++k) {
    const auto& e = entries[k];
    if (e.status != RunStatus::kOk)
      return {e.status, "library " + std::to_string(k) + " (" + e.lib + "): " + e.message};
  }
  return {RunStatus::kOk, ""};
}

util::Json paired_libs_json(const std::vector<PairedEntry>& entries) {
  util::Json libs = util::Json::array();
  for (const auto& e : entries) {
    util::Json j = {{"lib", e.lib}, {"status", status_name(e.status)}, {"message", e.message}, {"check", e.check},
                    {"samples_ms", e.gpu_ms}};
    if (!e.gpu_ms.empty()) j["timing"] = to_json(compute_stats(e.gpu_ms));
    if (!e.event_ms.empty()) {
      j["event_samples_ms"] = e.event_ms;
      j["event_median_ms"] = compute_stats(e.event_ms).median_ms;
    }
    if (!e.busy_ms.empty()) j["busy_median_ms"] = compute_stats(e.busy_ms).median_ms;
    if (!e.kernels.empty()) j["kernels_per_call"] = compute_stats(e.kernels).median_ms;
    if (!e.timing_info.empty()) j["timing_info"] = e.timing_info;
    libs.push_back(std::move(j));
  }
  return libs;
}

}  // namespace kopt::runner
