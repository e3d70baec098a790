#include "pipeline/placement.h"

#include <algorithm>
#include <cctype>

#include "roofline/model.h"

namespace kopt::pipeline {

double ncu_to_base_units(double v, const std::string& unit) {
  std::string u = unit;
  for (auto& ch : u) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  auto prefix = [](char c) {
    switch (c) {
      case 'k': return 1e3;
      case 'm': return 1e6;
      case 'g': return 1e9;
      case 't': return 1e12;
      case 'p': return 1e15;
      default: return 1.0;
    }
  };
  if (u == "ns" || u == "nsecond") return v;
  if (u == "us" || u == "usecond") return v * 1e3;
  if (u == "ms" || u == "msecond") return v * 1e6;
  if (u == "s" || u == "second") return v * 1e9;
  for (const char* base : {"byte/s", "byte/second", "byte", "hz"}) {
    std::string b(base);
    if (u == b) return v;
    if (u.size() == b.size() + 1 && u.compare(1, b.size(), b) == 0) return v * prefix(u[0]);
  }
  return v;
}

Result<roofline::RooflineResult> place(const roofline::Ceilings& c, const util::Json& manifest,
                                       const std::vector<std::string>& buffer_dtypes, const runner::TimingStats& t,
                                       const std::map<std::string, double>& ncu_metrics, const std::string& label,
                                       const roofline::AnalyzeOptions& opts) {
  roofline::RooflineInput in;
  in.kernel = label;
  in.buffer_dtypes = buffer_dtypes;
  in.time.median_ms = t.median_ms;
  in.time.noise_ms = std::max((t.ci95_high_ms - t.ci95_low_ms) / 2.0, 0.005 * t.median_ms);
  in.ncu_metrics = ncu_metrics;
  if (manifest.contains("workload_model") && manifest["workload_model"].is_object()) {
    KOPT_TRY_ASSIGN(in.model, roofline::parse_workload_model(manifest["workload_model"]));
  }
  return roofline::analyze(c, in, opts);
}

Result<std::optional<roofline::SpeedOfLight>> speed_of_light(const roofline::Ceilings& c, const util::Json& manifest,
                                                             const std::vector<std::string>& buffer_dtypes,
                                                             long long l2_bytes, bool warm_l2) {
  if (!manifest.contains("workload_model") || !manifest["workload_model"].is_object())
    return std::optional<roofline::SpeedOfLight>();
  KOPT_TRY_ASSIGN(auto model, roofline::parse_workload_model(manifest["workload_model"]));
  KOPT_TRY_ASSIGN(auto s, roofline::speed_of_light(c, model, buffer_dtypes, l2_bytes, warm_l2));
  return std::optional<roofline::SpeedOfLight>(s);
}

}  // namespace kopt::pipeline
