"""`triton-run`: the measuring child for Triton kernels, with the protocol and the result schema of the C++
`kopt __runner` (src/runner/child.cpp; docs/RUNNER.md, docs/TRITON.md), so kopt's parent side
(`runner::run_candidate`, `runner::interpret`) treats both alike.

Per seed: fresh buffers (each after a spacer of random size, so addresses differ between seeds), inputs
uploaded from the golden files, outputs poisoned (0xFF bytes: NaN in every float type; 0xA5 for integers),
in-out buffers given their initial value; `run_kernel(**inputs, **config)`; a device-wide synchronisation;
then every input is checked bit for bit and every output compared with the expected one (compare.py).
The sealed seed (sealed.py, docs/GATES.md "The sealed seed"): in check and time runs, and for every configuration
of a paired run, one more call on inputs the judge hands out; the outputs go to the judge, which alone holds the
expected ones (wrong there: wrong_on_sealed_seed). The process was sealed before the kernel was imported (by the
fork server's child or __main__.py); result["answer_key"] says what was out of the kernel's reach, and why not.
The ephemeral seed (--ephemeral-fd, check mode; docs/GATES.md "The ephemeral seed"): the judge was given it when the
process sealed itself and serves it in the sealed seed's place (seed -2, "ephemeral": true; wrong there:
wrong_on_ephemeral_seed); a run that cannot check it fails (internal_error) rather than pass without it.

Modes: check (every seed), time (check, then timing on the first seed, then a re-check on fresh poison),
paired (several configurations in interleaved rounds), profile (one seed checked, one warm-up call, then
exactly one run_kernel call between cudaProfilerStart and cudaProfilerStop), compile (no golden data:
setup(seed) and one call, to obtain the cubins; for `kopt sass`).
"""

import datetime
import os
import platform
import random
import shutil
import sys
import tempfile
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import kopt_harness

from . import compare, cubins, devices, dtypes, kernelmod, preload, runresult, sampling, sealed, stats, store, timing
from .errors import RefError, UsageError
from .runresult import (CUDA_ERROR, INPUT_MODIFIED, INTERNAL_ERROR, LOAD_ERROR, OK, UNWRITTEN_OUTPUT,
                        WRONG_ON_EPHEMERAL_SEED, WRONG_ON_SEALED_SEED, WRONG_RESULT, Fatal)

MODES = ("check", "time", "paired", "profile", "compile")
WARMUP_MIN_CALLS, WARMUP_MIN_MS = 3, 50.0
PROBE_SAMPLES = 5
SETTLE_SAMPLES = 3  # behind-sleep samples kept before the method is settled (the sleep sized, no fallback)
FORCEABLE = (sampling.BEHIND_SLEEP, sampling.EVENTS, sampling.DEVICE_SYNC)
CUDA_ERROR_MARKERS = ("cuda error", "cuda_error", "cudaerror", "illegal memory access", "illegal address",
                      "triton error [cuda]", "device-side assert", "unspecified launch failure", "misaligned address")


@dataclass
class RunOptions:
    kernel: str
    out: str
    golden: str = None
    mode: str = "check"
    configs: list = field(default_factory=list)
    atol: float = -1.0
    rtol: float = -1.0
    max_time_s: float = 5.0
    target_ci: float = 0.01
    min_samples: int = 10
    max_samples: int = 2000
    rounds: int = 40
    device: str = "cuda"  # cuda | cpu | numpy (the last two for tests)
    dump_cubin: str = None
    # --triton-cache DIR: the Triton cache this process uses (made when missing, kept afterwards) instead of a fresh
    # one: kopt gives a candidate's compile-mode child and then its measuring child the same folder, so that the
    # measuring child finds its kernels compiled (docs/TRITON.md "Compiled before measured"); the cubins --dump-cubin
    # writes are still those of the folder this process's Triton used.
    triton_cache: str = None
    dims: dict = None  # compile mode
    seed: int = 0  # compile mode
    l2: str = "cold"  # cold: flush the L2 before every sample; warm: do not
    timing_method: str = "auto"  # auto, or one of FORCEABLE
    # --ephemeral-fd (check mode): the process's judge was given the ephemeral seed (sealed.start) and serves it in
    # the sealed seed's place; the descriptor itself is closed before this runs.
    ephemeral: bool = False
    # --also-check DIR (time mode): the golden data of the workload matrix's other cases, checked in this process
    # after the timed run (the kernel imported and compiled once), each case's verdict in the result's "cases".
    also_check: list = field(default_factory=list)


class Phases:
    """Wall time per phase of this child, in ms (the result's phases_ms): where a candidate's overhead goes.
    Keys: interpreter_start (process start to the harness's first import, from /proc; absent elsewhere),
    harness_imports (to run()), golden_load, kernel_import (the kernel module, and with it triton),
    device_init, bind (buffers allocated and filled), first_call (Triton's JIT compile and one run),
    verify, timing; `other` is the rest of run() and `total` the process's age at the end. `of_process` false (a case
    checked after the timed run, --also-check): from now on only, without the process's start."""

    def __init__(self, of_process=True):
        self.ms = {}
        t = time.perf_counter()
        self.t_run = t
        if not of_process:
            return
        t0 = kopt_harness.IMPORT_T0  # in a child of the fork server: the moment of the fork
        start = _process_age_s()
        if start is not None:
            self.ms["interpreter_start"] = max(0.0, (start - (t - t0)) * 1e3)
        self.ms["harness_imports"] = (t - t0) * 1e3

    @contextmanager
    def __call__(self, name):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.ms[name] = self.ms.get(name, 0.0) + (time.perf_counter() - t0) * 1e3

    def to_json(self):
        out = {k: round(v, 3) for k, v in self.ms.items()}
        run_ms = (time.perf_counter() - self.t_run) * 1e3
        named = sum(v for k, v in self.ms.items() if k not in ("interpreter_start", "harness_imports"))
        out["other"] = round(max(0.0, run_ms - named), 3)
        out["total"] = round(out.get("interpreter_start", 0.0) + out.get("harness_imports", 0.0) + run_ms, 3)
        return out


def _process_age_s():
    """Seconds since this process started (Linux /proc, 10 ms resolution), or None."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        start_ticks = int(fields[19])  # field 22 of stat(5), counted after "pid (comm)"
        with open("/proc/uptime", encoding="ascii") as f:
            uptime_s = float(f.read().split()[0])
        return max(0.0, uptime_s - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None


@dataclass
class Buffer:
    name: str
    role: str  # input | output | inout
    dtype: str
    shape: tuple
    nbytes: int


@dataclass
class Golden:
    dir: str
    seeds: list
    buffers: list  # [Buffer] in the kernel's input order
    scalars: dict
    atol: float
    rtol: float
    inputs: list  # every run_kernel argument name, in setup()'s order
    manifest: dict


def load_golden(folder):
    """The golden folder a Triton kernel's golden step wrote; a Fatal(load_error) names what is wrong."""
    path = os.path.join(folder, "manifest.json")
    try:
        import json  # noqa: PLC0415

        with open(path, encoding="utf-8") as f:
            m = json.load(f)
    except (OSError, ValueError) as e:
        raise Fatal(LOAD_ERROR, f"cannot read the golden manifest {path}: {e}") from None
    kernel = m.get("kernel")
    if not isinstance(kernel, dict) or kernel.get("backend") != "triton":
        raise Fatal(LOAD_ERROR, f"{path} was not made for a Triton kernel (no kernel.backend = triton); make it "
                                f"with `python3 -m kopt_harness golden --triton-kernel kernel.py ...`")
    try:
        bufs = [Buffer(b["name"], b["role"], b["dtype"], tuple(b["shape"]), int(b["nbytes"])) for b in m["buffers"]]
        tol = m["tolerances"]
        g = Golden(folder, [int(s) for s in m["seeds"]], bufs, dict(m.get("scalars") or {}), float(tol["atol"]),
                   float(tol["rtol"]), list(kernel["inputs"]), m)
    except (KeyError, TypeError, ValueError) as e:
        raise Fatal(LOAD_ERROR, f"golden manifest {path} is malformed: {e!r}") from None
    if not g.seeds:
        raise Fatal(LOAD_ERROR, "golden manifest lists no seeds")
    for b in g.buffers:
        if dtypes.lookup(b.dtype) is None:
            raise Fatal(LOAD_ERROR, f"golden buffer {b.name!r} has an unknown dtype {b.dtype!r}")
    known = {b.name for b in g.buffers} | set(g.scalars)
    missing = [n for n in g.inputs if n not in known]
    if missing:
        raise Fatal(LOAD_ERROR, f"golden data has no buffer or scalar for input(s) {', '.join(missing)}")
    return g


def classify_exception(e, where):
    """A Fatal for an exception the kernel raised: a CUDA error, or a kernel that could not be compiled,
    launched or called (load_error). The traceback goes to stderr, which the parent keeps."""
    text = f"{type(e).__name__}: {e}".strip()
    print(f"kopt_harness triton-run: {where} raised:", file=sys.stderr)
    traceback.print_exception(type(e), e, e.__traceback__, file=sys.stderr)
    short = text if len(text) <= 1500 else text[:1500] + " ..."
    if any(m in text.lower() for m in CUDA_ERROR_MARKERS):
        return Fatal(CUDA_ERROR, f"{where} raised {short}")
    if (type(e).__module__ or "").startswith("triton"):
        return Fatal(LOAD_ERROR, f"Triton could not compile or launch the kernel: {where} raised {short}")
    return Fatal(LOAD_ERROR, f"{where} raised {short}")


class _State:
    def __init__(self):
        self.status, self.message = OK, ""


class Bound:
    """One seed's buffers on the device and the bytes they were given."""

    def __init__(self):
        self.arrays = {}
        self.uploaded = {}  # input and in-out name -> raw bytes uploaded
        self.expected = {}  # output and in-out name -> raw expected bytes (none for the sealed seed)
        self.spacers = []
        self.sealed = False  # the sealed seed's inputs: its outputs go to the judge


class TritonRunner:
    def __init__(self, opts, ops, golden, module, phases=None, judge=None, sealed_inputs=None):
        self.o, self.ops, self.g, self.module = opts, ops, golden, module
        self.ph = phases or Phases()
        # The judge and the sealed seed's inputs (read before the kernel was imported); None: no sealed check. With
        # --ephemeral-fd the judge serves the ephemeral seed in the sealed seed's place.
        self.judge, self.sealed_inputs = judge, sealed_inputs
        self.ephemeral = opts.ephemeral
        self.which = "the ephemeral seed" if opts.ephemeral else "the sealed seed"
        self.rng = random.Random(os.getpid() * 2654435761 + 17)
        self.first_call_ms = None
        self.flush_bytes = 0

    # --- buffers -------------------------------------------------------------------------------------

    def bind(self, seed):
        with self.ph("bind"):
            return self._bind(seed)

    def _bind(self, seed):
        path = os.path.join(self.g.dir, f"seed_{seed}.safetensors")
        try:
            tensors = store.read_raw(path)
        except (OSError, ValueError, KeyError) as e:
            raise Fatal(LOAD_ERROR, f"cannot read golden seed file {path}: {e}") from None
        b = Bound()
        for buf in self.g.buffers:
            b.spacers.append(self.ops.spacer(256 * (1 + self.rng.randrange(4096))))
            b.arrays[buf.name] = self.ops.empty(buf.shape, buf.dtype)
            if buf.role in ("input", "inout"):
                t = tensors.get("in." + buf.name)
                if t is None:
                    raise Fatal(LOAD_ERROR, f"golden seed {seed} lacks in.{buf.name}")
                if t[2].size != buf.nbytes:
                    raise Fatal(LOAD_ERROR, f"golden in.{buf.name} has the wrong size")
                b.uploaded[buf.name] = t[2]
            if buf.role in ("output", "inout"):
                t = tensors.get("out." + buf.name)
                if t is None:
                    raise Fatal(LOAD_ERROR, f"golden seed {seed} lacks out.{buf.name}")
                b.expected[buf.name] = t[2]
        self.reset_outputs(b)
        return b

    def bind_sealed(self):
        """The sealed seed's inputs, from the judge, in new buffers; its expected outputs stay with the judge."""
        import numpy as np  # noqa: PLC0415

        with self.ph("bind"):
            b = Bound()
            b.sealed = True
            for buf in self.g.buffers:
                b.spacers.append(self.ops.spacer(256 * (1 + self.rng.randrange(4096))))
                b.arrays[buf.name] = self.ops.empty(buf.shape, buf.dtype)
                if buf.role in ("input", "inout"):
                    raw = self.sealed_inputs.get(buf.name)
                    if raw is None or len(raw) != buf.nbytes:
                        raise Fatal(LOAD_ERROR, f"{self.which} (the judge's) lacks input {buf.name} of {buf.nbytes} bytes")
                    b.uploaded[buf.name] = np.frombuffer(raw, dtype=np.uint8)
            self.reset_outputs(b)
            return b

    def reset_outputs(self, b):
        """Inputs and in-out buffers get their golden bytes, outputs the poison pattern; then a sync."""
        for buf in self.g.buffers:
            if buf.name in b.uploaded:
                self.ops.upload(b.arrays[buf.name], b.uploaded[buf.name])
            else:
                self.ops.fill_byte(b.arrays[buf.name], compare.poison_byte(buf.dtype))
        self.ops.synchronize()

    # --- calling -------------------------------------------------------------------------------------

    def kwargs(self, b, config):
        kw = {}
        for name in self.g.inputs:
            kw[name] = b.arrays[name] if name in b.arrays else self.g.scalars[name]
        kw.update(config)
        return kw

    def call(self, b, config):
        kw = self.kwargs(b, config)
        if self.first_call_ms is not None:
            self._launch(kw)
            return
        with self.ph("first_call"):  # the first call compiles (Triton's JIT): never timed
            t0 = time.perf_counter()
            self._launch(kw)
            self.sync("the first run_kernel() call")
            self.first_call_ms = (time.perf_counter() - t0) * 1e3

    def _launch(self, kw):
        try:
            self.module.run_kernel(**kw)
        except Exception as e:  # noqa: BLE001 (every failure of the kernel is data)
            raise classify_exception(e, "run_kernel()") from None

    def sync(self, what):
        try:
            self.ops.synchronize()
        except Exception as e:  # noqa: BLE001 (an asynchronous CUDA error surfaces here)
            raise classify_exception(e, f"synchronize after {what}") from None

    # --- checking ------------------------------------------------------------------------------------

    def verify(self, b, atol, rtol, state):
        with self.ph("verify"):
            return self._verify(b, atol, rtol, state)

    def _verify(self, b, atol, rtol, state):
        self.sync("run_kernel()")  # device-wide: work on any stream is finished before anything is read
        outputs, inputs = {}, {}
        sealed_outputs = {}  # the sealed seed's outputs, for the judge
        for buf in self.g.buffers:
            if b.sealed and buf.role != "input":
                try:
                    sealed_outputs[buf.name] = self.ops.download(b.arrays[buf.name])
                except Exception as e:  # noqa: BLE001
                    raise classify_exception(e, f"reading {buf.name}") from None
                continue
            try:  # the comparison runs where the buffer is (ops.comparable): no download on the GPU
                got = self.ops.comparable(b.arrays[buf.name], buf.dtype)
                want = self.ops.like(got, b.uploaded[buf.name] if buf.role == "input" else b.expected[buf.name])
            except Exception as e:  # noqa: BLE001
                raise classify_exception(e, f"reading {buf.name}") from None
            if buf.role == "input":
                first = compare.first_changed_element(want, got, dtypes.lookup(buf.dtype).itemsize)
                inputs[buf.name] = {"unchanged": first < 0, "first_changed_index": first}
                if first >= 0 and state.status == OK:
                    state.status = INPUT_MODIFIED
                    state.message = f"input {buf.name} was modified by the kernel (first changed element {first})"
            else:
                c = compare.compare(buf.dtype, buf.shape, want, got, atol, rtol)
                outputs[buf.name] = c.to_json()
                if not c.ok and state.status in (OK, INPUT_MODIFIED):
                    unwritten = c.still_poisoned > 0 and buf.role == "output"
                    state.status = UNWRITTEN_OUTPUT if unwritten else WRONG_RESULT
                    state.message = f"output {buf.name}: {c.summary()}"
        if b.sealed:
            try:
                v = self.judge.judge(self.g.dir, atol, rtol, sealed_outputs)
            except sealed.JudgeError as e:
                raise Fatal(INTERNAL_ERROR, f"{self.which} could not be judged: {e}") from None
            outputs = v["outputs"]
            if v["status"] != OK and state.status in (OK, INPUT_MODIFIED):
                wrong = WRONG_ON_EPHEMERAL_SEED if self.ephemeral else WRONG_ON_SEALED_SEED
                state.status = wrong if v["status"] == WRONG_RESULT else v["status"]
                state.message = v["message"]
        return {"outputs": outputs, "inputs": inputs, "checked_on": "judge" if b.sealed else "host"}

    def check_sealed(self, config, atol, rtol, state):
        """One call on the sealed seed, judged by the judge: the seed's record (seed -1, "sealed": true; the ephemeral
        seed in its place: seed -2, "ephemeral": true)."""
        b = self.bind_sealed()
        self.call(b, config)
        v = self.verify(b, atol, rtol, state)
        v["seed"] = sealed.EPHEMERAL_SEED_ID if self.ephemeral else sealed.SEALED_SEED_ID
        v["ephemeral" if self.ephemeral else "sealed"] = True
        if state.status != OK:
            state.message = f"on {self.which}: " + state.message
        return v

    # --- timing --------------------------------------------------------------------------------------

    def warm_up(self, b, config):
        t0, n = time.perf_counter(), 0
        while n < WARMUP_MIN_CALLS or (time.perf_counter() - t0) * 1e3 < WARMUP_MIN_MS:
            self.call(b, config)
            self.sync("a warm-up call")
            n += 1
            if n > 1000:
                break
        return n

    def make_sampler(self, b, config):
        """sample(i, method, policy=None, probe=False) -> (event ms, enqueue ms, residual ms, held).

        events_behind_sleep: torch.cuda._sleep, a guard event, the flush, the start event, run_kernel, the stop
        event are all queued first; `held` says the guard was still pending then (the sample is launch-free).
        events_default_stream and the device-sync variant: the flush is enqueued on the stream without a host
        synchronisation, so it runs before the start event (outside the timed region) and hides most of
        run_kernel's Python launch overhead; the stop event follows the call on the same stream. A device-wide
        synchronisation precedes reading the events. With probe, the residual is the host time of a device-wide
        synchronisation after the stop event completed (work on other streams)."""
        timer = self.ops.timer()
        guard = self.ops.guard_event() if self.ops.sleep_available() else None
        kw = self.kwargs(b, config)
        fn = self.module.run_kernel
        ops = self.ops
        cold = self.o.l2 == "cold"

        def sample(i, method, policy=None, probe=False):
            held = True
            try:
                if method == sampling.BEHIND_SLEEP:
                    ops.sleep(policy.cycles())
                    guard.record()
                if cold:
                    ops.flush(i)
                h0 = time.perf_counter()
                timer.start()
                fn(**kw)
                if method == sampling.DEVICE_SYNC:
                    ops.synchronize()
                timer.stop()
                enqueue = (time.perf_counter() - h0) * 1e3
                if method == sampling.BEHIND_SLEEP:
                    held = not guard.query()
                residual = 0.0
                if probe:
                    timer.wait_stop()
                    r0 = time.perf_counter()
                    ops.synchronize()
                    r1 = time.perf_counter()
                    ops.synchronize()  # nothing left to wait for: the floor
                    residual = (r1 - r0) * 1e3
                    sample.sync_floors_ms.append((time.perf_counter() - r1) * 1e3)
                ops.synchronize()
            except Exception as e:  # noqa: BLE001
                raise classify_exception(e, "run_kernel() while timing") from None
            return timer.elapsed_ms(), enqueue, residual, held

        def call_sample(i):
            """The host-observed time of one call, as an application calling run_kernel sees it."""
            try:
                if cold:
                    ops.flush(i)
                    ops.synchronize()
                t0 = time.perf_counter()
                fn(**kw)
                ops.synchronize()
            except Exception as e:  # noqa: BLE001
                raise classify_exception(e, "run_kernel() while timing") from None
            return (time.perf_counter() - t0) * 1e3

        sample.call_sample = call_sample
        sample.sync_floors_ms = []  # the probe samples' second synchronisation, which had nothing to wait for
        return sample

    def choose_method(self, sample, info, counter):
        """The probe (plain events, with the residual) and the method it leads to: (method, reason, policy).
        A behind-sleep method is settled here: SETTLE_SAMPLES samples kept (the sleep doubled while too short),
        or the fallback when run_kernel waits on the GPU."""
        probe = [sample(counter.next(), sampling.EVENTS, probe=True) for _ in range(PROBE_SAMPLES)]
        ev_med = stats.median([p[0] for p in probe])
        enq_med = stats.median([p[1] for p in probe])
        res_med = stats.median([p[2] for p in probe])
        floor_med = stats.median(sample.sync_floors_ms) if sample.sync_floors_ms else 0.0
        info.update({"probe_event_median_ms": ev_med, "probe_enqueue_median_ms": enq_med,
                     "probe_residual_median_ms": res_med, "probe_sync_floor_median_ms": floor_med})
        if not self.ops.is_cuda:
            return sampling.PERF_COUNTER, "", None
        forced = self.o.timing_method if self.o.timing_method != "auto" else None
        if forced and forced != sampling.BEHIND_SLEEP:
            return forced, sampling.FORCED, None
        if not forced and sampling.work_outside(res_med, ev_med, floor_med):
            return sampling.DEVICE_SYNC, sampling.WORK_OUTSIDE, None
        if not self.ops.sleep_available():
            return sampling.EVENTS, sampling.BLOCKER_UNAVAILABLE, None
        policy = sampling.SleepPolicy(self.ops.sleep_cycles_per_ms(), enq_med)
        kept = 0
        while kept < SETTLE_SAMPLES:
            _, enq, _, held = sample(counter.next(), sampling.BEHIND_SLEEP, policy)
            verdict = policy.record(held, enq)
            if verdict == "give_up":
                return sampling.EVENTS, sampling.SOLVE_WAITED, None
            kept += verdict == "keep"
        return sampling.BEHIND_SLEEP, sampling.FORCED if forced else "", policy

    @staticmethod
    def take_one(sample, counter, method, policy):
        """One kept GPU sample (behind the sleep: retried while the sleep was too short; GaveUp at last)."""
        while True:
            gpu, enq, _, held = sample(counter.next(), method, policy)
            if method != sampling.BEHIND_SLEEP:
                return gpu
            verdict = policy.record(held, enq)
            if verdict == "keep":
                return gpu
            if verdict == "give_up":
                raise sampling.GaveUp()

    def time_samples(self, b, config, info):
        """Warm-up, probe and method, then a GPU sample and a call sample per round until the stopping rule.
        Returns (gpu samples, call samples, method); `info` gets the timing_info fields."""
        info["warmup_calls"] = self.warm_up(b, config)
        sample = self.make_sampler(b, config)
        counter = _Counter()
        method, reason, policy = self.choose_method(sample, info, counter)
        calls = []

        def take():
            gpu = self.take_one(sample, counter, method, policy)
            calls.append(sample.call_sample(counter.next()))
            return gpu

        def run_series():
            return timing.sample_until_stable(take, self.o.max_time_s, min_samples=self.o.min_samples,
                                              max_samples=self.o.max_samples, rel_ci=self.o.target_ci)

        try:
            samples, converged = run_series()
        except sampling.GaveUp:  # run_kernel waits on the GPU after all: start again without the sleep
            method, reason, policy = sampling.EVENTS, sampling.SOLVE_WAITED, None
            calls.clear()
            samples, converged = run_series()
        info["stop_reason"] = ("ci_reached" if converged else
                               "max_samples" if len(samples) >= self.o.max_samples else "time_budget")
        info.update({"timing_method": method, "launch_excluded": method in sampling.LAUNCH_EXCLUDED,
                     "fallback_reason": reason, "l2": self.o.l2, "flush_bytes": self.flush_bytes,
                     "flush_synchronized": False})
        if policy is not None:
            info.update({"sleep_ms": policy.sleep_ms, "discarded_samples": policy.discarded})
        if reason == sampling.WORK_OUTSIDE:
            info["work_outside_default_stream"] = True
        return samples, calls, method

    # --- modes ---------------------------------------------------------------------------------------

    def tolerance(self):
        atol = self.o.atol if self.o.atol >= 0 else self.g.atol
        rtol = self.o.rtol if self.o.rtol >= 0 else self.g.rtol
        return atol, rtol

    def run(self, result):
        atol, rtol = self.tolerance()
        result["tolerance"] = {"atol": atol, "rtol": rtol}
        state = _State()
        if self.o.mode == "paired":
            self.run_paired(result, atol, rtol, state)
        else:
            config = self.o.configs[0] if self.o.configs else {}
            seeds = []
            previous = None  # kept alive while the next seed allocates: its buffers get other addresses
            for seed in self.g.seeds:
                b = self.bind(seed)
                previous = None
                self.call(b, config)
                v = self.verify(b, atol, rtol, state)
                v["seed"] = seed
                seeds.append(v)
                previous = b
                if self.o.mode == "profile":
                    break  # one seed is enough to profile
            if state.status == OK and self.o.mode in ("check", "time") and self.sealed_inputs is not None:
                previous = None
                seeds.append(self.check_sealed(config, atol, rtol, state))
            result["seeds"] = seeds
            if self.o.dump_cubin:
                result["cubins"] = self.dump_cubins()
            if state.status == OK and self.o.mode == "time":
                b = self.bind(self.g.seeds[0])
                previous = None
                self.flush_bytes = self.ops.alloc_flush() if self.o.l2 == "cold" else 0
                info = {}
                with self.ph("timing"):
                    samples, call_samples, method = self.time_samples(b, config, info)
                # Samples only: kopt computes every statistic from them (runner::interpret, runner/stats.cpp).
                result["samples_ms"] = samples
                result["call_samples_ms"] = call_samples
                result["timing_method"] = method
                result["l2"] = self.o.l2
                result["timing_info"] = info
                self.reset_outputs(b)  # re-check on fresh poison: right once and wrong later fails
                self.call(b, config)
                re_state = _State()
                result["recheck"] = self.verify(b, atol, rtol, re_state)
                if re_state.status != OK:
                    state.status, state.message = re_state.status, "after timing: " + re_state.message
            if state.status == OK and self.o.mode == "profile":
                b = self.bind(self.g.seeds[0])
                previous = None
                self.call(b, config)  # warm-up outside the profiled range (Triton's JIT is done by now)
                self.sync("the warm-up call")
                self.reset_outputs(b)
                try:
                    self.ops.profiler_start()
                    self.module.run_kernel(**self.kwargs(b, config))
                    self.ops.synchronize()
                    self.ops.profiler_stop()
                except Exception as e:  # noqa: BLE001
                    raise classify_exception(e, "run_kernel() (profiled call)") from None
                result["profiled_calls"] = 1
            del previous
        result["status"] = state.status
        result["message"] = state.message

    def run_paired(self, result, atol, rtol, state):
        """Interleaved rounds: each round times every configuration once, in a shuffled order, on the same
        buffers (the first seed). Each configuration is first checked once on fresh poison."""
        configs = self.o.configs or [{}]
        b = self.bind(self.g.seeds[0])
        self.flush_bytes = self.ops.alloc_flush() if self.o.l2 == "cold" else 0
        checks = []
        for k, config in enumerate(configs):
            self.reset_outputs(b)
            self.call(b, config)
            st = _State()
            checks.append(self.verify(b, atol, rtol, st))
            if st.status != OK and state.status == OK:
                state.status, state.message = st.status, f"configuration {k} {config}: {st.message}"
            for _ in range(WARMUP_MIN_CALLS - 1):
                self.call(b, config)
                self.sync("a warm-up call")
        if state.status == OK and self.sealed_inputs is not None:  # each configuration once on the sealed seed
            for k, config in enumerate(configs):
                st = _State()
                checks[k]["sealed_seed"] = self.check_sealed(config, atol, rtol, st)
                if st.status != OK:
                    state.status, state.message = st.status, f"configuration {k} {config}: {st.message}"
                    break
        samplers = [self.make_sampler(b, c) for c in configs]
        counter = _Counter()
        method, policies = sampling.EVENTS, [None] * len(configs)
        if state.status == OK:
            method, policies = self.paired_method(samplers, counter, result)
        samples = [[] for _ in configs]
        order = list(range(len(configs)))
        t0, rounds = time.perf_counter(), 0
        with self.ph("timing"):
            while rounds < self.o.rounds and state.status == OK:
                self.rng.shuffle(order)
                try:
                    for k in order:
                        samples[k].append(self.take_one(samplers[k], counter, method, policies[k]))
                except sampling.GaveUp:  # a configuration waits on the GPU: every one again, without the sleep
                    method, policies = sampling.EVENTS, [None] * len(configs)
                    result["fallback_reason"] = sampling.SOLVE_WAITED
                    samples = [[] for _ in configs]
                    rounds, t0 = 0, time.perf_counter()
                    continue
                rounds += 1
                if rounds >= 10 and time.perf_counter() - t0 > self.o.max_time_s:
                    break
        result["rounds"] = rounds
        result["timing_method"] = method
        result["l2"] = self.o.l2
        label = os.path.basename(self.o.kernel)
        # Samples only: kopt computes each configuration's statistics (runner::interpret).
        result["libs"] = [{"lib": f"{label}#{k}", "config": configs[k], "check": checks[k],
                           "samples_ms": samples[k]} for k in range(len(configs))]

    def paired_method(self, samplers, counter, result):
        """One method for every configuration, the most conservative any needs (as the C++ child does)."""
        chosen, result["probes"] = [], []
        for sample in samplers:
            info = {}
            chosen.append(self.choose_method(sample, info, counter))
            result["probes"].append(dict(info, timing_method=chosen[-1][0], fallback_reason=chosen[-1][1]))
        methods = [c[0] for c in chosen]
        for m in (sampling.PERF_COUNTER, sampling.DEVICE_SYNC, sampling.EVENTS):
            if m in methods:
                result["fallback_reason"] = next(c[1] for c in chosen if c[0] == m)
                return m, [None] * len(samplers)
        return sampling.BEHIND_SLEEP, [c[2] for c in chosen]

    def dump_cubins(self):
        return cubins.write(cubins.collect(os.environ.get("TRITON_CACHE_DIR"), self.module), self.o.dump_cubin)


class _Counter:
    """Sample numbers (the flush writes a different byte each time)."""

    def __init__(self):
        self.i = 0

    def next(self):
        self.i += 1
        return self.i


def _meta(ops):
    t, tr = sys.modules.get("torch"), sys.modules.get("triton")
    meta = {"kind": "runner_result", "producer": "kopt_harness", "backend": "triton",
            "time": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "python": platform.python_version(), "torch": getattr(t, "__version__", None),
            "triton": getattr(tr, "__version__", None)}
    if ops is not None:
        try:
            meta["device"] = ops.describe()
        except Exception:  # noqa: BLE001 (a broken context must not lose the result)
            meta["device"] = "?"
    return meta


def _compile_only(o, ops, module, result):
    """Mode compile: setup(seed) on the device, one call, the cubins. No golden data, no checks. Given several dims
    (a list), one setup() and one call at each, in order: a dimension the kernel takes as tl.constexpr compiles a
    kernel a value (liger's geglu: n_cols), and a candidate's timed child checks every case of the workload matrix."""
    config = o.configs[0] if o.configs else {}
    calls = []
    for dims in (o.dims if isinstance(o.dims, list) else [o.dims or {}]):
        ks = kernelmod.call_setup(module, o.seed, dims)
        kernelmod.check_config(config, set(ks.inputs))
        kw = {k: (ops.adopt(v) if k in ks.arrays() else v) for k, v in ks.inputs.items()}
        kw.update(config)
        t0 = time.perf_counter()
        try:
            module.run_kernel(**kw)
            ops.synchronize()
        except Exception as e:  # noqa: BLE001
            raise classify_exception(e, "run_kernel()") from None
        calls.append((time.perf_counter() - t0) * 1e3)
        del kw, ks
    result["first_call_ms"] = calls[0]
    result["first_calls_ms"] = calls
    if o.dump_cubin:
        result["cubins"] = cubins.write(cubins.collect(os.environ.get("TRITON_CACHE_DIR"), module), o.dump_cubin)
    result["status"], result["message"] = OK, ""


def check_options(o):
    if o.mode not in MODES:
        raise UsageError(f"--mode {o.mode}: expected one of {', '.join(MODES)}")
    if isinstance(o.dims, list) and o.mode != "compile":
        raise UsageError(f"--dims as an array is for --mode compile, not --mode {o.mode}")
    if o.mode == "compile":
        if o.dims is None:
            raise UsageError("--mode compile needs --dims (setup()'s dimensions)")
    elif not o.golden:
        raise UsageError(f"--mode {o.mode} needs --golden DIR")
    if o.mode not in ("paired",) and len(o.configs) > 1:
        raise UsageError(f"--mode {o.mode} takes one --config; only --mode paired takes several")
    if o.max_time_s <= 0 or o.target_ci <= 0 or o.min_samples < 1 or o.max_samples < o.min_samples or o.rounds < 1:
        raise UsageError("--max-time-s, --target-ci, --min-samples, --max-samples and --rounds must be positive "
                         "(and --max-samples >= --min-samples)")
    for i, c in enumerate(o.configs):
        kernelmod.check_config(c, set(), where=f"--config #{i}")
    if o.l2 not in ("cold", "warm"):
        raise UsageError(f"--l2 {o.l2}: expected cold or warm")
    if o.timing_method != "auto" and o.timing_method not in FORCEABLE:
        raise UsageError(f"--timing-method {o.timing_method}: expected auto or one of {', '.join(FORCEABLE)}")
    if o.device not in ("cuda", "cpu", "numpy"):
        raise UsageError(f"--device {o.device}: expected cuda, cpu or numpy")
    if o.ephemeral and o.mode != "check":
        raise UsageError(f"--ephemeral-fd is for --mode check (a one-shot check run), not --mode {o.mode}")
    if o.also_check and o.mode != "time":
        raise UsageError(f"--also-check is for --mode time (the other cases checked after the timed run), not --mode {o.mode}")


def _point_imported_triton_at(cache_dir):
    """In a child of the fork server triton is imported before TRITON_CACHE_DIR is set: where this triton
    keeps the variable in a knob (triton.knobs.cache.dir, 3.4 and later), the knob is set as well."""
    cache = getattr(getattr(sys.modules.get("triton"), "knobs", None), "cache", None)
    if cache is not None:
        try:
            cache.dir = cache_dir
        except Exception:  # noqa: BLE001 (an older or newer triton: the environment variable is what it reads)
            pass


NOT_STARTED = ("no judge was started in this process (`python3 -m kopt_harness triton-run` and the fork server's "
               "children start it, with KOPT_EXE naming kopt)")


def _sealed_inputs(sealing, g):
    """The sealed seed's (or, given to the judge, the ephemeral seed's) inputs from the judge, read before the kernel
    is imported; (inputs or None, answer_key)."""
    has_seed = sealed.sealed_token(g.manifest) is not None
    key = sealing.answer_key(has_seed)
    if not (has_seed or sealing.ephemeral) or sealing.judge is None:
        return None, key
    try:
        return sealing.judge.inputs(g.dir), key
    except sealed.JudgeError as e:  # the answer key's state says so; an honest kernel does not fail for it
        which = "ephemeral" if sealing.ephemeral else "sealed"
        key.update({"out_of_reach": False, "reason": f"the judge could not hand out the {which} seed's inputs: {e}"})
        return None, key


def _check_ephemeral(o, sealing, sealed_inputs, key):
    """--ephemeral-fd: the run checks the ephemeral seed or fails; never passes without it."""
    if o.ephemeral != sealing.ephemeral:
        raise Fatal(INTERNAL_ERROR, "--ephemeral-fd: the ephemeral seed's descriptor was not handed to this process's "
                                    "judge before the kernel was imported" if o.ephemeral else
                    "the judge serves an ephemeral seed, but the command line has no --ephemeral-fd")
    if o.ephemeral and sealed_inputs is None:
        raise Fatal(INTERNAL_ERROR, "the ephemeral seed cannot be checked: " + key.get("reason", "?"))


def _check_other_cases(o, ops, module, sealing):
    """--also-check: each other case's golden data checked as a check run would (every seed, then the sealed seed),
    in this process; stops at the first case that is not right. A list of {golden, status, message, seeds,
    phases_ms}; a case's load error is that case's status, not the timed run's."""
    cases = []
    for folder in o.also_check:
        ph = Phases(of_process=False)
        case = {"golden": os.path.abspath(folder)}
        try:
            with ph("golden_load"):
                g = load_golden(folder)
            with ph("sealed_inputs"):
                inputs, key = _sealed_inputs(sealing, g)
            for i, c in enumerate(o.configs):
                try:
                    kernelmod.check_config(c, set(g.inputs), where=f"--config #{i}")
                except UsageError as e:
                    raise Fatal(LOAD_ERROR, str(e)) from None
            check = replace(o, mode="check", golden=folder, also_check=[], dump_cubin=None)
            out = {}
            TritonRunner(check, ops, g, module, ph, sealing.judge, inputs).run(out)
            case.update(status=out["status"], message=out["message"], seeds=out.get("seeds", []), answer_key=key)
        except Fatal as f:
            case.update(status=f.status, message=f.message)
        case["phases_ms"] = ph.to_json()
        cases.append(case)
        if case["status"] != OK:
            break  # the first wrong case decides, as kopt's checks at the cases do
    return cases


def run(o, sealing=None):
    """Runs the child and returns (result dict, exit code). The result always has a status; the caller
    writes it (write_result). `sealing` (default: this process's, sealed.CURRENT) holds the judge and the seal."""
    result = {"status": INTERNAL_ERROR, "message": "", "mode": o.mode}
    sealing = sealing or sealed.CURRENT or sealed.Sealing(judge_error=NOT_STARTED)
    sealed_inputs = None
    ph = Phases()
    ops = None
    cache_dir = None
    try:
        if o.triton_cache:
            # The candidate's own cache, which its compile-mode child filled (or this one fills): kept.
            os.makedirs(o.triton_cache, exist_ok=True)
            os.environ["TRITON_CACHE_DIR"] = os.path.abspath(o.triton_cache)
            _point_imported_triton_at(os.environ["TRITON_CACHE_DIR"])
        elif o.dump_cubin:
            # A fresh Triton cache for this process, set before triton is imported: every kernel compiled
            # from now on lands there (cubins.py).
            cache_dir = tempfile.mkdtemp(prefix="kopt-triton-cache-")
            os.environ["TRITON_CACHE_DIR"] = cache_dir
            _point_imported_triton_at(cache_dir)
        with ph("golden_load"):
            g = load_golden(o.golden) if o.mode != "compile" else None
        if g is not None:  # before the kernel is imported: the judge reads the sealed seed now
            with ph("sealed_inputs"):
                sealed_inputs, result["answer_key"] = _sealed_inputs(sealing, g)
            _check_ephemeral(o, sealing, sealed_inputs, result["answer_key"])
        try:
            before = set(sys.modules) if o.mode == "check" else None
            with ph("kernel_import"):
                module = kernelmod.load(o.kernel)
            if before is not None:  # what a fork server may preload for the next children (preload.py)
                excluded = [os.path.dirname(os.path.abspath(p)) for p in (o.kernel, os.environ.get(kernelmod.ORIGIN_ENV)) if p]
                result["installed_imports"] = preload.new_installed(before, excluded)
        except (UsageError, RefError) as e:
            if isinstance(e, RefError):
                traceback.print_exception(type(e.cause), e.cause, e.cause.__traceback__, file=sys.stderr)
            raise Fatal(LOAD_ERROR, f"{o.kernel}: {e}") from None
        with ph("device_init"):
            ops = devices.make(o.device)
        result["triton"] = {"kernel": os.path.abspath(o.kernel), "configs": o.configs, "device": o.device}
        if g is not None:
            for i, c in enumerate(o.configs):
                try:
                    kernelmod.check_config(c, set(g.inputs), where=f"--config #{i}")
                except UsageError as e:
                    raise Fatal(LOAD_ERROR, str(e)) from None
            runner = TritonRunner(o, ops, g, module, ph, sealing.judge, sealed_inputs)
            runner.run(result)
            result["triton"]["first_call_ms"] = runner.first_call_ms
            if o.also_check and result.get("status") == OK:
                result["cases"] = _check_other_cases(o, ops, module, sealing)
        else:
            try:
                _compile_only(o, ops, module, result)
            except (UsageError, RefError) as e:
                if isinstance(e, RefError):
                    traceback.print_exception(type(e.cause), e.cause, e.cause.__traceback__, file=sys.stderr)
                raise Fatal(LOAD_ERROR, f"{o.kernel}: {e}") from None
    except Fatal as f:
        result.update({"status": f.status, "message": f.message})
    except Exception as e:  # noqa: BLE001 (a bug in the runner itself)
        traceback.print_exc(file=sys.stderr)
        result.update({"status": INTERNAL_ERROR, "message": f"the Triton runner failed: {type(e).__name__}: {e}"})
    finally:
        if cache_dir:
            shutil.rmtree(cache_dir, ignore_errors=True)
    result["phases_ms"] = ph.to_json()
    result["meta"] = _meta(ops)
    return result, runresult.exit_code_for(result["status"])


def write_result(path, result):
    body = {"meta": result.pop("meta")}
    body.update(result)
    store.write_json_atomic(path, body)
