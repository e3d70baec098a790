#pragma once
// The run record: what a run directory holds, as typed structs, written and read here only. The loop writes them
// (state.json's wall accounting, the champion, the history's statuses), the report (report/run_data, summary,
// export, compare) reads them; nothing else looks a key of these files up by its string.
//
// Reading is strict about types and tolerant of absence: a field a file lacks (an older run directory) takes its
// default; a field of the wrong type is an error that names the file and the field ("state.json: history[3].status:
// expected a string, found a number"). null counts as absent where the writer writes null for "none".
//
// Floor: core/, util/ and search/generator.h (the candidate and its status); never loop/ or report/, both of which
// include it.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "record/stop_reason.h"
#include "search/generator.h"
#include "util/json_io.h"

namespace kopt::record {

using search::CandidateStatus;
// candidate_status_name's reverse; nullopt for a name no CandidateStatus has ("not_run", "").
std::optional<CandidateStatus> parse_candidate_status(std::string_view s);

// A wrong type in a record: what from_json throws; the readers turn it into Result errors.
struct RecordError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---- state.json ----------------------------------------------------------------------------------------------

// Whole wall as the user waits for it (issue 36), seconds since the command started (a resumed run adds its
// earlier runs' whole_s): when the first candidate's measurement was recorded, when the final champion was crowned.
struct Wall {
  double whole_s = 0;
  std::optional<double> gates_s;  // the gates passed (the search's clock starts); absent before 2026-12-06
  std::optional<double> first_candidate_s;
  std::optional<double> champion_s;  // the champion's crowning (the baseline's: the end of the gates)
  bool operator==(const Wall&) const = default;
};

// A candidate's configuration as search::to_json writes it (candidate.json, state.json's candidates). Every field
// is optional: the report copies only what the file has.
struct CandidateConfig {
  std::optional<std::string> id, source, origin, content_hash;
  std::optional<std::map<std::string, int64_t>> params, constexprs, launch;
  std::optional<std::map<std::string, bool>> guards;
  std::optional<std::map<std::string, std::string>> defines;
  std::optional<std::vector<std::string>> methods, flags, not_ablatable;
  std::optional<util::Json> config;  // search::Config, free-form per generator
  bool operator==(const CandidateConfig&) const = default;
};

// state.json's champion / baseline / superseded entries.
struct ChampionEntry {
  CandidateConfig candidate;
  std::string library;
  double median_ms = 0;
  std::string result_json;
  std::optional<double> objective_ms;  // written when > 0
  bool operator==(const ChampionEntry&) const = default;
};

// One measured candidate in state.json's history (or ablations), in evaluation order.
struct HistoryEntry {
  CandidateConfig candidate;
  CandidateStatus status = CandidateStatus::kOk;  // absent in the oldest files: ok
  std::optional<double> median_ms;                // null unless ok
  std::optional<double> objective_ms;
  int iteration = 0;
  double search_s = 0;
  double compile_ms = 0, sass_ms = 0, measure_ms = 0, cases_ms = 0;  // cost_ms
  util::Json reused = nullptr;                                        // the results database's record it reused
  // A failure that left this share of an output never written (the feasibility model's signal); written when set.
  std::optional<double> unwritten_fraction;
  // Built, not measured: why the feasibility model predicted it infeasible; written when set.
  std::optional<std::string> predicted_infeasible;
  bool operator==(const HistoryEntry&) const = default;
};

// One slot's figures in state.json's `measuring` (issue 21).
struct SlotFigures {
  std::string name;
  int runs = 0, lost = 0;
  double busy_s = 0;
  bool operator==(const SlotFigures&) const = default;
};

// What the report reads of state.json (the loop's RunState, loop/state.h, writes the rest: its resume journal).
struct StateRecord {
  int version = 0;
  int iterations_done = 0;
  StopReason stop_reason = StopReason::kNone;
  std::string stop_detail;
  std::optional<ChampionEntry> champion, baseline;
  std::vector<HistoryEntry> history;
  std::optional<std::map<std::string, double>> phase_seconds;  // absent: summary.json's
  std::optional<Wall> wall;                                   // absent before issue 36
  std::optional<util::Json> timeline;  // the iterations ({iteration, champion_id, ...}): the page draws them whole
  util::Json gate_records = util::Json::object();  // issue 18's gates: case_table, holdout (summary.json's shape)
  double measuring_wall_s = 0;
  std::vector<SlotFigures> measuring_slots;  // measuring.per_slot
  std::string meta_gpu;
  bool operator==(const StateRecord&) const = default;
};

// ---- a candidate's directory (iter_NN/[ablation/]candidates/ID/) -----------------------------------------------

// One kernel's ptxas figures in build.json's resources (compile/resources.h writes them).
struct KernelResources {
  bool entry = true;
  std::string arch;
  std::optional<int> registers;
  std::optional<int64_t> shared_bytes, stack_frame_bytes, spill_store_bytes, spill_load_bytes;
  bool operator==(const KernelResources&) const = default;
};

struct BuildRecord {  // build.json
  std::string status;  // compile::CompileStatus's name ("ok", "failed", ...), shown as written
  bool ok() const;     // status is CompileStatus::kOk's
  std::optional<double> compile_ms;
  std::vector<KernelResources> resources;
  bool operator==(const BuildRecord&) const = default;
};

struct Timing {  // a runner result's `timing`
  std::optional<double> median_ms, ci95_low_ms, ci95_high_ms, ci95_rel_halfwidth, robust_cv, min_ms, max_ms;
  int samples = 0;
  std::string stability;
  bool operator==(const Timing&) const = default;
};

struct RunResult {  // run.json, gates/timing.json: a runner result
  std::string status;
  std::optional<Timing> timing;
  std::optional<std::vector<double>> samples_ms;
  std::string message;
  std::string time;  // meta.time
  bool operator==(const RunResult&) const = default;
};

struct SassRecord {  // sass.json: each claimed method's SASS verdict, and each kernel's instruction mix
  std::map<std::string, std::string> method_status;
  std::vector<std::map<std::string, int>> kernel_mix;
  bool operator==(const SassRecord&) const = default;
};

struct ReusedRecord {  // reused.json: the results database's record that stood for the candidate (issue 39)
  bool recorded = false;  // the file has its record (an object): without it the candidate is read as measured
  std::string marker;
  int64_t record_id = 0;
  std::string run_dir, recorded_at, run_status;
  std::optional<double> median_ms;
  bool operator==(const ReusedRecord&) const = default;
};

// ---- an iteration's directory ---------------------------------------------------------------------------------

struct SelectionEntry {  // selection.json finalists[]
  std::string finalist, decision, reason, incumbent;
  std::optional<util::Json> error, comparison;  // comparison: runner::PairedComparison's JSON, shown as written
  bool operator==(const SelectionEntry&) const = default;
};

struct MethodAblation {  // ablation.json methods[]
  std::string method, verdict, sass;
  std::optional<util::Json> attribution_ms, comparison, ablated_status, ablated_note;
  bool operator==(const MethodAblation&) const = default;
};

// A parameter change reverted alone (loop::ParamAblation's JSON, loop/state.cpp): ablation.json's params[] and
// summary.json's param_ablations[]. Every field optional, so the page shows it as written. Its fields are named in
// record/summary_sections.h.
struct SavedMs {  // what reverting the change cost, with its 95% CI
  double median = 0, ci95_low = 0, ci95_high = 0;
  bool operator==(const SavedMs&) const = default;
};
struct ParamAblationRecord {
  std::optional<int64_t> iteration, champion_value, baseline_value;
  std::optional<std::string> champion_id, param, variant_id, effect, effect_text, note;
  std::optional<SavedMs> saved_ms;
  std::optional<util::Json> comparison;  // ablation.json's: the race's runner::PairedComparison, shown as written
  bool operator==(const ParamAblationRecord&) const = default;
};

struct AblationRecord {  // ablation.json
  std::vector<MethodAblation> methods;
  std::vector<ParamAblationRecord> params;
  bool operator==(const AblationRecord&) const = default;
};

// ---- JSON: to_json writes exactly what the loop writes; from_json throws RecordError naming the field --------

util::Json to_json(const Wall& w);
util::Json to_json(const CandidateConfig& c);
util::Json to_json(const ChampionEntry& c);
util::Json to_json(const HistoryEntry& h);
util::Json to_json(const KernelResources& k);
util::Json to_json(const BuildRecord& b);
util::Json to_json(const Timing& t);
util::Json to_json(const RunResult& r);
util::Json to_json(const SassRecord& s);
util::Json to_json(const ReusedRecord& r);
util::Json to_json(const SelectionEntry& s);
util::Json to_json(const MethodAblation& m);
util::Json to_json(const AblationRecord& a);
util::Json to_json(const StateRecord& s);

// `where` names the field for errors ("history[2].candidate"); empty at a file's top.
Wall wall_from_json(const util::Json& j, const std::string& where = "wall");
CandidateConfig candidate_config_from_json(const util::Json& j, const std::string& where = "");
ChampionEntry champion_entry_from_json(const util::Json& j, const std::string& where = "");
HistoryEntry history_entry_from_json(const util::Json& j, const std::string& where = "");
KernelResources kernel_resources_from_json(const util::Json& j, const std::string& where = "");
BuildRecord build_record_from_json(const util::Json& j);
Timing timing_from_json(const util::Json& j, const std::string& where = "timing");
RunResult run_result_from_json(const util::Json& j);
SassRecord sass_record_from_json(const util::Json& j);
ReusedRecord reused_record_from_json(const util::Json& j);
SelectionEntry selection_entry_from_json(const util::Json& j, const std::string& where = "");
std::vector<SelectionEntry> selection_from_json(const util::Json& j);  // selection.json
MethodAblation method_ablation_from_json(const util::Json& j, const std::string& where = "");
AblationRecord ablation_record_from_json(const util::Json& j);
StateRecord state_record_from_json(const util::Json& j);

// A record from a parsed file: the error names the file ("RUN/iter_01/candidates/i1c1/build.json: resources[0].
// registers: expected a number, found a string").
template <class T, class F>
Result<T> parse_file(const util::Json& j, const std::string& file, F&& from_json) {
  try {
    return from_json(j);
  } catch (const RecordError& e) {
    return input_error(file + ": " + e.what());
  } catch (const std::exception& e) {
    return input_error(file + ": " + e.what());
  }
}

// Reads and parses one file of a run directory; the error names it (absent, not JSON, or a field of a wrong type).
Result<StateRecord> read_state(const std::string& path);

}  // namespace kopt::record
