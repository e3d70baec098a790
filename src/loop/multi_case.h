#pragma once
// Selection over the cases of the workload matrix (issue 18), as pure functions over recorded comparisons.
//
// A finalist is compared with the incumbent at every case, each case in its own interleaved paired run
// (runner/stats.h compare_paired: the median of the per-round time ratios candidate/incumbent and its
// distribution-free 95% CI). The cases are combined into the weighted geometric mean of the median ratios,
//     G = exp(sum_i w_i ln r_i)      (weights normalised to sum 1),
// with a 95% CI by the delta method on the log scale: each case's CI [l_i, h_i] gives a standard error
// s_i = (ln h_i - ln l_i) / (2 x 1.96) of ln r_i (the order-statistic CI read as a normal one: symmetric on the
// log scale), the cases are independent runs, so s = sqrt(sum_i w_i^2 s_i^2) and the CI is exp(ln G -+ 1.96 s).
// The combined verdict uses compare_paired's thresholds. A case where the finalist is slower beyond the noise
// (its own verdict "slower": CI entirely above 1 + min_effect) is a regression: flagged in the reason, and the
// finalist is rejected under --no-regressions. Ablations compare at the same cases through the same function.
#include <optional>
#include <string>
#include <vector>

#include "core/dims.h"
#include "loop/decisions.h"
#include "runner/outcome.h"
#include "runner/stats.h"
#include "util/json_io.h"

namespace kopt::loop {

struct CaseComparison {
  std::string case_name;
  double weight = 1;
  runner::PairedComparison cmp;  // time(candidate) / time(incumbent) at this case
};

struct MultiCaseComparison {
  bool valid = false;  // every case had a usable comparison (>= 5 rounds, a positive CI)
  double geomean_ratio = 1, ci95_low = 0, ci95_high = 0;
  double log_se = 0;  // the delta method's standard error of ln G
  runner::Verdict verdict = runner::Verdict::kAmbiguous;
  int rounds = 0;     // summed over the cases
  std::vector<CaseComparison> cases;
  std::vector<std::string> regressions;  // "scale_0.5: 8.1% slower (95% CI [1.05, 1.11])"
  std::vector<std::string> invalid;      // cases without a usable comparison
  // The combined ratio as a PairedComparison (median_ratio = G), for decide() and the JSON of one comparison.
  runner::PairedComparison as_paired() const;
};

MultiCaseComparison combine_cases(const std::vector<CaseComparison>& cases, double min_effect = runner::kMinEffect);
util::Json to_json(const MultiCaseComparison& m);

// decide() (decisions.h) on the combined comparison; a finalist with a regression keeps the incumbent in place
// under `no_regressions`, and is flagged in the reason otherwise.
SelectionOutcome decide_over_cases(const Contender& incumbent, const Contender& finalist, const MultiCaseComparison& m,
                                   bool no_regressions);

// ---- Picking finalists over cases -------------------------------------------------------------------------
struct CaseTimes {
  std::string case_name;
  double weight = 1;
  double incumbent_ms = 0, candidate_ms = 0;  // medians of each one's own timing run at the case
};
// The weighted geometric mean of candidate/incumbent median times (unpaired): the key finalists are picked by
// (Contender::median_ms = the incumbent's time at the user's case x this ratio). nullopt when a time is missing.
std::optional<double> weighted_geomean_ratio(const std::vector<CaseTimes>& cases);

// ---- Correctness at every case -----------------------------------------------------------------------------
struct CaseCheck {
  std::string case_name;
  runner::RunStatus status = runner::RunStatus::kOk;
  std::string message;
};
struct AllCasesVerdict {
  bool correct = true;
  std::string first_failing_case;
  std::string reason;  // "wrong at case scale_0.5: output c: MISMATCH ..."
};
// A candidate must be correct at every case: the first case that is not says why.
AllCasesVerdict correct_at_every_case(const std::vector<CaseCheck>& checks);

// ---- The summary's per-case table ------------------------------------------------------------------------
struct CaseRow {
  std::string name;
  Dims requested, realised;
  double weight = 1;
  std::optional<double> baseline_ms, champion_ms;  // medians at the case
  std::optional<runner::PairedComparison> champion_vs_baseline;  // paired, when measured
  std::optional<double> floor_ms;                  // the roofline floor at the realised dims (workload_model)
  std::string note;
};
// {"cases": [{name, requested, realised, fitted, weight, baseline_ms, champion_ms, ratio (champion/baseline: the
// paired median when measured, else the ratio of the medians),
// speedup, ratio_ci95 [lo, hi] when paired, floor_ms, efficiency (floor/champion), note}], "geomean": {ratio,
// speedup, cases}}: null where a value is unknown; the geometric mean over the cases with both times.
util::Json case_table_json(const std::vector<CaseRow>& rows);

}  // namespace kopt::loop
