#!/usr/bin/env python3
"""Writes vectors.json: timing statistics computed by an independent oracle (numpy's percentile and median,
exact binomial sums with fractions.Fraction and math.comb), read by BOTH test suites:
  C++:    src/runner/stats_test.cpp   (runner::compute_stats, median_ci, ci_within)
  Python: python/tests/test_stats.py  (kopt_harness.stats: the Triton runner's stopping rule)
so the two implementations cannot drift. Regenerate after changing a definition (docs/RUNNER.md, "Statistics"):
  python3 tests/data/stats/make_vectors.py
"""
import json
import math
import pathlib
from fractions import Fraction

import numpy as np

OUT = pathlib.Path(__file__).resolve().parent / "vectors.json"
CONFIDENCE = Fraction(95, 100)
MAD_TO_SIGMA = 1.4826
REL_CI = 0.01  # the runner's default --target-ci


def exact_ranks(n):
    """(l, u, coverage) 1-based: l the largest rank <= n // 2 with P(B <= l-1) <= (1-confidence)/2, B ~ Bin(n, 1/2)."""
    alpha_half = (1 - CONFIDENCE) / 2
    total = 2 ** n
    l, cdf_num, tail = 0, 0, Fraction(0)
    for k in range(n // 2):
        cdf_num += math.comb(n, k)
        cdf = Fraction(cdf_num, total)
        if cdf > alpha_half:
            break
        l, tail = k + 1, cdf
    if l == 0:
        return 1, n, float(1 - 2 * Fraction(1, 2) ** n)
    return l, n - l + 1, float(1 - 2 * tail)


def stability(n, cv, half):
    if n < 5:
        return "unstable"
    if cv <= 0.02 and half <= 0.01:
        return "stable"
    return "borderline" if cv <= 0.05 else "unstable"


def case(name, xs):
    x = np.sort(np.asarray(xs, dtype=np.float64))
    n = len(x)
    med = float(np.percentile(x, 50))
    mad = float(np.median(np.abs(x - med)))
    cv = MAD_TO_SIGMA * mad / med if med > 0 else 0.0
    l, u, coverage = exact_ranks(n)
    lo, hi = float(x[l - 1]), float(x[u - 1])
    half = (hi - lo) / 2 / med if med > 0 else 0.0
    within = coverage >= float(CONFIDENCE) and med > 0 and med - lo <= REL_CI * med and hi - med <= REL_CI * med
    return {"name": name, "samples_ms": [float(v) for v in xs],
            "expected": {"samples": n, "median_ms": med, "mean_ms": float(np.mean(x)), "min_ms": float(x[0]),
                         "max_ms": float(x[-1]), "p10_ms": float(np.percentile(x, 10)),
                         "p90_ms": float(np.percentile(x, 90)), "mad_ms": mad, "robust_cv": cv,
                         "ci_rank_low": l, "ci_rank_high": u, "ci95_low_ms": lo, "ci95_high_ms": hi,
                         "ci_coverage": coverage, "ci95_rel_halfwidth": half, "stability": stability(n, cv, half),
                         "ci_within_1pct": bool(within)}}


def main():
    rng = np.random.default_rng(20261201)
    r6 = lambda a: [round(float(v), 6) for v in a]  # noqa: E731 (samples as a timer gives them: microseconds)
    cases = [
        case("five_known", [5.0, 1.0, 3.0, 2.0, 4.0]),
        case("ten_known", [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0]),
        case("one_sample", [0.25]),
        case("two_samples", [0.5, 0.75]),
        case("identical_20", [1.0] * 20),
        case("six_samples_first_95pct", [0.0101, 0.0099, 0.0100, 0.0102, 0.0098, 0.0100]),
        case("exponential_37", r6(rng.exponential(size=37) + 0.01)),
        case("kernel_5us_tight_200", r6(0.0052 + rng.normal(0, 0.00004, 200))),
        case("kernel_5us_launch_jitter_200", r6(0.0102 + np.abs(rng.normal(0, 0.0009, 200)))),
        case("borderline_alternating_40", [1.0, 1.04] * 20),
        case("unstable_alternating_40", [1.0, 2.0] * 20),
        case("outliers_101", r6(np.concatenate([3.0 + rng.normal(0, 0.003, 96), [9.0, 12.0, 30.0, 0.5, 45.0]]))),
        case("bimodal_1000", r6(np.concatenate([rng.normal(1.0, 0.002, 600), rng.normal(1.3, 0.002, 400)]))),
        case("lognormal_2000", r6(np.exp(rng.normal(0.0, 0.05, 2000)))),
    ]
    ranks = []
    for n in (1, 2, 3, 5, 6, 7, 8, 10, 20, 30, 50, 100, 101, 200, 500, 1000, 2000, 10000):
        l, u, coverage = exact_ranks(n)
        ranks.append({"n": n, "rank_low": l, "rank_high": u, "coverage": coverage})
    body = {"about": "Timing statistics test vectors; see make_vectors.py. Ranks are 1-based.",
            "confidence": float(CONFIDENCE), "rel_ci": REL_CI, "mad_to_sigma": MAD_TO_SIGMA,
            "cases": cases, "median_ci_ranks": ranks}
    OUT.write_text(json.dumps(body, indent=1) + "\n")
    print(f"wrote {OUT} ({len(cases)} cases, {len(ranks)} rank rows)")


if __name__ == "__main__":
    main()
