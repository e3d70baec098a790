#include "runner/race.h"

#include <algorithm>

namespace kopt::runner {

std::string_view describe(RaceState s) {
  switch (s) {
    case RaceState::kContinue: return "continue";
    case RaceState::kDecided: return "decided";
    case RaceState::kCapped: return "capped";
  }
  return "?";
}

RaceState race_state(const std::vector<double>& champion_ms, const std::vector<double>& candidate_ms, const RaceRule& rule,
                     double elapsed_s) {
  const int n = static_cast<int>(std::min(champion_ms.size(), candidate_ms.size()));
  if (n >= rule.max_rounds || (n >= rule.min_rounds && elapsed_s >= rule.max_time_s)) return RaceState::kCapped;
  if (n < rule.min_rounds || (n - rule.min_rounds) % std::max(1, rule.check_every) != 0) return RaceState::kContinue;
  auto cmp = compare_paired(champion_ms, candidate_ms, rule.min_effect);
  return cmp.verdict == Verdict::kAmbiguous ? RaceState::kContinue : RaceState::kDecided;
}

}  // namespace kopt::runner
