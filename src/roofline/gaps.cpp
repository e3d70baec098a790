#include "roofline/gaps.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace kopt::roofline {

namespace {

bool is_pct(const std::string& name) { return name.find(".pct_of_peak") != std::string::npos; }

std::optional<double> clamp01(std::optional<double> v) {
  if (!v) return v;
  return std::clamp(*v, 0.0, 1.0);
}

}  // namespace

Result<Utilisation> utilisation_from_ncu(const std::map<std::string, double>& all,
                                         std::optional<double> dram_ceiling_gbps) {
  Utilisation u;
  std::map<std::string, double> m;  // the plausible metrics
  for (const auto& [name, v] : all) {
    if (!std::isfinite(v) || v < 0)
      u.ignored.push_back(fmt::format("ncu metric {} is {}: expected >= 0; treated as missing", name, v));
    else if (is_pct(name) && v > 110)
      u.ignored.push_back(fmt::format("ncu metric {} is {}%: expected 0..100; treated as missing", name, v));
    else
      m[name] = v;
  }
  auto pct = [&](const char* name) -> std::optional<double> {
    auto it = m.find(name);
    if (it == m.end()) return std::nullopt;
    return it->second / 100.0;
  };
  // The largest of the present metrics, recording which one it was.
  auto largest = [&](std::initializer_list<const char*> names, const char* field) -> std::optional<double> {
    std::optional<double> best;
    for (const char* n : names)
      if (auto v = pct(n); v && (!best || *v > *best)) {
        best = v;
        u.sources[field] = n;
      }
    return best;
  };
  u.compute = largest({ncu::kSmThroughput, ncu::kTensorPipe}, "compute");
  u.memory = largest({ncu::kMemThroughput, ncu::kDramThroughput}, "memory");
  u.dram = largest({ncu::kDramThroughput}, "dram");
  u.occupancy = largest({ncu::kWarpsActive}, "occupancy");
  for (const char* n : {ncu::kIssueActive, ncu::kInstIssued, ncu::kIssueActivePerCycle, ncu::kSmIssueActive}) {
    auto it = m.find(n);
    if (it == m.end()) continue;
    u.issue = is_pct(n) ? it->second / 100.0 : it->second;
    u.sources["issue"] = n;
    break;
  }
  if (auto it = m.find(ncu::kDramBytes); it != m.end()) {
    u.dram_bytes = it->second;
    u.sources["dram_bytes"] = ncu::kDramBytes;
  } else if (m.count(ncu::kDramBytesRead) && m.count(ncu::kDramBytesWrite)) {
    u.dram_bytes = m.at(ncu::kDramBytesRead) + m.at(ncu::kDramBytesWrite);
    u.sources["dram_bytes"] = std::string(ncu::kDramBytesRead) + " + " + ncu::kDramBytesWrite;
  }
  if (dram_ceiling_gbps && *dram_ceiling_gbps > 0) {
    std::optional<double> bytes_per_s;
    std::string how;
    if (auto it = m.find(ncu::kDramBytesPerSecond); it != m.end()) {
      bytes_per_s = it->second;
      how = ncu::kDramBytesPerSecond;
    } else if (auto d = m.find(ncu::kDuration); d != m.end() && d->second > 0 && u.dram_bytes) {
      bytes_per_s = *u.dram_bytes / (d->second * 1e-9);
      how = "dram bytes / " + std::string(ncu::kDuration);
    }
    if (bytes_per_s) {
      u.dram = *bytes_per_s / (*dram_ceiling_gbps * 1e9);
      u.sources["dram"] = how + fmt::format(" / the DRAM ceiling ({:.0f} GB/s)", *dram_ceiling_gbps);
      if (!u.memory || *u.dram > *u.memory) {
        u.memory = u.dram;
        u.sources["memory"] = u.sources["dram"];
      }
    }
  }
  const std::string prefix = ncu::kStallPrefix, suffix = ncu::kStallSuffix;
  for (const auto& [name, v] : m) {
    if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    std::string reason = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (reason == "selected") continue;  // "selected" is the issuing warp itself, not a stall
    if (!u.top_stall_ratio || v > *u.top_stall_ratio) {
      u.top_stall = reason;
      u.top_stall_ratio = v;
    }
  }
  u.compute = clamp01(u.compute);
  u.memory = clamp01(u.memory);
  u.dram = clamp01(u.dram);
  u.issue = clamp01(u.issue);
  u.occupancy = clamp01(u.occupancy);
  return u;
}

Gaps axis_gaps(const Utilisation& u) {
  auto gap = [](std::optional<double> x) -> std::optional<double> {
    if (!x) return std::nullopt;
    return 1.0 - std::clamp(*x, 0.0, 1.0);
  };
  return {gap(u.compute), gap(u.memory), gap(u.issue)};
}

std::optional<Axis> bound_axis(const Utilisation& u, double latency_bound_below) {
  if (!u.compute || !u.memory) return std::nullopt;
  if (std::max(*u.compute, *u.memory) < latency_bound_below) return Axis::kLatency;
  return *u.memory >= *u.compute ? Axis::kMemory : Axis::kCompute;
}

}  // namespace kopt::roofline
