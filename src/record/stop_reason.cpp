#include "record/stop_reason.h"

namespace kopt::record {

std::string_view stop_name(StopReason r) {
  switch (r) {
    case StopReason::kNone: return "none";
    case StopReason::kMaxIterations: return "max_iterations";
    case StopReason::kNearPeak: return "near_peak";
    case StopReason::kNoImprovement: return "no_improvement";
    case StopReason::kGeneratorExhausted: return "generator_exhausted";
    case StopReason::kGateFailed: return "gate_failed";
    case StopReason::kInterrupted: return "interrupted";
    case StopReason::kGeneratorFailed: return "generator_failed";
    case StopReason::kNoValidCandidate: return "no_valid_candidate";
    case StopReason::kTimeBudget: return "time_budget";
    case StopReason::kNoPredictedGain: return "no_predicted_gain";
    case StopReason::kExplorationSpent: return "exploration_spent";
  }
  return "?";
}

std::string_view stop_reason_text(StopReason r) { return r == StopReason::kNone ? std::string_view() : stop_name(r); }

std::optional<StopReason> stop_reason_from_text(std::string_view s) {
  if (s.empty()) return StopReason::kNone;
  for (auto r : {StopReason::kMaxIterations, StopReason::kNearPeak, StopReason::kNoImprovement, StopReason::kGeneratorExhausted,
                 StopReason::kGateFailed, StopReason::kInterrupted, StopReason::kGeneratorFailed, StopReason::kNoValidCandidate,
                 StopReason::kTimeBudget, StopReason::kNoPredictedGain, StopReason::kExplorationSpent})
    if (stop_name(r) == s) return r;
  return std::nullopt;
}

std::string_view describe(StopReason r) {
  switch (r) {
    case StopReason::kNone: return "still running";
    case StopReason::kMaxIterations: return "reached the maximum number of iterations";
    case StopReason::kNearPeak: return "the champion is near the roofline peak";
    case StopReason::kNoImprovement: return "no significant improvement within the patience";
    case StopReason::kGeneratorExhausted: return "the generator has nothing new to propose";
    case StopReason::kGateFailed: return "a gate failed before any candidate was generated";
    case StopReason::kInterrupted: return "interrupted by the user";
    case StopReason::kGeneratorFailed: return "the generator failed or wrote invalid candidates";
    case StopReason::kNoValidCandidate: return "no valid candidate";
    case StopReason::kTimeBudget: return "the search's time budget is spent";
    case StopReason::kNoPredictedGain: return "the model of the space predicts no significant gain anywhere it has not measured";
    case StopReason::kExplorationSpent:
      return "every configuration the evidence allows was measured, and exploring the rest of the space brought no "
             "significant gain in two iterations in a row";
  }
  return "?";
}

}  // namespace kopt::record
