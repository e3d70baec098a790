#pragma once
// Why a run stopped: the enum the loop decides (loop/decisions.h uses it) and the run record writes and reads
// (state.json and summary.json: stop_reason_text). Here, below both the loop and the report, so the report reads
// it typed without depending on the loop.
#include <optional>
#include <string_view>

namespace kopt::record {

enum class StopReason { kNone, kMaxIterations, kNearPeak, kNoImprovement, kGeneratorExhausted, kGateFailed,
                        kInterrupted, kGeneratorFailed, kNoValidCandidate, kTimeBudget, kNoPredictedGain,
                        kExplorationSpent };
std::string_view describe(StopReason r);
std::string_view stop_name(StopReason r);
// A run's stop reason as state.json and summary.json write it: stop_name, but empty for kNone (not finished).
std::string_view stop_reason_text(StopReason r);
// The reverse of stop_reason_text ("" -> kNone); nullopt for a name no StopReason has.
std::optional<StopReason> stop_reason_from_text(std::string_view s);

}  // namespace kopt::record
