#include "pipeline/placement.h"

#include <algorithm>

#include "roofline/model.h"

namespace kopt::pipeline {

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

}  // namespace kopt::pipeline
