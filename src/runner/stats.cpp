#include "runner/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kopt::runner {

std::string_view describe(Stability s) {
  switch (s) {
    case Stability::kStable: return "stable";
    case Stability::kBorderline: return "borderline";
    case Stability::kUnstable: return "unstable";
  }
  return "?";
}

std::string_view describe(Verdict v) {
  switch (v) {
    case Verdict::kFaster: return "faster";
    case Verdict::kSame: return "same";
    case Verdict::kSlower: return "slower";
    case Verdict::kAmbiguous: return "ambiguous";
  }
  return "?";
}

double quantile_sorted(const std::vector<double>& s, double q) {
  if (s.empty()) return 0;
  double pos = q * static_cast<double>(s.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, s.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return s[lo] * (1 - frac) + s[hi] * frac;
}

std::pair<size_t, size_t> median_ci_ranks(size_t n) {
  if (n == 0) return {0, 0};
  // Normal approximation to the binomial(n, 1/2): ranks n/2 -+ 1.96 sqrt(n)/2 (1-based), clamped.
  double half = 1.96 * std::sqrt(static_cast<double>(n)) / 2.0;
  double lo1 = std::floor(static_cast<double>(n) / 2.0 - half);
  double hi1 = std::ceil(static_cast<double>(n) / 2.0 + 1.0 + half);
  size_t lo = lo1 < 1 ? 0 : static_cast<size_t>(lo1) - 1;
  size_t hi = hi1 > static_cast<double>(n) ? n - 1 : static_cast<size_t>(hi1) - 1;
  return {lo, hi};
}

TimingStats compute_stats(std::vector<double> v) {
  TimingStats s;
  s.samples = static_cast<int>(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.median_ms = quantile_sorted(v, 0.5);
  s.mean_ms = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  s.min_ms = v.front();
  s.max_ms = v.back();
  s.p10_ms = quantile_sorted(v, 0.1);
  s.p90_ms = quantile_sorted(v, 0.9);
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::fabs(x - s.median_ms));
  std::sort(dev.begin(), dev.end());
  s.mad_ms = quantile_sorted(dev, 0.5);
  s.robust_cv = s.median_ms > 0 ? 1.4826 * s.mad_ms / s.median_ms : 0;
  auto [lo, hi] = median_ci_ranks(v.size());
  s.ci95_low_ms = v[lo];
  s.ci95_high_ms = v[hi];
  s.ci95_rel_halfwidth = s.median_ms > 0 ? (s.ci95_high_ms - s.ci95_low_ms) / 2.0 / s.median_ms : 0;
  if (s.samples < 5) s.stability = Stability::kUnstable;
  else if (s.robust_cv <= 0.02 && s.ci95_rel_halfwidth <= 0.01) s.stability = Stability::kStable;
  else if (s.robust_cv <= 0.05) s.stability = Stability::kBorderline;
  else s.stability = Stability::kUnstable;
  return s;
}

util::Json to_json(const TimingStats& s) {
  return {{"samples", s.samples},     {"median_ms", s.median_ms},   {"mean_ms", s.mean_ms},
          {"min_ms", s.min_ms},       {"max_ms", s.max_ms},         {"p10_ms", s.p10_ms},
          {"p90_ms", s.p90_ms},       {"mad_ms", s.mad_ms},         {"robust_cv", s.robust_cv},
          {"ci95_low_ms", s.ci95_low_ms}, {"ci95_high_ms", s.ci95_high_ms},
          {"ci95_rel_halfwidth", s.ci95_rel_halfwidth}, {"stability", describe(s.stability)}};
}

PairedComparison compare_paired(const std::vector<double>& inc, const std::vector<double>& cand, double min_effect) {
  PairedComparison p;
  size_t n = std::min(inc.size(), cand.size());
  p.rounds = static_cast<int>(n);
  if (n < 5) return p;  // too few rounds: ambiguous
  std::vector<double> ratio, diff;
  for (size_t i = 0; i < n; ++i) {
    if (inc[i] <= 0) continue;
    ratio.push_back(cand[i] / inc[i]);
    diff.push_back(inc[i] - cand[i]);  // positive: the candidate saved time
  }
  if (ratio.size() < 5) return p;
  std::sort(ratio.begin(), ratio.end());
  std::sort(diff.begin(), diff.end());
  auto [lo, hi] = median_ci_ranks(ratio.size());
  p.median_ratio = quantile_sorted(ratio, 0.5);
  p.ci95_low = ratio[lo];
  p.ci95_high = ratio[hi];
  p.median_diff_ms = quantile_sorted(diff, 0.5);
  p.diff_ci95_low_ms = diff[lo];
  p.diff_ci95_high_ms = diff[hi];
  if (p.ci95_high < 1.0 - min_effect) p.verdict = Verdict::kFaster;
  else if (p.ci95_low > 1.0 + min_effect) p.verdict = Verdict::kSlower;
  else if (p.ci95_low >= 1.0 - min_effect && p.ci95_high <= 1.0 + min_effect) p.verdict = Verdict::kSame;
  else p.verdict = Verdict::kAmbiguous;
  return p;
}

util::Json to_json(const PairedComparison& p) {
  return {{"rounds", p.rounds},
          {"median_ratio", p.median_ratio},
          {"ci95_low", p.ci95_low},
          {"ci95_high", p.ci95_high},
          {"median_saved_ms", p.median_diff_ms},
          {"saved_ci95_low_ms", p.diff_ci95_low_ms},
          {"saved_ci95_high_ms", p.diff_ci95_high_ms},
          {"verdict", describe(p.verdict)}};
}

}  // namespace kopt::runner
