#pragma once
// What `kopt optimize` takes from the results database (issue 39 item 2, docs/DATABASE.md "Reuse"), as pure
// decisions over stored records. The loop (reuse_loop.cpp) looks the records up and acts on these answers.
//
// The rule that keeps selection honest: a stored figure may keep a configuration out of the race (it was wrong, or
// clearly slower than the champion), never put one in. A reused configuration that could be crowned is measured
// again in this run, in full (its check on this run's golden data, its race against the champion, its checks at
// every case of the workload matrix), and only that new measurement decides.
#include <optional>
#include <string>

#include "db/record.h"
#include "runner/stats.h"
#include "search/candidate.h"
#include "util/json_io.h"

namespace kopt::loop {

// A stored comparison's slack for drift between processes and days: a configuration is "clearly slower" on stored
// medians only when its stored median's 95% CI starts at least this far above the champion's median.
inline constexpr double kReuseDriftAllowance = 0.03;

enum class ReuseDecision {
  kMeasure,  // no usable record (or --remeasure): measured as always
  kReuse,    // its record stands for it: not compiled, not measured
};
struct ReuseChoice {
  ReuseDecision decision = ReuseDecision::kMeasure;
  std::string reason;
};
// Whether a configuration with this stored record (the newest under the same key; nullopt: none) is measured again.
// Reused: a correct record with a median, or an incorrect one (wrong under the same key: the checks of a later run
// would find the same). Measured again: --remeasure, a crash or a timeout (they can be the moment's: a lost worker, a
// busy GPU), a correct record without a timing. `need_race_against`: set when the run needs the stored race to have
// been against this opponent (opponent_json; an ablation's attribution is that race), so a record without it is measured.
ReuseChoice decide_reuse(const std::optional<db::Record>& stored, bool remeasure,
                         const std::optional<util::Json>& need_race_against = std::nullopt);

// The configuration a race was against, as Record::raced's "against" holds it: the params, guards (and a generator's
// source hash) of db's config, and the candidate's own flags.
util::Json opponent_json(const search::Candidate& c);

// A stored race's comparison against `opponent` (opponent_json): "over_cases" when `over_cases` (the run has a
// workload matrix) else "primary". nullopt when the record was not raced, or raced against another configuration.
std::optional<runner::PairedComparison> stored_comparison(const db::Record& r, const util::Json& opponent, bool over_cases);
// The stored weighted geometric mean ratio over the cases, against `opponent` only.
std::optional<double> stored_objective_ratio(const db::Record& r, const util::Json& opponent);

// runner::to_json(PairedComparison) read back; nullopt when the numbers are not there.
std::optional<runner::PairedComparison> comparison_from_json(const util::Json& j);

enum class RaceDecision {
  kSkipSlower,  // a finalist its stored figures put clearly behind the champion: the champion stays, nothing is run
  kSkipNoGain,  // its stored race against this champion rules out a gain a fresh race could crown: nothing is run
  kRace,        // it could be crowned: measured again, in full, before selection
};
struct RaceChoice {
  RaceDecision decision = RaceDecision::kRace;
  std::string reason;
};
// A reused finalist against the champion of the moment (`champion_opponent`: opponent_json of it; `champion_ms`: its
// median at the primary case). Clearly slower: its stored race against this very champion has a 95% CI entirely above
// 1 (the race a new measurement would rerun, from another process); or, raced against another configuration, its
// stored median's CI starts kReuseDriftAllowance or more above champion_ms. No gain to crown: that stored race's CI
// starts at 1 - runner::kMinEffect or above, so a fresh race's "faster" (its CI entirely below that) would contradict
// it, and a "same" crowns only a finalist with fewer methods than the champion (`tie_crowns`), which is raced.
// Anything else is raced again.
RaceChoice decide_race(const db::Record& r, const util::Json& champion_opponent, double champion_ms, bool over_cases,
                       bool tie_crowns);

// "reused from run RUN_DIR at DATE (record ID)": the marker the history, summary.md and the page show.
std::string reused_marker(const db::Record& r);
// What state.json's history keeps of a reused record: {"record_id", "run_dir", "recorded_at", "median_ms", "verdict"}.
util::Json reused_json(const db::Record& r);

}  // namespace kopt::loop
