#pragma once
// Racing a candidate against the champion: interleaved paired rounds (runner/stats.h: compare_paired) that stop
// as soon as the comparison is decided. A clearly slower candidate is ranked after a handful of rounds; one that
// is close to the champion gets rounds until its ratio's 95% CI is inside or outside the noise band, or the
// round/time cap is reached. Pure: the measuring worker calls it between rounds.
#include <string_view>
#include <vector>

#include "runner/stats.h"

namespace kopt::runner {

struct RaceRule {
  int min_rounds = 6;          // the fewest rounds whose median CI exists (order statistics need 6 for 95%)
  int max_rounds = 60;
  double max_time_s = 2.0;     // wall budget of the timed rounds
  double min_effect = kMinEffect;  // the noise band of compare_paired: |ratio - 1| below it is "the same"
  int check_every = 2;         // rounds between decisions
};

enum class RaceState { kContinue, kDecided, kCapped };
std::string_view describe(RaceState s);

// `champion_ms` and `candidate_ms`: the samples so far, one per round. `elapsed_s`: the rounds' wall time.
RaceState race_state(const std::vector<double>& champion_ms, const std::vector<double>& candidate_ms, const RaceRule& rule,
                     double elapsed_s);

}  // namespace kopt::runner
