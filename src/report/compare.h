#pragma once
// Two runs side by side: the baselines, the champions, and every configuration measured correct in both, each
// with its time ratio B/A and that ratio's 95% CI from runner::compare_paired over the two runs' timing samples.
// Pure: takes two load_run documents (with samples).
#include <string>

#include "util/json_io.h"

namespace kopt::report {

// {"a": {run facts}, "b": {...}, "rows": [{"what": baseline|champion|same_configuration, "id_a", "id_b",
//  "a": {median_ms, ci95_low_ms, ci95_high_ms, samples}, "b": {...}, "ratio": {median_ratio, ci95_low, ci95_high,
//  rounds, verdict} | null, "ratio_of_medians"}], "notes": [...]}.
// The ratio pairs the i-th sample of A with the i-th of B (as many rounds as the shorter series). Samples of two
// runs are independent draws, so the CI is that of the median of B_i/A_i: wider than a paired comparison in
// one session, and it includes any drift between the sessions. verdict: B faster / same / slower / ambiguous
// (runner::compare_paired's, with its 1% minimum effect). Same configuration: equal content hashes (source text,
// flags, defines, constexprs, launch).
// "decisions": report/decisions.h's DecisionsDiff: whether the two runs proposed the same configurations in each
// iteration, crowned the same ones, gave the same ablation verdicts and stopped for the same reason (two kopt builds
// on the same seeds: docs/REPORT.md "kopt compare").
util::Json compare_runs(const util::Json& a, const util::Json& b);

// The table for people.
std::string format_compare(const util::Json& comparison);
// The table as CSV (RFC 4180, CRLF): what,id_a,id_b,a_median_ms,a_ci95_low_ms,a_ci95_high_ms,b_median_ms,
// b_ci95_low_ms,b_ci95_high_ms,ratio,ratio_ci95_low,ratio_ci95_high,rounds,verdict (ratio: the median ratio, or the
// ratio of medians where there are too few samples for a CI; the CI cells are then empty).
std::string compare_csv(const util::Json& comparison);

}  // namespace kopt::report
