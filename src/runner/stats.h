#pragma once
// Timing statistics: pure functions over samples (milliseconds).
#include <cstddef>
#include <string_view>
#include <utility>
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
  double ci95_low_ms = 0, ci95_high_ms = 0;  // distribution-free CI of the median (exact order statistics)
  double ci95_rel_halfwidth = 0;             // (high - low) / 2 / median
  double ci_coverage = 0;                    // the CI's exact coverage (>= 0.95 from 6 samples on; less below)
  Stability stability = Stability::kUnstable;
};

// One implementation of every timing statistic, for every backend (CUDA, CUTLASS, Triton): the children return
// raw samples and runner::interpret computes these from them. The Python harness keeps only what its stopping
// rule needs (python/kopt_harness/stats.py); both are checked against tests/data/stats/vectors.json.
//
// Percentiles interpolate linearly between order statistics (numpy's default, Hyndman-Fan type 7).
// Documented thresholds: stable when robust CV <= 2% and the CI half-width <= 1%; borderline when robust CV
// <= 5%; unstable otherwise (or fewer than 5 samples).
TimingStats compute_stats(std::vector<double> samples_ms);
double quantile_sorted(const std::vector<double>& sorted, double q);  // linear interpolation
// The distribution-free confidence interval of the median of n sorted samples: the order statistics of 0-based
// ranks low_rank and high_rank (x(l) and x(n-l+1), 1-based, with l the largest rank such that
// P(Binomial(n, 1/2) <= l-1) <= (1 - confidence)/2), and its exact coverage 1 - 2 P(Binomial(n, 1/2) <= l-1).
// Below 6 samples no pair reaches 95%: [min, max] with coverage 1 - 2^(1-n).
struct MedianCi {
  size_t low_rank = 0, high_rank = 0;
  double coverage = 0;
};
MedianCi median_ci(size_t n, double confidence = 0.95);
std::pair<size_t, size_t> median_ci_ranks(size_t n);  // median_ci(n)'s ranks

// The stopping rule of every timing loop: the CI really reaches `confidence` and lies within +-rel of the
// median on both sides (python/kopt_harness/stats.py's ci_within is its twin).
bool ci_within(const TimingStats& s, double rel, double confidence = 0.95);

util::Json to_json(const TimingStats& s);

// Paired comparison of two interleaved sample series (same length): ratio b/a per round; the median ratio
// and its distribution-free 95% CI. verdict: faster (CI entirely < 1 - min_effect), slower (> 1 + min_effect),
// same (CI within [1 - min_effect, 1 + min_effect]), ambiguous otherwise.
enum class Verdict { kFaster, kSame, kSlower, kAmbiguous };
// The noise band of every paired verdict: |ratio - 1| below it is "the same" (races, selection, the cases, dispatch).
inline constexpr double kMinEffect = 0.01;
std::string_view describe(Verdict v);
struct PairedComparison {
  int rounds = 0;
  double median_ratio = 1, ci95_low = 0, ci95_high = 0;  // time(candidate) / time(incumbent)
  double median_diff_ms = 0, diff_ci95_low_ms = 0, diff_ci95_high_ms = 0;  // incumbent - candidate... see .cpp
  Verdict verdict = Verdict::kAmbiguous;
};
PairedComparison compare_paired(const std::vector<double>& incumbent_ms, const std::vector<double>& candidate_ms,
                                double min_effect = kMinEffect);
util::Json to_json(const PairedComparison& p);
// Whether `p` gives a ratio with a confidence interval (5 rounds or more, every figure above zero): a race cut before
// that, or one whose samples all failed, compares nothing.
bool usable(const PairedComparison& p);
// "faster (time ratio 0.835, 95% CI [0.828, 0.842], 18 paired rounds)", or for one that is not usable "no usable
// comparison (3 paired rounds)".
std::string summarize(const PairedComparison& p);

}  // namespace kopt::runner
