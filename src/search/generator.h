#pragma once
// The one interface behind which candidates are generated: the built-in strategy (builtin_generator.h)
// or an external command (external_generator.h). The loop fills a GeneratorInput per iteration and gets
// K candidates back, as plain data, never one already measured.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/axis.h"
#include "core/result.h"
#include "search/candidate.h"
#include "search/method.h"
#include "search/registry.h"
#include "search/space.h"
#include "search/strategy.h"
#include "util/json_io.h"

namespace kopt::search {

// The method budget of one iteration: how many methods each axis may add (the roofline splits it).
struct Plan {
  std::map<Axis, int> slots;
};

// What became of a measured candidate.
enum class CandidateStatus { kOk, kCompileFailed, kIncorrect, kCrashed, kTimedOut };
std::string_view candidate_status_name(CandidateStatus s);
std::string_view describe(CandidateStatus s);

struct Measurement {
  Candidate candidate;
  CandidateStatus status = CandidateStatus::kOk;
  std::optional<double> median_ms;  // set when status is kOk
  int iteration = 0;
  double search_s = 0;  // when it was measured: seconds of search since the gates passed (loop bookkeeping)
  // What it cost (loop bookkeeping, 0 when unknown), wall milliseconds: its compile (the nvcc process; compiles
  // of a batch run in parallel), its SASS analysis, its measuring run (the race against the champion) and, over a
  // workload matrix, its races or checks at the other cases.
  double compile_ms = 0, sass_ms = 0, measure_ms = 0, cases_ms = 0;
  // Over a workload matrix, what selection ranks by: the champion's objective times this candidate's weighted
  // geometric mean of per-case time ratios against it, in the primary case's milliseconds. Unset: median_ms.
  std::optional<double> objective_ms;
  std::optional<double> ranked_ms() const { return objective_ms ? objective_ms : median_ms; }
  // A failure that left this share of an output never written (the runner's unwritten_output: elements still at the
  // poison pattern over the output's elements, the largest over outputs): the feasibility model's signal
  // (search/feasibility.h). nullopt: correct, or a failure of another kind.
  std::optional<double> unwritten_fraction;
  // Built but not measured: the feasibility model predicted it infeasible after a failure earlier in its batch (the
  // reason; its status is then kIncorrect). nullopt: measured (or reused).
  std::optional<std::string> predicted_infeasible;
  // Not measured in this run: the results database's record of the same configuration under the same key stood for it
  // (issue 39 item 2; loop/reuse.h reused_json: record_id, run_dir, recorded_at, median_ms, verdict). null: measured here.
  util::Json reused = nullptr;
};

// The ablation's judgement of one method in a champion.
// kMeasuredEffective: the SASS cannot confirm the method (it has no signature, or it is a compiler flag), but the
// ablation measured a saving: switching it off costs time, the 95% CI above zero. kEffective needs both.
enum class Verdict { kEffective, kMeasuredEffective, kIneffective, kImplementationFailed, kUnverified, kNotAblatable };
std::string_view verdict_name(Verdict v);
std::string_view describe(Verdict v);
std::optional<Verdict> parse_verdict(std::string_view s);

struct MethodVerdict {
  std::string method;
  Verdict verdict = Verdict::kUnverified;
  int iteration = 0;
  // The ablation measured a significant saving (time without the method > time with it, the 95% CI above
  // zero), whatever the SASS said. A method whose SASS cannot confirm it (no signature: smem_padding, flag
  // methods) is then "effective_measured", and the search keeps it on.
  bool measured_gain = false;
  // The profile the verdict was made under: a method judged ineffective is offered again only when
  // evidence fires now that did not fire then. Empty: treated as unchanged.
  std::map<std::string, double> metrics;
  // What switching the method off cost the champion (ms; positive: the method saves time), when it was ablated.
  std::optional<double> saved_ms, saved_ci95_low_ms, saved_ci95_high_ms;
};

// Extra facts for an external generator's brief; the built-in generator ignores them.
struct BriefContext {
  std::map<std::string, int64_t> dims;
  std::string contract_signature;  // the solve() declaration; derived from the champion's source when empty
  util::Json roofline;             // the champion's roofline position (any JSON object the roofline stage writes)
  util::Json sass_summary;         // resources and instruction mix of the champion
};

// What compiling and checking one candidate found, for a generator that repairs what failed (llm_generator.h).
struct CheckFeedback {
  CandidateStatus status = CandidateStatus::kOk;
  std::string details;  // the compiler's errors, the first mismatches, or how the run ended; empty when ok
};

// Supplied by the loop: compiles a candidate and runs the correctness check on every seed (no timing).
// An error means the check itself could not run (not a verdict on the candidate). Calls come one at a time.
class CandidateChecker {
 public:
  virtual ~CandidateChecker() = default;
  virtual Result<CheckFeedback> check(const Candidate& c) = 0;
};

struct GeneratorInput {
  int iteration = 1;
  int k = 4;          // candidates wanted
  uint64_t seed = 1;  // the built-in strategy is deterministic for a seed
  Plan plan;
  NumericsMode numerics = NumericsMode::kReference;
  Backend backend = Backend::kCuda;
  int arch = 90;
  const Registry* registry = nullptr;
  const SearchSpace* space = nullptr;
  std::filesystem::path iteration_dir;  // exists; generators write only below it
  std::filesystem::path baseline_source;
  std::optional<Measurement> champion;  // the incumbent (the baseline in iteration 1)
  std::vector<Measurement> history;     // every candidate measured so far, champion included
  // The champions' ablation variants measured so far (a champion with one method off): configurations the loop
  // measured besides the candidates, which the search learns from and does not propose again.
  std::vector<Measurement> ablations;
  std::vector<MethodVerdict> verdicts;  // every verdict so far
  std::map<std::string, double> metrics;  // the champion's profile, keyed by ncu metric name
  // Points of `space` to measure first (the warm start: the best configurations of the nearest shapes the results
  // database holds, loop/warm_start.h), each with its reason. The built-in generator leads its batches with those
  // not yet measured; other generators ignore them.
  std::vector<Suggestion> warm_start;
  // Per method id, a bounded bonus added to its evidence score when methods are ranked for the budget's slots
  // (the strategy memory: what paid off at this roofline position in past runs, loop/strategy_memory.h). It reorders
  // methods whose evidence fires; it never picks one whose evidence does not, and never removes one.
  std::map<std::string, double> method_bonus;
  BriefContext context;
  CandidateChecker* checker = nullptr;  // optional: lets a generator repair a failing candidate before returning it
};

// One method chosen for this iteration, with the evidence that called for it.
struct MethodPick {
  std::string id;
  Axis axis = Axis::kMemory;
  double score = 0;                // larger: stronger evidence
  std::vector<std::string> fired;  // "dram__throughput... = 82.1 > 60: why"
  std::string required_by;         // set when picked only because another pick requires it
};
struct MethodSkip {
  std::string id;
  std::string reason;
};
struct MethodSelection {
  std::vector<MethodPick> picks;
  std::vector<MethodSkip> skipped;
  // Offered methods the search may switch on whatever the profile says: usable on this device, backend and
  // numerics mode, and not judged ineffective (or failed) under the evidence that still holds. Picks and methods
  // already on in the champion included.
  std::vector<std::string> explorable;
  std::vector<std::string> ids() const;
};

// A configuration the feasibility model (search/feasibility.h) predicts infeasible: left out of the search unmeasured.
struct PredictedInfeasible {
  Config config;
  std::string key;     // SearchSpace::key
  std::string reason;  // InfeasiblePrediction::reason
};

struct GeneratorOutput {
  std::vector<Candidate> candidates;
  MethodSelection selection;
  std::vector<std::string> notes;  // what the generator decided and why, for the iteration's record
  // A model-based generator's view of what is left in the whole space (the loop's stopping rules read it);
  // nullopt from generators without a model.
  std::optional<Outlook> outlook;
  // Candidates the generator checked (GeneratorInput::checker) and dropped because they still failed after its
  // repairs: not to be measured, but to be added to the history so later briefs show what failed.
  std::vector<Measurement> checked_failures;
  // The batch lies beyond what the evidence allows (every configuration it allows was measured): the loop's
  // exploration rule (loop/decisions.h, StopState::explore_patience) counts such iterations without a gain.
  bool exploring = false;
  // The built-in generator's feasibility model: unmeasured configurations (compiler flags at their defaults) it
  // predicts infeasible and the search no longer proposes, each with its reason; the loop records them as pruned.
  std::vector<PredictedInfeasible> predicted_infeasible;
};

class Generator {
 public:
  virtual ~Generator() = default;
  virtual std::string name() const = 0;
  virtual Result<GeneratorOutput> generate(const GeneratorInput& in) = 0;
};

util::Json to_json(const MethodSelection& s);

}  // namespace kopt::search
