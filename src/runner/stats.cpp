#include "runner/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

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

namespace {
// ln Γ(x) without std::lgamma's write of the global `signgam` (a data race when several measuring slots compute
// statistics at once, found by ThreadSanitizer): lgamma_r keeps the sign in a local. Arguments here are >= 1.
double log_gamma(double x) {
  int sign = 0;
  return ::lgamma_r(x, &sign);
}
}  // namespace

MedianCi median_ci(size_t n, double confidence) {
  // Distribution-free: the median lies between the order statistics x(l) and x(n-l+1) (1-based) with probability
  // 1 - 2 P(B <= l-1), B ~ Binomial(n, 1/2). l is the largest rank with P(B <= l-1) <= (1 - confidence)/2 (and
  // l <= n/2). The CDF is summed in log space, so any n works.
  MedianCi ci;
  if (n == 0) return ci;
  const double alpha_half = (1.0 - confidence) / 2.0;
  const double nd = static_cast<double>(n);
  const double log_total = nd * std::log(2.0), lg_n = log_gamma(nd + 1.0);
  double cdf = 0, tail = 0;
  size_t l = 0;
  for (size_t k = 0; k < n / 2; ++k) {
    const double kd = static_cast<double>(k);
    cdf = std::min(1.0, cdf + std::exp(lg_n - log_gamma(kd + 1.0) - log_gamma(nd - kd + 1.0) - log_total));
    if (cdf > alpha_half) break;
    l = k + 1;
    tail = cdf;
  }
  if (l == 0) {  // too few samples to reach `confidence`: [min, max] and its own coverage
    ci.low_rank = 0;
    ci.high_rank = n - 1;
    ci.coverage = 1.0 - 2.0 * std::pow(0.5, nd);
  } else {
    ci.low_rank = l - 1;
    ci.high_rank = n - l;
    ci.coverage = 1.0 - 2.0 * tail;
  }
  return ci;
}

std::pair<size_t, size_t> median_ci_ranks(size_t n) {
  auto ci = median_ci(n);
  return {ci.low_rank, ci.high_rank};
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
  const MedianCi ci = median_ci(v.size());
  s.ci95_low_ms = v[ci.low_rank];
  s.ci95_high_ms = v[ci.high_rank];
  s.ci_coverage = ci.coverage;
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
          {"ci95_rel_halfwidth", s.ci95_rel_halfwidth}, {"ci_coverage", s.ci_coverage},
          {"stability", describe(s.stability)}};
}

bool ci_within(const TimingStats& s, double rel, double confidence) {
  const double m = s.median_ms;
  return s.samples > 0 && s.ci_coverage >= confidence && m > 0 && (m - s.ci95_low_ms) <= rel * m &&
         (s.ci95_high_ms - m) <= rel * m;
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

bool usable(const PairedComparison& p) { return p.rounds >= 5 && p.ci95_low > 0 && p.ci95_high > 0 && p.median_ratio > 0; }

std::string summarize(const PairedComparison& p) {
  if (!usable(p)) return fmt::format("no usable comparison ({} paired rounds)", p.rounds);
  return fmt::format("{} (time ratio {:.3f}, 95% CI [{:.3f}, {:.3f}], {} paired rounds)", describe(p.verdict), p.median_ratio,
                     p.ci95_low, p.ci95_high, p.rounds);
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
