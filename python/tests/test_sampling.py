"""The Triton runner's launch-free sampling (sampling.py) on the CPU: the sleep policy as values, and the
runner's choice of method with a fake GPU whose guard event says whether the sleep covered the enqueueing."""

import time

import pytest
from triton_support import CORRECT, TritonHarness

from kopt_harness import devices, sampling


# --- the policy -------------------------------------------------------------------------------------------

def test_the_first_sleep_covers_three_enqueue_times_within_bounds():
    p = sampling.SleepPolicy(cycles_per_ms=2e6, enqueue_ms=0.03)
    assert p.sleep_ms == pytest.approx(0.11) and p.cycles() == 220_000
    assert sampling.SleepPolicy(2e6, 0.0).sleep_ms == sampling.SleepPolicy.MIN_MS
    assert sampling.SleepPolicy(2e6, 100.0).sleep_ms == sampling.SleepPolicy.MAX_MS
    with pytest.raises(ValueError):
        sampling.SleepPolicy(0, 0.1)


def test_a_short_sleep_grows_and_a_kept_sample_keeps_it():
    p = sampling.SleepPolicy(1e6, 0.02)
    first = p.sleep_ms
    assert p.record(held=True, enqueue_ms=0.02) == "keep" and p.sleep_ms == first and p.discarded == 0
    assert p.record(held=False, enqueue_ms=0.02) == "retry" and p.sleep_ms == pytest.approx(2 * first)
    assert p.record(held=False, enqueue_ms=1.0) == "retry" and p.sleep_ms == pytest.approx(3.0)  # 3x the enqueue
    assert p.discarded == 2


def test_a_call_that_waits_on_the_gpu_gives_up_at_the_longest_sleep():
    p = sampling.SleepPolicy(1e6, 0.02)
    verdicts = []
    while not verdicts or verdicts[-1] != "give_up":
        verdicts.append(p.record(held=False, enqueue_ms=p.sleep_ms))  # it returns only once the sleep is over
        assert len(verdicts) < 50
    assert p.sleep_ms == sampling.SleepPolicy.MAX_MS
    assert verdicts[-sampling.SleepPolicy.MAX_MISSES:] == ["retry"] * (sampling.SleepPolicy.MAX_MISSES - 1) + ["give_up"]
    # a kept sample at the longest sleep resets the count
    q = sampling.SleepPolicy(1e6, 100.0)
    assert q.record(False, 1.0) == "retry" and q.record(True, 1.0) == "keep" and q.misses_at_max == 0


def test_the_residual_rule():
    assert not sampling.work_outside(0.01, 0.005)  # 10 us of sync wake-up
    assert sampling.work_outside(0.5, 0.005)
    assert not sampling.work_outside(0.05, 1.0)  # 5% of a 1 ms kernel
    # the wait is what the synchronisation took beyond one with nothing to wait for (s43: 0.01-0.045 ms on the H100
    # host, above 10% of liger_dyt's 0.18 ms)
    assert sampling.work_outside(0.045, 0.18) and not sampling.work_outside(0.045, 0.18, floor_ms=0.03)
    assert sampling.work_outside(0.5, 0.18, floor_ms=0.03)


# --- the runner with a fake GPU ---------------------------------------------------------------------------

class FakeTimer:
    def __init__(self, ops):
        self.ops = ops

    def start(self):
        pass

    def stop(self):
        pass

    def wait_stop(self):
        self.ops.pending = True  # what run_kernel left elsewhere is still running: the next sync waits for it

    def elapsed_ms(self):
        return self.ops.event_ms


class FakeGuard:
    def __init__(self, ops):
        self.ops = ops

    def record(self):
        self.ops.guards += 1

    def query(self):
        """True when the guard completed: the sleep was over before everything was queued."""
        return not self.ops.held(self.ops.sleep_calls[-1])


class FakeGpu(devices.NumpyOps):
    """numpy buffers, with the CUDA-only paths of the runner: a sleep that holds samples when `held(cycles)`."""

    is_cuda = True

    def __init__(self, held=lambda cycles: True, event_ms=0.005, residual_s=0.0, sync_floor_s=0.0):
        super().__init__()
        self.held, self.event_ms, self.residual_s, self.sync_floor_s = held, event_ms, residual_s, sync_floor_s
        self.sleep_calls, self.guards, self.syncs, self.pending = [], 0, 0, False

    def timer(self):
        return FakeTimer(self)

    def synchronize(self):
        """Every synchronisation costs sync_floor_s; the first after the stop event also waits residual_s."""
        self.syncs += 1
        wait = self.sync_floor_s + (self.residual_s if self.pending else 0.0)
        self.pending = False
        if wait:
            time.sleep(wait)

    def sleep_available(self):
        return True

    def sleep(self, cycles):
        self.sleep_calls.append(cycles)

    def guard_event(self):
        return FakeGuard(self)

    def sleep_cycles_per_ms(self, cycles=2_000_000):
        return 1e6


@pytest.fixture
def th(tmp_path):
    return TritonHarness(tmp_path, device="numpy")


def run_with(th, monkeypatch, gpu, **kw):
    monkeypatch.setattr(devices, "make", lambda device: gpu)
    kernel = th.kernel(CORRECT)
    _, golden = th.golden(kernel)
    kw.setdefault("mode", "time")
    kw.setdefault("min_samples", 5)
    kw.setdefault("max_time_s", 0.1)
    kw.setdefault("l2", "warm")  # a 256 MiB numpy fill per sample is slow here, and beside the point
    return th.run(kernel, golden, **kw)


def test_an_honest_kernel_is_timed_behind_the_sleep(th, monkeypatch):
    gpu = FakeGpu()
    r, rc = run_with(th, monkeypatch, gpu)
    assert rc == 0 and r["status"] == "ok"
    info = r["timing_info"]
    assert r["timing_method"] == info["timing_method"] == "events_behind_sleep" and info["launch_excluded"]
    assert info["fallback_reason"] == "" and info["discarded_samples"] == 0
    assert len(r["samples_ms"]) == len(r["call_samples_ms"]) >= 5 and set(r["samples_ms"]) == {0.005}
    # every timed sample (and the settling ones) was queued behind a sleep and checked with its guard
    assert len(gpu.sleep_calls) == gpu.guards == len(r["samples_ms"]) + 3


def test_a_sleep_too_short_is_discarded_and_lengthened(th, monkeypatch):
    gpu = FakeGpu(held=lambda cycles: cycles >= 400_000)  # 0.4 ms at 1e6 cycles per ms
    r, _ = run_with(th, monkeypatch, gpu)
    info = r["timing_info"]
    assert r["timing_method"] == "events_behind_sleep" and info["discarded_samples"] >= 1
    assert info["sleep_ms"] >= 0.4 and min(gpu.sleep_calls) < 400_000 <= gpu.sleep_calls[-1]


def test_a_kernel_that_waits_on_the_gpu_falls_back_and_never_hangs(th, monkeypatch):
    gpu = FakeGpu(held=lambda cycles: False)
    t0 = time.monotonic()
    r, rc = run_with(th, monkeypatch, gpu)
    assert rc == 0 and r["status"] == "ok" and time.monotonic() - t0 < 30
    info = r["timing_info"]
    assert r["timing_method"] == "events_default_stream" and info["fallback_reason"] == "solve_waited_on_gpu"
    assert not info["launch_excluded"] and len(r["samples_ms"]) >= 5


def test_work_on_another_stream_is_timed_with_a_device_sync(th, monkeypatch):
    gpu = FakeGpu(residual_s=0.002)  # 2 ms left after the stop event: far more than 10% of 5 us
    r, _ = run_with(th, monkeypatch, gpu)
    info = r["timing_info"]
    assert r["timing_method"] == "events_with_device_sync_before_stop" and info["work_outside_default_stream"]
    assert info["fallback_reason"] == "work_outside_default_stream" and not gpu.sleep_calls


def test_a_slow_synchronisation_with_nothing_to_wait_for_is_not_work_elsewhere(th, monkeypatch):
    # every synchronisation takes 2 ms, far above 10% of a 5 ms kernel (0.5 ms: room for the host clock's jitter),
    # but the first after the stop event takes no longer than the second: nothing was left on another stream, and
    # the samples stay behind the sleep
    gpu = FakeGpu(event_ms=5.0, sync_floor_s=0.002)
    r, _ = run_with(th, monkeypatch, gpu)
    info = r["timing_info"]
    assert r["timing_method"] == "events_behind_sleep" and not info.get("work_outside_default_stream")
    assert info["probe_sync_floor_median_ms"] >= 2.0 and info["probe_residual_median_ms"] >= 2.0
    # the same synchronisations with 10 ms left elsewhere after the stop event: work outside
    gpu = FakeGpu(event_ms=5.0, sync_floor_s=0.002, residual_s=0.010)
    r, _ = run_with(th, monkeypatch, gpu)
    assert r["timing_method"] == "events_with_device_sync_before_stop"
    assert r["timing_info"]["probe_residual_median_ms"] - r["timing_info"]["probe_sync_floor_median_ms"] >= 9.0


def test_a_paired_run_says_each_configurations_probe(th, monkeypatch):
    gpu = FakeGpu(event_ms=5.0, sync_floor_s=0.002)
    r, rc = run_with(th, monkeypatch, gpu, mode="paired", configs=[{}, {}], rounds=3)
    assert rc == 0 and r["status"] == "ok" and r["timing_method"] == "events_behind_sleep"
    assert len(r["probes"]) == 2
    for p in r["probes"]:
        assert p["timing_method"] == "events_behind_sleep" and p["fallback_reason"] == ""
        assert p["probe_sync_floor_median_ms"] >= 2.0


def test_a_forced_method_is_used_and_named(th, monkeypatch):
    gpu = FakeGpu()
    r, _ = run_with(th, monkeypatch, gpu, timing_method="events_default_stream")
    assert r["timing_method"] == "events_default_stream" and r["timing_info"]["fallback_reason"] == "forced"
    assert not gpu.sleep_calls


def test_paired_configurations_share_one_method(th, monkeypatch):
    # BLOCK 64 syncs inside (its sleep never holds): every configuration is timed without the sleep.
    gpu = FakeGpu()
    monkeypatch.setattr(devices, "make", lambda device: gpu)
    kernel = th.kernel(CORRECT + "\n    if BLOCK == 64:\n        import kopt_harness.devices as d\n"
                       "        d.make(None).held = lambda cycles: False")
    _, golden = th.golden(kernel)
    r, rc = th.run(kernel, golden, mode="paired", configs=[{"BLOCK": 128}, {"BLOCK": 64}], rounds=10, max_time_s=0.05,
                   l2="warm")
    assert rc == 0 and r["status"] == "ok"
    assert r["timing_method"] == "events_default_stream" and r["fallback_reason"] == "solve_waited_on_gpu"
    assert all(len(lib["samples_ms"]) == r["rounds"] >= 10 for lib in r["libs"])
    gpu.held = lambda cycles: True
    r2, _ = th.run(kernel, golden, mode="paired", configs=[{"BLOCK": 128}, {"BLOCK": 256}], rounds=10,
                   max_time_s=0.05, l2="warm")
    assert r2["timing_method"] == "events_behind_sleep"


def test_usage_errors_name_the_option(th):
    kernel = th.kernel(CORRECT)
    _, golden = th.golden(kernel)
    with pytest.raises(Exception, match="--l2 hot"):
        th.run(kernel, golden, l2="hot")
    with pytest.raises(Exception, match="--timing-method events_blocked"):
        th.run(kernel, golden, timing_method="events_blocked")  # the C++ child's method, not this one's
