#pragma once
// Timing statistics: pure functions over samples (milliseconds).
#include <string_view>
#include <vector>

#include "util/json_io.h"

namespace kopt::runner {

enum class Stability { kStable, kBorderline, kUnstable };
std::string_view describe(Stability s);

struct TimingStats {
  int samples = 0;
  double median_ms = 0, mean_ms = 0, min_ms = 0, max_ms = 0, p10_ms = 0, p90_ms = 0;
  double mad_ms = 0;        // median absolute deviation
  double robust_cv = 0;     // 1.4826 * MAD / median
  double ci95_low_ms = 0, ci95_high_ms = 0;  // distribution-free CI of the median (order statistics)
  double ci95_rel_halfwidth = 0;             // (high - low) / 2 / median
  Stability stability = Stability::kUnstable;
};

// Documented thresholds: stable when robust CV <= 2% and the CI half-width <= 1%; borderline when robust CV
// <= 5%; unstable otherwise (or fewer than 5 samples).
TimingStats compute_stats(std::vector<double> samples_ms);
double quantile_sorted(const std::vector<double>& sorted, double q);  // linear interpolation
// Ranks (0-based, inclusive) bounding the median's 95% CI for n sorted samples.
std::pair<size_t, size_t> median_ci_ranks(size_t n);

util::Json to_json(const TimingStats& s);

// Paired comparison of two interleaved sample series (same length): ratio b/a per round; the median ratio
// and its distribution-free 95% CI. verdict: faster (CI entirely < 1 - min_effect), slower (> 1 + min_effect),
// same (CI within [1 - min_effect, 1 + min_effect]), ambiguous otherwise.
enum class Verdict { kFaster, kSame, kSlower, kAmbiguous };
std::string_view describe(Verdict v);
struct PairedComparison {
  int rounds = 0;
  double median_ratio = 1, ci95_low = 0, ci95_high = 0;  // time(candidate) / time(incumbent)
  double median_diff_ms = 0, diff_ci95_low_ms = 0, diff_ci95_high_ms = 0;  // incumbent - candidate... see .cpp
  Verdict verdict = Verdict::kAmbiguous;
};
PairedComparison compare_paired(const std::vector<double>& incumbent_ms, const std::vector<double>& candidate_ms,
                                double min_effect = 0.01);
util::Json to_json(const PairedComparison& p);

}  // namespace kopt::runner
