#pragma once
// Where a kernel stands against the ceilings: the roofline (with a workload model) or the bottleneck-gap
// heuristic (Nsight Compute utilisation alone), the axis gaps, the bound and the method budget.
// Pure: the caller brings the ceilings, the timing, the buffers' dtypes and the ncu metrics.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/axis.h"
#include "core/result.h"
#include "roofline/budget.h"
#include "roofline/ceilings.h"
#include "roofline/gaps.h"
#include "roofline/model.h"
#include "util/json_io.h"

namespace kopt::roofline {

enum class Mode { kWorkloadModel, kBottleneckGapHeuristic };
std::string_view describe(Mode m);  // "workload_model", "bottleneck_gap_heuristic"

enum class Verdict {
  kNearPeak,        // efficiency >= the threshold (workload model only)
  kBelowPeak,       // room left (workload model)
  kBelowFloor,      // faster than physically possible: a measurement or correctness problem
  kHeuristicOnly,   // no workload model: gaps and bound only, never near peak
};
std::string_view describe(Verdict v);   // "near_peak", "below_peak", "below_floor", "heuristic_only"
std::string_view explain(Verdict v);    // one sentence for people

struct RooflineInput {
  std::string kernel;                         // a label ("matmul.cu", "candidate 3")
  std::optional<WorkloadModel> model;
  std::vector<std::string> buffer_dtypes;     // canonical dtype names of the kernel's buffers
  TimeMeasurement time;
  std::map<std::string, double> ncu_metrics;  // may be empty
};

struct AnalyzeOptions {
  double near_peak_efficiency = kNearPeakEfficiency;
  BudgetOptions budget;
};

struct RooflineResult {
  Mode mode = Mode::kBottleneckGapHeuristic;
  std::string kernel;
  TimeMeasurement time;
  std::optional<Floor> floor;            // workload model only
  std::optional<Efficiency> efficiency;  // workload model only
  Verdict verdict = Verdict::kHeuristicOnly;
  Utilisation util;
  Gaps gaps;
  std::optional<Axis> bound;
  BudgetSplit budget;
  std::vector<std::string> notes;
  bool near_peak() const { return verdict == Verdict::kNearPeak; }
  // Near peak at or past the floor the ceilings give (efficiency >= 1): nothing left by the model.
  bool at_roof() const { return near_peak() && efficiency && efficiency->efficiency >= 1.0; }
  bool below_floor() const { return verdict == Verdict::kBelowFloor; }
};

// Errors (exit 4) for a non-positive time, negative noise, a malformed model, a dtype with no ceiling, or a
// negative metric; each message names the input.
Result<RooflineResult> analyze(const Ceilings& c, const RooflineInput& in, const AnalyzeOptions& o = {});

util::Json to_json(const RooflineResult& r);
std::string format_text(const RooflineResult& r);

}  // namespace kopt::roofline
