#include "loop/reuse.h"

#include <fmt/format.h>

#include "pipeline/db_record.h"

namespace kopt::loop {

ReuseChoice decide_reuse(const std::optional<db::Record>& stored, bool remeasure,
                         const std::optional<util::Json>& need_race_against) {
  if (!stored) return {ReuseDecision::kMeasure, "not measured before under this key"};
  if (remeasure) return {ReuseDecision::kMeasure, "--remeasure: measured again"};
  switch (stored->verdict) {
    case db::Verdict::kCrashed:
    case db::Verdict::kTimedOut:
      return {ReuseDecision::kMeasure, fmt::format("its record says {}, which can be the moment's: measured again",
                                                   db::verdict_name(stored->verdict))};
    case db::Verdict::kIncorrect:
      return {ReuseDecision::kReuse, "incorrect under the same key" + (stored->note.empty() ? std::string() : ": " + stored->note)};
    case db::Verdict::kCorrect: break;
  }
  if (!stored->median_ms) return {ReuseDecision::kMeasure, "its record has no timing: measured again"};
  if (need_race_against && !stored_comparison(*stored, *need_race_against, false))
    return {ReuseDecision::kMeasure, "its record was not raced against this champion: measured again"};
  return {ReuseDecision::kReuse, fmt::format("correct under the same key, {:.4f} ms", *stored->median_ms)};
}

util::Json opponent_json(const search::Candidate& c) { return {{"config", pipeline::config_of(&c)}, {"flags", c.flags}}; }

std::optional<runner::PairedComparison> comparison_from_json(const util::Json& j) {
  if (!j.is_object()) return std::nullopt;
  for (const char* k : {"median_ratio", "ci95_low", "ci95_high"})
    if (!j.contains(k) || !j[k].is_number()) return std::nullopt;
  runner::PairedComparison p;
  p.rounds = j.value("rounds", 0);
  p.median_ratio = j["median_ratio"].get<double>();
  p.ci95_low = j["ci95_low"].get<double>();
  p.ci95_high = j["ci95_high"].get<double>();
  p.median_diff_ms = j.value("median_saved_ms", 0.0);
  p.diff_ci95_low_ms = j.value("saved_ci95_low_ms", 0.0);
  p.diff_ci95_high_ms = j.value("saved_ci95_high_ms", 0.0);
  const std::string v = j.value("verdict", std::string());
  for (auto cand : {runner::Verdict::kFaster, runner::Verdict::kSame, runner::Verdict::kSlower, runner::Verdict::kAmbiguous})
    if (runner::describe(cand) == v) p.verdict = cand;
  return p;
}

namespace {
bool raced_against(const db::Record& r, const util::Json& opponent) {
  return r.raced.is_object() && r.raced.contains("against") && r.raced["against"] == opponent;
}
}  // namespace

std::optional<runner::PairedComparison> stored_comparison(const db::Record& r, const util::Json& opponent, bool over_cases) {
  if (!raced_against(r, opponent)) return std::nullopt;
  return comparison_from_json(r.raced.value(over_cases ? "over_cases" : "primary", util::Json()));
}

std::optional<double> stored_objective_ratio(const db::Record& r, const util::Json& opponent) {
  if (!raced_against(r, opponent) || !r.raced.contains("objective_ratio") || !r.raced["objective_ratio"].is_number())
    return std::nullopt;
  return r.raced["objective_ratio"].get<double>();
}

RaceChoice decide_race(const db::Record& r, const util::Json& champion_opponent, double champion_ms, bool over_cases,
                       bool tie_crowns) {
  if (r.verdict != db::Verdict::kCorrect || !r.median_ms)
    return {RaceDecision::kSkipSlower, "not a correct timed record: never a champion"};
  if (auto cmp = stored_comparison(r, champion_opponent, over_cases)) {
    if (cmp->ci95_low > 1.0)
      return {RaceDecision::kSkipSlower,
              fmt::format("its stored race against this champion put it slower: ratio {:.3f} [{:.3f}, {:.3f}]", cmp->median_ratio,
                          cmp->ci95_low, cmp->ci95_high)};
    if (!tie_crowns && cmp->ci95_low >= 1.0 - runner::kMinEffect)
      return {
          RaceDecision::kSkipNoGain,
          fmt::format("its stored race against this champion rules out a gain beyond the noise: ratio {:.3f} [{:.3f}, {:.3f}]",
                      cmp->median_ratio, cmp->ci95_low, cmp->ci95_high)};
    return {RaceDecision::kRace, fmt::format("its stored race against this champion does not put it behind: ratio {:.3f} "
                                             "[{:.3f}, {:.3f}]",
                                             cmp->median_ratio, cmp->ci95_low, cmp->ci95_high)};
  }
  const double low = r.ci95_low_ms.value_or(*r.median_ms);
  if (champion_ms > 0 && low >= champion_ms * (1 + kReuseDriftAllowance))
    return {RaceDecision::kSkipSlower,
            fmt::format("its stored median {:.4f} ms (95% CI from {:.4f}) is {:.0f}% or more above the champion's {:.4f} ms",
                        *r.median_ms, low, 100 * kReuseDriftAllowance, champion_ms)};
  return {RaceDecision::kRace, fmt::format("its stored median {:.4f} ms is not clearly above the champion's {:.4f} ms",
                                           *r.median_ms, champion_ms)};
}

std::string reused_marker(const db::Record& r) {
  return fmt::format("reused from run {} at {} (record {})", r.run_dir.empty() ? std::string("?") : r.run_dir, r.recorded_at, r.id);
}

util::Json reused_json(const db::Record& r) {
  return {{"record_id", r.id},
          {"run_dir", r.run_dir},
          {"recorded_at", r.recorded_at},
          {"median_ms", r.median_ms ? util::Json(*r.median_ms) : util::Json(nullptr)},
          {"verdict", db::verdict_name(r.verdict)}};
}

}  // namespace kopt::loop
