"""How the Triton runner takes its timing samples (docs/TRITON.md, "One timing sample"): the methods, the
launch-free one (queued behind torch.cuda._sleep) and the policy that sizes its sleep.

The runner returns raw samples only (samples_ms, call_samples_ms); kopt's C++ side computes every statistic
(src/runner/stats.cpp). What stays here is what choosing a method and stopping need.

Method names are those of src/runner/timing_method.cpp (a test compares them):
  events_behind_sleep                  the flush, the start event, run_kernel's launches and the stop event are
                                       queued behind torch.cuda._sleep (a kernel that spins a number of GPU
                                       cycles); an event recorded right after the sleep, still pending once
                                       everything is queued, proves the sample is free of Python's launch time
  events_default_stream                events around a host-launched call on the current stream (fallback)
  events_with_device_sync_before_stop  a device-wide synchronisation before the stop event (work elsewhere)
  perf_counter                         the host clock (CPU devices, for the tests)
"""

BEHIND_SLEEP = "events_behind_sleep"
EVENTS = "events_default_stream"
DEVICE_SYNC = "events_with_device_sync_before_stop"
PERF_COUNTER = "perf_counter"
METHODS = (BEHIND_SLEEP, EVENTS, DEVICE_SYNC, PERF_COUNTER)
LAUNCH_EXCLUDED = (BEHIND_SLEEP,)

# Fallback reasons, named as in src/runner/timing_method.cpp.
FORCED = "forced"
BLOCKER_UNAVAILABLE = "blocker_unavailable"
SOLVE_WAITED = "solve_waited_on_gpu"
WORK_OUTSIDE = "work_outside_default_stream"

# Work left on the device after the stop event completed above both of these means run_kernel put work on a stream
# other than the current one. The wait is the probe's device-wide synchronisation after the stop event less its floor,
# a second synchronisation at once with nothing to wait for (medians over the probe's samples): the host's own cost of
# a synchronisation is near a tenth of a short kernel (docs/TRITON.md, "One timing sample").
RESIDUAL_MIN_MS, RESIDUAL_MIN_SHARE = 0.02, 0.10


def work_outside(residual_ms, event_ms, floor_ms=0.0):
    """The probe's rule: a device-wide synchronisation after the stop event waited that long more than one with
    nothing left to wait for."""
    wait = residual_ms - floor_ms
    return wait > RESIDUAL_MIN_MS and wait > RESIDUAL_MIN_SHARE * event_ms


class SleepPolicy:
    """How long the sleep ahead of each sample lasts. It must outlast the host's enqueueing of the flush, the
    events and run_kernel's launches (tens of microseconds of Python); a sample whose guard event had already
    completed once everything was queued is discarded and the sleep doubled (at least 3x that enqueue time). A
    run_kernel that synchronises inside waits for the sleep every time: after MAX_MISSES misses at MAX_MS the
    method falls back to events_default_stream (solve_waited_on_gpu)."""

    MIN_MS, MAX_MS = 0.05, 20.0
    MAX_MISSES = 3

    def __init__(self, cycles_per_ms, enqueue_ms):
        if cycles_per_ms <= 0:
            raise ValueError("cycles_per_ms must be positive")
        self.cycles_per_ms = float(cycles_per_ms)
        self.sleep_ms = min(self.MAX_MS, max(self.MIN_MS, 3.0 * enqueue_ms + 0.02))
        self.misses_at_max = 0
        self.discarded = 0

    def cycles(self):
        return max(1, int(self.sleep_ms * self.cycles_per_ms))

    def record(self, held, enqueue_ms):
        """After one sample: held says whether the guard event was still pending once everything was queued.
        Returns "keep", "retry" (discard the sample, the sleep is longer now) or "give_up"."""
        if held:
            self.misses_at_max = 0
            return "keep"
        self.discarded += 1
        if self.sleep_ms >= self.MAX_MS:
            self.misses_at_max += 1
            return "give_up" if self.misses_at_max >= self.MAX_MISSES else "retry"
        self.sleep_ms = min(self.MAX_MS, max(2.0 * self.sleep_ms, 3.0 * enqueue_ms))
        return "retry"


class GaveUp(Exception):
    """The sleep never covered the enqueueing: run_kernel waits on the GPU. Time without the sleep."""
