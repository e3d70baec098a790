"""stats.py on known data and on the shared test vectors (tests/data/stats/vectors.json, also read by the C++
suite), and the timing loop's stopping rule with a fake clock."""

import json
import math
import os
import random

import numpy as np
import pytest

from kopt_harness import stats, timing

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTORS = json.load(open(os.path.join(ROOT, "tests", "data", "stats", "vectors.json"), encoding="utf-8"))

DATA = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0]  # sorted: 1 1 2 3 3 4 5 5 6 9


def test_quantiles_match_numpys_linear_rule():
    assert stats.median(DATA) == 3.5
    assert stats.quantile(DATA, 0.0) == 1.0 and stats.quantile(DATA, 1.0) == 9.0
    assert stats.quantile(DATA, 0.10) == pytest.approx(1.0)  # position 0.9 between 1 and 1
    assert stats.quantile(DATA, 0.90) == pytest.approx(6.3)  # position 8.1: 6 + 0.1 * 3
    rng = np.random.default_rng(3)
    xs = list(rng.exponential(size=37))
    for q in (0.1, 0.25, 0.5, 0.9):
        assert stats.quantile(xs, q) == pytest.approx(float(np.percentile(xs, 100 * q)), rel=1e-12)


def test_mean_mad_and_robust_cv():
    assert stats.mean(DATA) == pytest.approx(3.9)
    xs = [1.0, 2.0, 3.0, 4.0, 100.0]  # median 3, deviations 2 1 0 1 97: MAD 1
    assert stats.mad(xs) == 1.0
    assert stats.robust_cv(xs) == pytest.approx(1.4826 / 3)
    assert stats.robust_cv([2.0] * 7) == 0.0


def test_empty_samples_raise():
    with pytest.raises(ValueError):
        stats.median([])


@pytest.mark.parametrize("n,ranks", [(6, (1, 6)), (10, (2, 9)), (20, (6, 15)), (100, (40, 61)),
                                     (1000, (469, 532))])
def test_median_ci_ranks_match_published_tables(n, ranks):
    l, u, coverage = stats.median_ci_ranks(n)
    assert (l, u) == ranks
    exact = 1 - 2 * sum(math.comb(n, i) for i in range(l)) / 2**n
    assert coverage == pytest.approx(exact, rel=1e-9) and coverage >= 0.95


def test_median_ci_below_six_samples_cannot_reach_95_percent():
    assert stats.median_ci_ranks(5) == (1, 5, 0.9375)
    assert stats.median_ci([3.0, 1.0, 2.0]) == (1.0, 3.0, 0.75)
    assert not stats.ci_within([1.0, 1.0, 1.0], 0.5)  # even identical samples: coverage too low


def test_median_ci_covers_the_true_median_as_often_as_claimed():
    rng = random.Random(11)
    n, trials, hits = 20, 4000, 0
    true_median = math.log(2.0)  # of Exp(1): skewed, and the interval is distribution-free
    for _ in range(trials):
        lo, hi, coverage = stats.median_ci([rng.expovariate(1.0) for _ in range(n)])
        hits += lo <= true_median <= hi
    assert coverage == pytest.approx(0.9586, abs=1e-4)
    assert abs(hits / trials - coverage) < 0.012  # ~4 standard errors


def test_ci_within_relative_width():
    tight = [1.0 + 0.001 * ((i * 7) % 11) for i in range(50)]  # spread 1%: CI well inside +-1%
    wide = [1.0 + 0.1 * ((i * 7) % 11) for i in range(50)]
    assert stats.ci_within(tight, 0.01)
    assert not stats.ci_within(wide, 0.01)


@pytest.mark.parametrize("c", VECTORS["cases"], ids=[c["name"] for c in VECTORS["cases"]])
def test_shared_vectors_what_the_stopping_rule_uses(c):
    """The figures this harness still computes (its stopping rule, the reference's timing) agree with the C++
    statistics (runner/stats.cpp reads the same file in Stats.SharedTestVectors)."""
    xs, e = c["samples_ms"], c["expected"]
    close = lambda got, want: got == pytest.approx(want, rel=1e-12, abs=1e-15)  # noqa: E731
    assert close(stats.median(xs), e["median_ms"]) and close(stats.mean(xs), e["mean_ms"])
    assert close(stats.quantile(xs, 0.10), e["p10_ms"]) and close(stats.quantile(xs, 0.90), e["p90_ms"])
    assert close(stats.mad(xs), e["mad_ms"])
    assert close(stats.robust_cv(xs), e["robust_cv"]) if e["median_ms"] > 0 else True
    l, u, coverage = stats.median_ci_ranks(len(xs), VECTORS["confidence"])
    assert (l, u) == (e["ci_rank_low"], e["ci_rank_high"]) and close(coverage, e["ci_coverage"])
    lo, hi, _ = stats.median_ci(xs)
    assert (lo, hi) == (e["ci95_low_ms"], e["ci95_high_ms"])
    assert stats.ci_within(xs, VECTORS["rel_ci"]) == e["ci_within_1pct"]


@pytest.mark.parametrize("c", VECTORS["cases"], ids=[c["name"] for c in VECTORS["cases"]])
def test_shared_vectors_the_reference_timing(c):
    """The reference's timing (summarize: the manifest's reference_timing, which kopt reads) reports every figure
    under the C++ statistics' name (runner::to_json(TimingStats)) and with its value on the shared vectors, so a
    drift of either side fails here or in Stats.SharedTestVectors."""
    xs, e = c["samples_ms"], c["expected"]
    got = stats.summarize(xs)
    for field, value in got.items():
        assert field in e, f"{field}: not a figure of the C++ statistics"
        if field == "robust_cv" and e["median_ms"] <= 0:
            continue
        assert value == pytest.approx(e[field], rel=1e-12, abs=1e-15), field


@pytest.mark.parametrize("row", VECTORS["median_ci_ranks"], ids=[str(r["n"]) for r in VECTORS["median_ci_ranks"]])
def test_shared_vectors_median_ci_ranks(row):
    l, u, coverage = stats.median_ci_ranks(row["n"])
    assert (l, u) == (row["rank_low"], row["rank_high"]) and coverage == pytest.approx(row["coverage"], rel=1e-9)


def test_summarize_fields():
    s = stats.summarize(DATA)
    assert s["median_ms"] == 3.5 and s["min_ms"] == 1.0 and s["samples"] == 10
    assert (s["ci95_low_ms"], s["ci95_high_ms"]) == (1.0, 6.0)  # ranks 2 and 9 of the sorted data
    assert s["p10_ms"] <= s["median_ms"] <= s["p90_ms"]


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_sampling_stops_once_the_ci_is_within_one_percent():
    clock = FakeClock()

    def sample():
        clock.t += 0.001
        return 2.0

    samples, converged = timing.sample_until_stable(sample, budget_s=10.0, clock=clock)
    assert converged and len(samples) == timing.MIN_SAMPLES


def test_sampling_stops_at_the_budget_when_noisy():
    clock = FakeClock()
    rng = random.Random(5)

    def sample():
        clock.t += 0.1
        return rng.uniform(1.0, 3.0)

    samples, converged = timing.sample_until_stable(sample, budget_s=3.0, clock=clock)
    assert not converged and 29 <= len(samples) <= 31


def test_sampling_takes_the_minimum_even_past_the_budget():
    clock = FakeClock()

    def sample():
        clock.t += 5.0
        return 1.0 + clock.t

    samples, _ = timing.sample_until_stable(sample, budget_s=1.0, clock=clock)
    assert len(samples) == timing.MIN_SAMPLES


class _NumpyBackend:
    name, device = "numpy", "cpu"

    def synchronize(self):
        pass


def _time_reference_at(monkeypatch, call_s, noise=0.0):
    """timing.time_reference of a reference whose call takes call_s seconds on a fake clock (+-noise, alternating)."""
    clock = FakeClock()
    monkeypatch.setattr(timing.time, "perf_counter", clock)
    monkeypatch.setattr(timing.time, "monotonic", clock)
    monkeypatch.setattr(timing, "FLUSH_MIN_BYTES", 1 << 10)
    calls = []

    def call():
        clock.t += call_s * (1 + (noise if len(calls) % 2 else -noise))
        calls.append(clock.t)

    out = timing.time_reference(call, _NumpyBackend(), lambda: None, 10.0)
    return out, calls, clock.t


def test_a_slow_reference_is_timed_for_two_seconds_with_three_samples_at_least(monkeypatch):
    # A float64 numpy reference of ~1 s a call (FlashInfer's gelu_tanh_and_mul at 2048 x 14336) took the ten-sample
    # minimum, 10+ s of the gates; its time is only the headline's context.
    out, calls, elapsed = _time_reference_at(monkeypatch, 1.0, noise=0.05)
    assert out["samples"] == timing.SLOW_MIN_SAMPLES and out["min_samples"] == timing.SLOW_MIN_SAMPLES
    assert out["budget_s"] == timing.SLOW_BUDGET_S and not out["converged"]
    assert len(calls) == 1 + timing.SLOW_MIN_SAMPLES and elapsed == pytest.approx(4.0)  # one warm-up call, then 3
    assert out["median_ms"] == pytest.approx(1050.0)  # the samples: 1.05, 0.95, 1.05 s (the warm-up call 0.95 s)
    # 0.25 s a call: samples until the 2 s are spent, then no more.
    out, _, _ = _time_reference_at(monkeypatch, 0.25, noise=0.05)
    assert out["budget_s"] == timing.SLOW_BUDGET_S and 8 <= out["samples"] <= 9


def test_a_fast_reference_keeps_the_ten_samples_and_its_budget(monkeypatch):
    out, _, _ = _time_reference_at(monkeypatch, 0.001)
    assert out["samples"] == timing.MIN_SAMPLES and out["converged"] and out["budget_s"] == 10.0
    assert out["min_samples"] == timing.MIN_SAMPLES


def test_the_ci_checks_cost_linear_time_and_overshoot_by_at_most_five_percent(monkeypatch):
    # Checking every sample up to 1000 cost 1.6 s of a 3 s reference timing on the H200 (3,535 samples, 1,134 checks).
    clock = FakeClock()
    rng = random.Random(7)
    checks = []
    real = timing.stats.ci_within

    def counted(samples, rel):
        checks.append(len(samples))
        return real(samples, rel)

    monkeypatch.setattr(timing.stats, "ci_within", counted)

    def sample():
        clock.t += 0.0004
        return rng.gauss(1.0, 0.15)

    samples, converged = timing.sample_until_stable(sample, budget_s=10.0, clock=clock)
    assert converged and len(samples) > 500
    assert len(checks) < 100 and sum(checks) < 30 * len(samples)
    # Where checking every sample would have stopped (the CI is not monotone in n, so a few % either way).
    first = next(n for n in range(timing.MIN_SAMPLES, len(samples) + 1) if real(samples[:n], timing.REL_CI))
    assert first <= len(samples) <= int(first * 1.15)


def test_warm_up_bounds():
    clock = FakeClock()
    calls = []

    def slow():
        calls.append(1)
        clock.t += 1.0

    assert timing.warm_up(slow, clock=clock) == 1  # one slow call is enough

    def fast():
        clock.t += 1e-6

    assert timing.warm_up(fast, clock=clock) == timing.WARMUP_MAX_CALLS
