#pragma once
// The run's journal (state.json): everything the loop needs to continue an interrupted run from its last
// completed step. Written atomically after every step; `--resume RUN_DIR` reads it back.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "loop/decisions.h"
#include "loop/warm_start.h"
#include "record/run_record.h"
#include "sanitize/sanitizer.h"
#include "search/generator.h"
#include "util/json_io.h"

namespace kopt::loop {

inline constexpr int kStateVersion = 1;

struct ChampionRecord {
  search::Candidate candidate;
  std::string library;      // the compiled .so
  double median_ms = 0;
  std::string result_json;  // the runner result it was timed with
  // Over a workload matrix: the weighted objective the selection ranks by, in the primary case's ms (the
  // baseline's is its median; each new champion's is the old one's times their weighted geometric mean ratio).
  // 0: median_ms (one case, or a state written before).
  double objective_ms = 0;
  double objective() const { return objective_ms > 0 ? objective_ms : median_ms; }
};

// Whole wall as the user waits for it (issue 36): the run record's (record/run_record.h), which writes and reads it.
using WallRecord = record::Wall;
using record::wall_from_json;

// One parameter of a champion reverted to the baseline's value and raced against the champion (ablation.cpp).
struct ParamAblation {
  int iteration = 0;
  std::string champion_id;
  std::string param;
  int64_t champion_value = 0, baseline_value = 0;
  std::string variant_id;                    // the measured variant ("i2c1_base_BM"); empty when not built
  ParamEffect effect = ParamEffect::kNotMeasured;
  std::optional<Attribution> saved;          // time with the baseline's value - time with the champion's (ms)
  std::string note;                          // why it was not measured (the constraint, the failure)
};

struct RunState {
  bool gates_passed = false;
  int iterations_done = 0;          // completed iterations (the baseline is iteration 0)
  std::optional<ChampionRecord> champion;
  std::optional<ChampionRecord> baseline;
  // The champions the current one replaced, oldest first (the baseline is never in it): where the final
  // verification falls back to (--champion-gates final). `verified`: candidates whose determinism check and
  // sanitizer passed as would-be or final champions.
  std::vector<ChampionRecord> superseded;
  std::vector<std::string> verified;
  std::vector<search::Measurement> history;
  // Reused configurations (issue 39 item 2) that could have been crowned, measured again in full, in order.
  std::vector<std::string> raced_again;
  // The warm start (issue 39 item 2(b), loop/warm_start.h): the configurations of the nearest other shapes the
  // results database held, which lead the first design, each with the shape it came from and the candidate it became.
  std::vector<WarmStartPoint> warm_start;
  // The strategy memory (issue 39 item 2(c), loop/strategy_memory.h) as last applied: {"position", "bonus": {method:
  // value}, "evidence": {method: {"paid", "tried"}}}; null when nothing was applied.
  util::Json strategy_memory = nullptr;
  // The champions' ablation variants, measured besides the candidates (GeneratorInput::ablations).
  std::vector<search::Measurement> ablations;
  std::vector<search::MethodVerdict> verdicts;
  // Every champion's changed parameters, each reverted to the baseline's value alone (state.json param_ablations).
  std::vector<ParamAblation> param_ablations;
  StopState stop;
  StopReason stop_reason = StopReason::kNone;  // set when the run ended (state.json: stop_reason_text)
  std::string stop_detail;
  std::map<std::string, double> phase_seconds;
  WallRecord wall;
  util::Json timeline = util::Json::array();
  util::Json profile_plan;          // the fixed Nsight Compute plan (profile::to_json(ProfilePlan))
  std::map<std::string, double> metrics;  // the champion's latest profile
  util::Json roofline;              // the champion's latest roofline position
  util::Json frontier = util::Json::array();
  double reference_ms = 0;
  // No repeated work: the champion last profiled ({"methods": [...], "median_ms": x}, null before the first) and
  // the method set last ablated (a new champion with the same methods keeps their verdicts).
  util::Json last_profile = nullptr;
  std::optional<std::vector<std::string>> ablated_methods;
  // Issue 18's safety gates: the champion's race safety (the baseline's until a sanitized finalist replaces it)
  // and the gates' records: {"baseline_sanitizer", "champion_sanitizer", "rejected": [{candidate, gate, reason}],
  // "flagged": [{candidate, regressions}], "determinism": [{candidate, verdict, reason}]}.
  sanitize::RaceSafe race_safe = sanitize::RaceSafe::kUnknown;
  util::Json gate_records = util::Json::object();
  // Where candidates were measured (issue 21): {"slots": [{slot, name, gpu, ...}], "wall_s": dispatch wall,
  // "per_slot": [{slot, name, runs, lost, busy_s}], "retried": [{slots, lost}]}, summed over the run.
  util::Json measuring = util::Json::object();
  bool finished() const { return stop_reason != StopReason::kNone; }
  // Whether this candidate passed the champion's determinism check and sanitizer (the baseline: its own gates).
  bool verified_as_champion(const std::string& id) const {
    return id == "baseline" || std::find(verified.begin(), verified.end(), id) != verified.end();
  }
};

util::Json to_json(const RunState& s);
Result<RunState> state_from_json(const util::Json& j);
Result<search::Candidate> candidate_from_json(const util::Json& j);
util::Json to_json(const ParamAblation& p);
Result<ParamAblation> param_ablation_from_json(const util::Json& j);

}  // namespace kopt::loop
