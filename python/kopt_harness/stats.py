"""Timing statistics, pure Python (no numpy), for the reference's timing (the same figures kopt reports).

Percentiles interpolate linearly between order statistics (numpy's default, Hyndman-Fan type 7). The 95%
confidence interval of the median is distribution-free: the order statistics x(l) and x(n-l+1), with l the
largest index such that P(Binomial(n, 1/2) <= l-1) <= (1-confidence)/2; its exact coverage is
1 - 2 P(Binomial(n, 1/2) <= l-1). Below 6 samples no pair of order statistics reaches 95%.

The twin of src/runner/stats.cpp for what the harness itself must decide or report: its stopping rule (ci_within) and
the reference's timing in the golden manifest (summarize). Both are checked against the C++ figures on
tests/data/stats/vectors.json (python/tests/test_stats.py, and Stats.SharedTestVectors in runner/stats_test.cpp).
"""

import math

MAD_TO_SIGMA = 1.4826  # 1 / Phi^-1(3/4): MAD * this estimates sigma for normal data


def _sorted(xs):
    s = sorted(float(x) for x in xs)
    if not s:
        raise ValueError("no samples")
    return s


def quantile(xs, q):
    """Linear-interpolation quantile (type 7), q in [0, 1]."""
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile {q} outside [0, 1]")
    s = _sorted(xs)
    pos = q * (len(s) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def median(xs):
    return quantile(xs, 0.5)


def mean(xs):
    s = _sorted(xs)
    return math.fsum(s) / len(s)


def mad(xs):
    """Median absolute deviation from the median (unscaled)."""
    m = median(xs)
    return median([abs(x - m) for x in xs])


def robust_cv(xs):
    """1.4826 * MAD / median: a coefficient of variation that outliers barely move."""
    m = median(xs)
    return MAD_TO_SIGMA * mad(xs) / m if m > 0 else math.inf


def _binom_half_cdf_terms(n):
    """Yields P(Binomial(n, 1/2) <= k) for k = 0, 1, ... (log space: fine for any n)."""
    log_total = n * math.log(2.0)
    lg_n = math.lgamma(n + 1)
    acc = 0.0
    for k in range(n + 1):
        acc += math.exp(lg_n - math.lgamma(k + 1) - math.lgamma(n - k + 1) - log_total)
        yield min(acc, 1.0)


def median_ci_ranks(n, confidence=0.95):
    """(l, u, coverage): 1-based ranks of the order statistics bounding the median's CI. When n is too
    small to reach `confidence`, (1, n, coverage of [min, max])."""
    if n < 1:
        raise ValueError("no samples")
    alpha_half = (1.0 - confidence) / 2.0
    l, tail = 0, 0.0
    for k, cdf in enumerate(_binom_half_cdf_terms(n)):
        if cdf > alpha_half or k >= n // 2:
            break
        l, tail = k + 1, cdf  # P(B <= l-1) = cdf <= alpha/2
    if l == 0:
        return 1, n, 1.0 - 2.0 * 0.5 ** n
    return l, n - l + 1, 1.0 - 2.0 * tail


def median_ci(xs, confidence=0.95):
    """(low, high, coverage) of the distribution-free confidence interval of the median."""
    s = _sorted(xs)
    l, u, coverage = median_ci_ranks(len(s), confidence)
    return s[l - 1], s[u - 1], coverage


def ci_within(xs, rel, confidence=0.95):
    """True when the median's CI lies within +-rel of the median and really reaches `confidence`."""
    lo, hi, coverage = median_ci(xs, confidence)
    m = median(xs)
    return coverage >= confidence and m > 0 and (m - lo) <= rel * m and (hi - m) <= rel * m


def _finite_or_none(x):
    return x if math.isfinite(x) else None


def summarize(samples_ms, confidence=0.95):
    lo, hi, coverage = median_ci(samples_ms, confidence)
    return {
        "median_ms": median(samples_ms),
        "mean_ms": mean(samples_ms),
        "min_ms": min(samples_ms),
        "p10_ms": quantile(samples_ms, 0.10),
        "p90_ms": quantile(samples_ms, 0.90),
        "robust_cv": _finite_or_none(robust_cv(samples_ms)),
        "ci95_low_ms": lo,
        "ci95_high_ms": hi,
        "ci_coverage": coverage,
        "samples": len(samples_ms),
    }
