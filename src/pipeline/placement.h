#pragma once
// Placing a measured kernel on the roofline: the workload model from the golden manifest, the buffers'
// dtypes, the median time with its noise, and (optionally) Nsight Compute metrics.
#include <map>
#include <string>

#include "roofline/analysis.h"
#include "roofline/ceilings.h"
#include "roofline/speed_of_light.h"
#include "runner/stats.h"
#include "util/json_io.h"

namespace kopt::pipeline {

// A value as Nsight Compute printed it, in base units: bytes ("Kbyte", "Gbyte"), bytes per second
// ("Gbyte/s", "Tbyte/s"), nanoseconds ("us", "msecond"), hertz ("Ghz"); others unchanged ("%", "cycle").
double ncu_to_base_units(double value, const std::string& unit);

// noise_ms: the half-width of the median's 95% CI (at least 0.5% of the median).
Result<roofline::RooflineResult> place(const roofline::Ceilings& c, const util::Json& manifest,
                                       const std::vector<std::string>& buffer_dtypes, const runner::TimingStats& t,
                                       const std::map<std::string, double>& ncu_metrics, const std::string& label,
                                       const roofline::AnalyzeOptions& opts = {});

// The speed-of-light floor (roofline/speed_of_light.h) of the manifest's workload model, or nullopt when the manifest
// has none; an error when the model is malformed or a roof it needs is unknown.
Result<std::optional<roofline::SpeedOfLight>> speed_of_light(const roofline::Ceilings& c, const util::Json& manifest,
                                                             const std::vector<std::string>& buffer_dtypes,
                                                             long long l2_bytes, bool warm_l2);

}  // namespace kopt::pipeline
