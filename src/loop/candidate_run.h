#pragma once
// What the optimize loop's files share beside the Optimizer class (loop/optimizer.h): a candidate carried through
// compile, SASS and measurement, what a selection decided, the gates that reject, and the summary's tables made from
// the history. Internal to the loop, as optimizer.h is.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compile/request.h"
#include "db/record.h"
#include "loop/multi_case.h"
#include "runner/outcome.h"
#include "runner/stats.h"
#include "search/generator.h"
#include "util/json_io.h"
#include "workload/matrix.h"

namespace kopt::loop {

// One candidate carried through compile, SASS and measurement.
struct CandidateRun {
  search::Candidate candidate;
  compile::CompileResult build;
  runner::RunOutcome outcome;
  search::CandidateStatus status = search::CandidateStatus::kOk;
  std::string note;
  util::Json sass = util::Json::object();  // {"kernels": mix per function, "methods": id -> verification}
  // Raced against the champion (CUDA/CUTLASS): the paired comparison, time(candidate) / time(champion).
  std::optional<runner::PairedComparison> vs_champion;
  // Over a workload matrix (CUDA/CUTLASS): raced against the champion at every case, and what selection ranks by
  // (search::Measurement::objective_ms).
  std::optional<MultiCaseComparison> over_cases;
  std::optional<double> objective_ms;
  double sass_ms = 0, measure_ms = 0;  // wall time of its SASS analysis and of its measuring run
  double cases_ms = 0;                 // wall time of its races (or checks) at the workload matrix's other cases
  double search_s = 0;                 // the search clock when it was measured
  int slot = -1;                       // the measuring slot (GPU) it was measured on
  // Not measured: the results database's record under the same key stands for it (loop/reuse.h). Its outcome then
  // holds the stored figures, vs_champion the stored race when it was against this champion; build is empty.
  std::optional<db::Record> reused;
  std::string reuse_reason;  // why it was reused, then (a finalist) why its stored figures keep it behind
  // Built, not measured: the feasibility model predicted it infeasible after failures earlier in the batch
  // (search/feasibility.h; its status is then kIncorrect, `note` the reason). Never recorded in the results database.
  bool predicted_infeasible = false;
};

// A candidate's run as the search sees it (a history or ablation entry): its candidate, status, iteration and times
// (and the record that stood for it when it was reused).
search::Measurement measurement_of(const CandidateRun& r, int iteration);

// What one iteration's selection decided.
struct SelectionResult {
  bool improved = false;  // a new champion, significantly faster than the old one
  util::Json record = util::Json::array();
};

// The gate that rejected a candidate (state.json gate_records.rejected[].gate, by name).
enum class RejectGate { kCases, kRegression, kDeterminism, kSanitizer, kSpeedOfLight, kEphemeralSeed };
std::string_view reject_gate_name(RejectGate g);

// What a run reused from the results database (summary.json's "reuse"): {"evaluations" (candidates and ablation
// variants, the baseline not counted), "reused", "raced_again" (ids), "records": [{id, iteration, status, ablation,
// record_id, run_dir, recorded_at, median_ms, verdict}]}. An evaluation raced again is not reused: reused +
// raced_again <= evaluations.
util::Json reuse_summary(const std::vector<search::Measurement>& history, const std::vector<search::Measurement>& ablations,
                         const std::vector<std::string>& raced_again);

// The per-candidate cost split of a run (summary.json's candidate_costs): medians and p90 over measured candidates.
util::Json candidate_costs(const std::vector<search::Measurement>& history);

// A case of the workload matrix with its golden data (the Optimizer's cases_; issue 18, docs/GATES.md).
struct CaseData {
  workload::Case c;
  std::filesystem::path golden_dir;
  util::Json manifest;
  // golden_dir as a Triton timed child is given it (`--also-check`) and names it back in its result's "cases".
  std::filesystem::path golden_arg() const { return std::filesystem::absolute(golden_dir).lexically_normal(); }
};

// A measuring slot (one GPU, or a Ray actor's): its name in progress lines and the summary.
struct SlotInfo {
  std::string name;
};

// Which stored records may stand for a batch's configurations: any (candidates), only those raced against this
// champion (an ablation's variants: their race is the attribution), none (a reused finalist raced again).
enum class ReuseMode { kAny, kRacedAgainstChampion, kNever };

// The candidate's own outcome in a race (a paired run of [champion, candidate]): its status, message and, when
// correct, the timing of its rounds. A run that died says so for the candidate (the worker names the library
// that broke the context; the champion was already proven).
runner::RunOutcome raced_outcome(const runner::RunOutcome& paired);

// Appends `item` to the array records[key] (made when absent): state.json's gate records.
void push_record(util::Json& records, const char* key, util::Json item);

}  // namespace kopt::loop
