#pragma once
// The Nsight Compute gate: before any candidate is generated, kopt proves it can profile the baseline.
// ncu present, counters readable, the profiler range caught at least one kernel, the required metrics present.
#include <string>
#include <vector>

#include "core/result.h"
#include "profile/raw_page.h"
#include "util/process.h"

namespace kopt::profile {

enum class GateFailure { kNone, kNcuMissing, kCounterPermission, kNcuFailed, kNoKernel, kMissingMetrics };
std::string_view describe(GateFailure f);

struct NcuGateInput {
  std::string ncu_path;                    // empty: ncu was not found
  const util::ProcessResult* run = nullptr;  // the profiling run (null: not run)
  const RawPage* page = nullptr;           // its raw page (null: not read)
  std::vector<std::string> required_metrics;
};

struct GateVerdict {
  GateFailure failure = GateFailure::kNone;
  std::string message;                     // what failed and how to fix it
  std::vector<std::string> missing_metrics;
};
GateVerdict evaluate_ncu_gate(const NcuGateInput& in);

// ok, or a gate Error (exit 3) with the verdict's message.
Status ncu_gate(const NcuGateInput& in);

// The required metrics (metric_names.h) as strings.
std::vector<std::string> required_metrics();

}  // namespace kopt::profile
