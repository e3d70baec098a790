"""Timing the reference the way kopt times a kernel.

Each sample: restore in-out buffers and flush the L2 cache (outside the timed region), then time one
reference call, ending with a device-wide synchronize. On CUDA the sample is the elapsed time between two
CUDA events; on CPU it is time.perf_counter(). Warm-up first; then samples until the median's 95% CI (order
statistics, see stats.py) lies within 1% of the median, or the time budget runs out (at least 10 samples).
"""

import time

from . import stats

MIN_SAMPLES = 10
MAX_SAMPLES = 100_000
REL_CI = 0.01
FLUSH_MIN_BYTES = 256 << 20  # at least twice the L2 of any current GPU (H200: 60 MiB)
WARMUP_MIN_CALLS = 1
WARMUP_MAX_CALLS = 100
WARMUP_S = 0.2
# A slow reference (its first timed call SLOW_SAMPLE_MS or more: a float64 numpy reference of a large problem, ~1 s a
# call) is timed for at most SLOW_BUDGET_S, with SLOW_MIN_SAMPLES at least: its time is the headline's context (the
# champion's speed-up over ref.py), no decision of kopt's uses it, and ten such calls were 10+ s of the gates' critical
# path (FlashInfer's gelu_tanh_and_mul at 2048 x 14336, H100, session 40).
SLOW_SAMPLE_MS = 200.0
SLOW_MIN_SAMPLES = 3
SLOW_BUDGET_S = 2.0


def _next_check(n):
    """Checking the CI costs O(n) in Python: after a check at n samples, the next is 5 samples later (the C++ timer's
    rule), and past 100 samples ~5% later, so that all the checks cost O(n) together (at most ~5% more samples than
    needed). Measured on the H200 (2026-12-04, vector_add's reference at 2^24): checking every sample up to 1000
    spent 1.6 s of a 3 s reference timing in the checks."""
    return n + max(5, n // 20)


def sample_until_stable(take_sample, budget_s, clock=None, min_samples=MIN_SAMPLES,
                        max_samples=MAX_SAMPLES, rel_ci=REL_CI):
    """Calls take_sample() (returns one sample in ms) until the median's CI is within rel_ci of the median
    or budget_s has passed (never fewer than min_samples). Returns (samples, converged)."""
    clock = clock or time.monotonic  # looked up at the call: a test's clock replaces it
    samples = []
    start = clock()
    due = min_samples
    while len(samples) < max_samples:
        samples.append(float(take_sample()))
        n = len(samples)
        if n < min_samples:
            continue
        if n >= due:
            if stats.ci_within(samples, rel_ci):
                return samples, True
            due = _next_check(n)
        if clock() - start >= budget_s:
            break
    return samples, stats.ci_within(samples, rel_ci)


def warm_up(call, clock=None):
    """At least WARMUP_MIN_CALLS calls, more while under WARMUP_S and WARMUP_MAX_CALLS. Returns the count."""
    clock = clock or time.monotonic
    start, n = clock(), 0
    while n < WARMUP_MIN_CALLS or (n < WARMUP_MAX_CALLS and clock() - start < WARMUP_S):
        call()
        n += 1
    return n


def time_reference(call, backend, restore, budget_s):
    """Times `call` (one reference call with its arguments bound). `restore` puts in-out buffers back to
    their initial values (outside the timed region). Returns the reference_timing manifest entry."""
    if backend.name == "torch" and backend.device == "cuda":
        torch = backend.torch
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        l2_bytes = int(getattr(props, "L2_cache_size", 0) or 0)
        flush_bytes = max(FLUSH_MIN_BYTES, 2 * l2_bytes)
        flush = torch.empty(flush_bytes, dtype=torch.uint8, device="cuda")
        start_ev, end_ev = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

        def sample():
            restore()
            flush.zero_()
            torch.cuda.synchronize()
            start_ev.record()
            call()
            torch.cuda.synchronize()
            end_ev.record()
            end_ev.synchronize()
            return start_ev.elapsed_time(end_ev)

        device, timer = f"cuda:{props.name}", "cuda_events"

        def warm():
            call()
            torch.cuda.synchronize()
    else:
        import numpy as np  # noqa: PLC0415

        flush_bytes = FLUSH_MIN_BYTES
        flush = np.empty(flush_bytes, dtype=np.uint8)

        def sample():
            restore()
            flush.fill(0)
            t0 = time.perf_counter()
            call()
            backend.synchronize()
            return (time.perf_counter() - t0) * 1e3

        device, timer, warm = "cpu", "perf_counter", call

    warmup_calls = warm_up(warm)
    first = [sample()]  # decides how long the rest takes; it is the first of the samples
    slow = first[0] >= SLOW_SAMPLE_MS
    min_samples = SLOW_MIN_SAMPLES if slow else MIN_SAMPLES
    if slow:
        budget_s = min(budget_s, SLOW_BUDGET_S)
    samples, converged = sample_until_stable(lambda: first.pop() if first else sample(), budget_s, min_samples=min_samples)
    out = stats.summarize(samples)
    out.update({"device": device, "timer": timer, "converged": converged, "budget_s": budget_s,
                "min_samples": min_samples, "warmup_calls": warmup_calls, "flush_bytes": flush_bytes,
                "rel_ci_target": REL_CI})
    return out
