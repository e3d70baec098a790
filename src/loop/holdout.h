#pragma once
// The verdict of the held-out shapes (issue 18; the shapes: workload/holdout.h), pure over the runner's results.
//  * pass:            the baseline and the champion are both correct (their times compared);
//  * outside_domain:  the baseline itself fails here: the shape is outside the kernel's domain, whatever the
//                     champion does (said, with the baseline's reason; a champion that passes is noted);
//  * champion_fails:  the baseline passes and the champion does not: reported with the first bad index (output,
//                     seed, flat index, coordinates, expected and actual values) from the runner's comparison;
//  * not_run:         interrupted or not measured.
// Any champion_fails makes summarize_holdout() produce a warning that must accompany the champion wherever it
// is presented as the result (summary headline, summary.md, the champion file's header).
#include <optional>
#include <string>
#include <vector>

#include "runner/outcome.h"
#include "util/json_io.h"
#include "workload/matrix.h"

namespace kopt::loop {

// The timing budget (s) of each held-out run (the champion's and the baseline's at each shape): their times are
// indicative, so a short budget; the checks are the full ones.
inline constexpr double kHoldoutTimeBudgetS = 0.5;
// Their median's 95 % CI target (relative half-width): 3 %, not the search's 1 % (runner::RunRequest::target_ci). On the
// H100 at vector_add 2^23 the 1 % target took 65 samples, 190 ms a run, 1.5 s of the run's 2 s of held-out shapes.
inline constexpr double kHoldoutTargetCi = 0.03;

enum class HoldoutVerdict { kPass, kOutsideDomain, kChampionFails, kNotRun };
std::string_view holdout_verdict_name(HoldoutVerdict v);
std::string_view describe(HoldoutVerdict v);

// One contender's run at a held-out shape (check or time mode): the runner's status, message, result JSON.
struct HoldoutRun {
  runner::RunStatus status = runner::RunStatus::kInterrupted;
  std::string message;
  util::Json details;                // the runner result (its "seeds"/"recheck" comparisons)
  std::optional<double> median_ms;   // time mode, when correct
  std::string from_cache;            // non-empty: a correct run of the same code and inputs kept by an earlier run
};
HoldoutRun holdout_run_from(const runner::RunOutcome& o);
// A correct run as the evidence cache keeps it (util/keyed_store.h), and back: nullopt for anything but a correct,
// timed run.
util::Json to_json(const HoldoutRun& r);
std::optional<HoldoutRun> holdout_run_from_json(const util::Json& j);

// The first element that failed the comparison, from a runner result: every seed's outputs in order (then the
// recheck after timing), else the first modified input.
struct FirstBad {
  std::string buffer;
  int seed = -1;
  int64_t index = -1;
  std::vector<int64_t> coords;
  std::optional<double> expected, actual;  // null for NaN/Inf written as text
  bool input_modified = false;
  std::string text() const;  // "output C, seed 0: first bad index 1234 [0,1234]: expected 1.5, got nan"
};
std::optional<FirstBad> first_bad_element(const util::Json& runner_result);

struct HoldoutCaseResult {
  workload::Case shape;
  HoldoutVerdict verdict = HoldoutVerdict::kNotRun;
  HoldoutRun baseline, champion;
  std::optional<FirstBad> first_bad;  // the champion's, for champion_fails
  std::string text;                   // one line for the summary
};
HoldoutCaseResult judge_holdout_case(const workload::Case& shape, const HoldoutRun& baseline, const HoldoutRun& champion);

struct HoldoutSummary {
  std::vector<HoldoutCaseResult> cases;
  int passed = 0, outside_domain = 0, champion_fails = 0, not_run = 0;
  std::string warning;  // non-empty when the champion fails at a shape where the baseline passes
  std::string note;     // e.g. why no shape was derived
};
HoldoutSummary summarize_holdout(std::vector<HoldoutCaseResult> cases, const std::string& note = "");
util::Json to_json(const HoldoutSummary& s);

}  // namespace kopt::loop
