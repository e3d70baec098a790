"""`golden`: inputs and expected outputs from ref.py, for several seeds (docs/HARNESS.md)."""

import array
import contextlib
import datetime
import fcntl
import glob
import os
import platform
import random
import secrets
import socket
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from . import MANIFEST_VERSION, arrays, draw, dtypes, plan, refmod, sealed, timing, tolerances, workload
from .store import Pieces, safetensors_pieces, sha256_hex, write_atomic, write_json_atomic
from .errors import UsageError

DRAW_THREADS = max(1, min(8, os.cpu_count() or 1))
PREFETCH_MAX_BYTES = 2 << 30  # one seed's drawn inputs held ahead at most (a seed's own are held meanwhile)


class _Phases:
    """Seconds spent in each part of a request, on the thread that asked (the summary's phase_seconds, and the
    stream's log line: where a cold run's golden data spends its seconds)."""

    def __init__(self):
        self.seconds = {}

    @contextlib.contextmanager
    def timed(self, name):
        t = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - t)

    def add(self, name, seconds):
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    def rounded(self):
        return {k: round(v, 3) for k, v in self.seconds.items()}


@dataclass
class Options:
    ref: str
    params: list  # [signature.Param] in solve()'s order
    dims: dict
    seeds: int = 3
    out: str = "golden"
    ptr_size: int = None
    device: str = "auto"  # auto | cpu | cuda
    time_reference: bool = False
    seed_base: int = 0
    time_budget_s: float = 10.0
    # Triton kernels (triton_golden.py): setup(seed) -> {name: array or scalar} replaces ref.py's setup;
    # an all-zero input is an error rather than a warning; reference() also gets these extra keyword
    # arguments (the dims; buffers and scalars win); the manifest gets these extra top-level fields.
    setup: object = None
    zero_inputs_error: bool = False
    reference_extra: dict = None
    extra_manifest: dict = None
    # One more seed, drawn from a secret random number, written only as SEALED_DIR/seed.safetensors (kopt's measuring
    # process cannot open that folder; docs/GATES.md "The sealed seed"); the manifest names the folder's token.
    sealed_dir: str = None
    # The ephemeral seed instead of golden data (docs/GATES.md "The ephemeral seed"): one seed from a fresh secret
    # number, its bytes in a sealed memfd sent on this inherited socket (SCM_RIGHTS); nothing is written to any file.
    ephemeral_socket: int = None


def warn(warnings, text):
    warnings.append(text)
    print(f"kopt_harness: warning: {text}", file=sys.stderr, flush=True)


def _seed_globals(seed):
    random.seed(seed)
    np.random.seed(seed % (2**32))
    t = sys.modules.get("torch")
    if t is not None:
        t.manual_seed(seed)


def _check_options(o):
    if o.seeds < 1:
        raise UsageError(f"--seeds {o.seeds}: need at least 1")
    if o.seed_base < 0:
        raise UsageError(f"--seed-base {o.seed_base}: seeds are integers >= 0")
    if o.ptr_size is not None and o.ptr_size < 1:
        raise UsageError(f"--ptr-size {o.ptr_size}: need at least 1 element")
    if o.device not in ("auto", "cpu", "cuda"):
        raise UsageError(f"--device {o.device}: expected auto, cpu or cuda")
    if not o.time_budget_s > 0:
        raise UsageError(f"--time-budget-s {o.time_budget_s}: need a positive number of seconds")


def _adopt_returned(backend, bufs, role_of, value):
    """Copies what reference() returned into the output buffers: a tensor (exactly one output) or a dict."""
    outputs = [n for n, r in role_of.items() if r != plan.INPUT]
    if arrays.is_array(value):
        if len(outputs) != 1:
            raise UsageError(f"ref.py: reference() returned one tensor, but solve() has {len(outputs)} outputs "
                             f"({', '.join(outputs) or 'none'}); return a dict name -> tensor or write in place")
        value = {outputs[0]: value}
    if not isinstance(value, dict):
        raise UsageError(f"ref.py: reference() returned {type(value).__name__}; it must write its outputs in "
                         f"place and return None, or return a tensor (one output) or a dict name -> tensor")
    for name, v in value.items():
        if name not in outputs:
            raise UsageError(f"ref.py: reference() returned {name!r}, which is not an output of solve() "
                             f"(outputs: {', '.join(outputs) or 'none'})")
        if not arrays.is_array(v):
            raise UsageError(f"ref.py: reference() returned {type(v).__name__} for output {name!r}; expected a tensor")
        dst = bufs[name]
        if arrays.numel(v) != arrays.numel(dst):
            raise UsageError(f"ref.py: reference() returned {name!r} with shape {list(arrays.shape_of(v))}, but its "
                             f"buffer has shape {list(arrays.shape_of(dst))}; fix setup()/shapes or the reference")
        got, want = arrays.dtype_name(v), arrays.dtype_name(dst)
        kg, kw = dtypes.lookup(got), dtypes.lookup(want)
        if kg is None or kw is None or (kg.kind != kw.kind and {kg.kind, kw.kind} != {"signed", "unsigned"}):
            raise UsageError(f"ref.py: reference() returned {name!r} as {got}, but solve() declares it {want}")
        backend.copy_into(dst, v)


def _nonfinite_count(x):
    if isinstance(x, np.ndarray):
        return int(x.size - np.count_nonzero(np.isfinite(x))) if x.dtype.kind == "f" else 0
    if not x.dtype.is_floating_point:
        return 0
    return int(x.numel() - sys.modules["torch"].isfinite(x).sum().item())


class _Run:
    """State shared across seeds: the plan made from the first seed, and what later seeds must agree with."""

    def __init__(self, o, module):
        self.o, self.module = o, module
        self.params = o.params
        self.role_of = plan.roles(o.params, getattr(module, "inout", None))
        self.setup_fn = o.setup if o.setup is not None else getattr(module, "setup", None)
        if self.setup_fn is not None and not callable(self.setup_fn):
            raise UsageError("ref.py: setup is defined but is not a function")
        self.backend = None
        self.buffers = None
        self.sizes_guessed = False
        self.scalars = None
        self.warnings = []
        if o.setup is not None and callable(getattr(module, "setup", None)):
            warn(self.warnings, "ref.py defines setup(), which is not used for a Triton kernel: the buffers come "
                 "from kernel.py's setup()")
        self.input_digests = []
        self.files = []
        # A seed's file is written and hashed on a thread while the next seed is drawn and computed (both release the
        # GIL: the write, and hashlib's update on a large buffer): a cold run's golden data waited on them, seed after
        # seed (12M floats x 3 seeds: 1.6 s of 4.9 in writing and 0.5 in hashing, here). At most one file in flight,
        # waited for before the next seed's bytes are made, so no more bytes are held at once than before; the files
        # are listed in seed order (flush_writes).
        self._writer = None
        self._pending = None
        # Drawing is numpy filling memory with the interpreter let go (2^24 floats: 0.1-0.3 s a buffer): a seed's
        # buffers are drawn side by side on a pool, and the next seed's while this one's reference runs and its
        # file is made (at most one seed ahead, and only while a seed's inputs stay under PREFETCH_MAX_BYTES). A
        # buffer's values depend on nothing but (seed, name) (draw.py), so neither changes a byte.
        self._pool = None
        self._prefetched = None
        self._host_copy = {}  # name -> the host copy of this seed's drawn buffer where the backend has one
        self.phases = _Phases()

    def setup(self, seed):
        if self.setup_fn is None:
            return {}, {}
        if self.o.setup is not None:
            return plan.split_setup(self.o.setup(seed), self.params)
        # setup's `seed` is always the harness's seed, even where solve() has a scalar named seed
        res = refmod.call(self.setup_fn, "setup()", {**self.o.dims, "seed": seed})
        return plan.split_setup(res, self.params)

    def plan_once(self, setup_bufs, setup_scalars):
        o = self.o
        self.backend = arrays.choose(self.module, setup_bufs, o.device)
        self.buffers, self.sizes_guessed = plan.plan_buffers(
            self.params, o.dims, self.role_of, getattr(self.module, "shapes", None), setup_bufs, o.ptr_size)
        self.scalars = plan.resolve_scalars(self.params, o.dims, setup_scalars)
        if self.backend.name == "numpy":
            for b in self.buffers:
                if dtypes.numpy_dtype(dtypes.lookup(b.dtype)) is None:
                    raise UsageError(f"parameter {b.name!r} is {b.dtype}: numpy has no {b.dtype}, so ref.py must "
                                     f"use torch ({'import torch' if arrays.torch_available() else 'install torch'})")
        if self.sizes_guessed:
            warn(self.warnings, "sizes were guessed (no setup() or shapes in ref.py): "
                 + ", ".join(f"{b.name}[{b.numel}]" for b in self.buffers if b.source == "guessed"))

    def values(self, seed, setup_bufs, setup_scalars):
        """The backend arrays for every pointer, in solve()'s order."""
        if plan.resolve_scalars(self.params, self.o.dims, setup_scalars) != self.scalars:
            raise UsageError(f"ref.py: setup(seed={seed}) returns different scalars than the first seed; "
                             f"scalars must not depend on the seed")
        planned = {b.name for b in self.buffers if b.source == "setup"}
        if set(setup_bufs) != planned:
            raise UsageError(f"ref.py: setup(seed={seed}) returns buffers {sorted(setup_bufs)}, but the first seed "
                             f"returned {sorted(planned)}; every seed must return the same names")
        drawn = self._take_draws(seed)
        self._host_copy = {}
        bufs = {}
        for b in self.buffers:
            d = dtypes.lookup(b.dtype)
            if b.name in setup_bufs:
                v = setup_bufs[b.name]
                if arrays.shape_of(v) != b.shape:
                    raise UsageError(f"ref.py: setup(seed={seed}) returns {b.name!r} with shape "
                                     f"{list(arrays.shape_of(v))}, but the first seed's was {list(b.shape)}")
                v = self.backend.adopt(v)
                if b.role == plan.OUTPUT:
                    self.backend.fill_zero(v)
            elif b.role == plan.OUTPUT:
                v = self.backend.zeros(b.shape, d)
            else:
                with self.phases.timed("draw"):
                    arr = drawn[b.name].result()
                with self.phases.timed("to_device"):
                    v, host = self.backend.from_draw(arr, d)
                del arr
                if host is not None:
                    self._host_copy[b.name] = host
            bufs[b.name] = v
        return bufs

    def _on_pool(self, fn, *args):
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=DRAW_THREADS, thread_name_prefix="golden-draw")
        return self._pool.submit(fn, *args)

    def _drawn_buffers(self):
        return [b for b in self.buffers if b.source != "setup" and b.role != plan.OUTPUT]

    def _draws(self, seed):
        """name -> future of its numpy array, for every buffer of `seed` that is drawn, on the pool."""
        return {b.name: self._on_pool(draw.draw, dtypes.lookup(b.dtype), b.shape, seed, b.name)
                for b in self._drawn_buffers()}

    def _take_draws(self, seed):
        if self._prefetched is not None and self._prefetched[0] == seed:
            drawn, self._prefetched = self._prefetched[1], None
            return drawn
        return self._draws(seed)

    def prefetch(self, seed):
        """Starts drawing `seed`'s buffers (the next one values() is asked for), where they are small enough."""
        size = sum(b.nbytes for b in self._drawn_buffers())
        if 0 < size <= PREFETCH_MAX_BYTES:
            self._prefetched = (seed, self._draws(seed))

    def reference_kwargs(self, bufs):
        return {**(self.o.reference_extra or {}), **bufs, **self.scalars}

    def call_reference(self, bufs):
        ref = self.module.reference
        kwargs = refmod.accepted_kwargs(ref, "reference()", self.reference_kwargs(bufs))
        returned = refmod.call(ref, "reference()", kwargs)
        if returned is not None:
            _adopt_returned(self.backend, bufs, self.role_of, returned)
        self.backend.synchronize()

    def one_seed(self, seed, setup_bufs, setup_scalars, out_dir=None, name=None, deliver=None, next_seed=None):
        """Writes one seed's inputs and expected outputs: to --out as seed_<seed>.safetensors, listed in the
        manifest, or (the sealed seed) to `out_dir`/`name`, listed nowhere, or (the ephemeral seed) hands its bytes
        to `deliver` and writes nothing. `next_seed`: the seed asked for next, whose draws start now."""
        secret = out_dir is not None or deliver is not None
        bk = self.backend
        bufs = self.values(seed, setup_bufs, setup_scalars)
        if next_seed is not None:
            self.prefetch(next_seed)
        stored = {}
        t = time.perf_counter()
        for b in self.buffers:
            if b.role != plan.OUTPUT:
                host = self._host_copy.pop(b.name, None)
                stored["in." + b.name] = host if host is not None else bk.stored(bufs[b.name])
                raw = arrays.stored_bytes(stored["in." + b.name])
                if not raw.any() and b.role == plan.INPUT and self.o.zero_inputs_error:
                    raise UsageError(f"seed {seed}: setup() returns input {b.name!r} as all zeros, so a kernel "
                                     f"that ignores it would still pass; draw its values from the seed")
                if not raw.any():  # drawn values never are; setup's may be
                    warn(self.warnings, f"seed {seed}: setup() returns input {b.name!r} as all zeros, so a kernel "
                         f"that ignores it would still pass")
        if not secret:  # hashed on the pool while the reference runs (hashlib lets go of the interpreter)
            self.input_digests.append(self._on_pool(_digest, [arrays.stored_bytes(v) for v in stored.values()]))
        snaps = {b.name: bk.snapshot(bufs[b.name]) for b in self.buffers if b.role == plan.INPUT}
        self.phases.add("store", time.perf_counter() - t)
        with self.phases.timed("reference"):
            self.call_reference(bufs)
        t = time.perf_counter()
        for b in self.buffers:
            if b.role == plan.INPUT:
                snap = snaps.pop(b.name)
                if snap is not None:
                    same = bk.same_as_snapshot(bufs[b.name], snap)
                else:
                    same = arrays.same_bytes(arrays.stored_bytes(bk.host(bufs[b.name])),
                                             arrays.stored_bytes(stored["in." + b.name]))
                del snap
                if not same:
                    raise UsageError(f"ref.py: reference() modified {b.name!r}, which solve() declares const "
                                     f"(an input); write only the outputs")
        for b in self.buffers:
            if b.role != plan.INPUT:
                bad = _nonfinite_count(bufs[b.name])  # where the values are (a device's count needs no host copy)
                out = bk.stored(bufs[b.name])
                stored["out." + b.name] = out
                if bad:
                    warn(self.warnings, f"seed {seed}: expected output {b.name!r} has {bad} NaN/Inf values")
        self.phases.add("store", time.perf_counter() - t)
        with self.phases.timed("write_wait"):
            self.flush_writes()  # the previous seed's file first: its bytes and this seed's are never held together
        label = "ephemeral" if deliver is not None else "sealed" if out_dir else str(seed)
        # One metadata key: safetensors writes its metadata map in no fixed order, and two keys made the same seed's
        # bytes (and its sha256, the golden data's identity) differ from one run to the next.
        with self.phases.timed("serialize"):
            data = safetensors_pieces({k: (arrays.dtype_name(v), arrays.shape_of(v), arrays.stored_bytes(v))
                                       for k, v in stored.items()}, {"kopt_harness": f"seed {label}"})
        if deliver is not None:
            deliver(data)
            return bufs, stored
        if out_dir is not None:
            write_atomic(os.path.join(out_dir, name), data)
            return bufs, stored
        name = f"seed_{seed}.safetensors"
        if self._writer is None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="golden-write")
        self._pending = (seed, name, self._writer.submit(_write_and_hash, os.path.join(self.o.out, name), data))
        return bufs, stored

    def flush_writes(self):
        """Waits for the seed file in flight (its error, if any, is raised here) and lists it."""
        if self._pending is None:
            return
        seed, name, fut = self._pending
        self._pending = None
        self.files.append({"seed": seed, "file": name, "sha256": fut.result()})

    def close(self):
        """Waits for what is in flight, then stops the writer's and the draws' threads (also after an error)."""
        try:
            with self.phases.timed("write_wait"):
                self.flush_writes()
                self.input_digests = [d if isinstance(d, str) else d.result() for d in self.input_digests]
        finally:
            self._prefetched = None
            for pool in (self._writer, self._pool):
                if pool is not None:
                    pool.shutdown(wait=True, cancel_futures=True)
            self._writer = self._pool = None

    def time_reference(self, bufs, stored):
        """Times the reference on this seed's buffers; `stored` holds the in-out initial values."""
        initial = {b.name: self.backend.adopt(stored["in." + b.name]) for b in self.buffers if b.role == plan.INOUT}
        ref = self.module.reference
        kwargs = refmod.accepted_kwargs(ref, "reference()", self.reference_kwargs(bufs))

        def restore():
            for n, v in initial.items():
                self.backend.copy_into(bufs[n], v)

        def call():
            refmod.call(ref, "reference()", kwargs)

        restore()
        return timing.time_reference(call, self.backend, restore, self.o.time_budget_s)


def _digest(raws):
    """sha256 over a seed's input bytes (flat uint8 arrays): whether two seeds drew the same inputs."""
    return sha256_hex(Pieces(raws))


def _write_and_hash(path, data):
    """A seed's file, written atomically; returns its sha256 (the manifest's)."""
    write_atomic(path, data)
    return sha256_hex(data)


def _meta(backend):
    t = sys.modules.get("torch")
    import safetensors  # noqa: PLC0415

    meta = {"kind": "golden", "producer": "kopt_harness",
            "time": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "python": platform.python_version(), "numpy": np.__version__,
            "safetensors": getattr(safetensors, "__version__", "?"),
            "torch": getattr(t, "__version__", None) if t is not None else None}
    if backend.name == "torch" and backend.device == "cuda":
        meta["gpu"] = t.cuda.get_device_name(0)
        meta["torch_allow_tf32_matmul"] = bool(t.backends.cuda.matmul.allow_tf32)
    return meta


def _secret_seed(public):
    """A secret seed number: never one of the public seeds, below 2**31 so that any setup() can seed numpy with it."""
    seed = secrets.randbelow(2**31 - 2**20) + 2**20
    while seed in public:
        seed = secrets.randbelow(2**31 - 2**20) + 2**20
    return seed


def _sealed_seed(run, sealed_dir, seed):
    """The sealed seed: `seed` (a secret seed number), its file written to sealed_dir only. Returns the manifest's
    "sealed" entry (the folder's name)."""
    os.makedirs(sealed_dir, mode=0o700, exist_ok=True)
    _seed_globals(seed)
    setup_bufs, setup_scalars = run.setup(seed)
    run.one_seed(seed, setup_bufs, setup_scalars, out_dir=sealed_dir, name="seed.safetensors")
    return {"token": os.path.basename(os.path.normpath(sealed_dir))}


def _not_dumpable():
    """prctl(PR_SET_DUMPABLE, 0): no other process of the user can read this one's memory or open its descriptors
    through /proc/PID from now on (the ephemeral seed's bytes pass through it). For the process's remaining life."""
    return sealed.set_dumpable(False) is not None


def _send_sealed_memfd(sock_fd, data):
    """`data` into a new memfd sealed for good (size and bytes), its descriptor sent on the socket `sock_fd`."""
    fd = os.memfd_create("kopt-ephemeral-seed", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        for view in data.views():
            while view:
                view = view[os.write(fd, view):]
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS,
                    fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SEAL)
        with socket.socket(fileno=os.dup(sock_fd)) as sock:
            sock.sendmsg([b"E"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
    finally:
        os.close(fd)


def ephemeral(o):
    """The ephemeral seed (docs/GATES.md "The ephemeral seed"): one seed from a fresh secret number (never a public
    seed), through the same setup() and reference as every seed, its safetensors bytes in a sealed memfd sent on
    o.ephemeral_socket; no file is written. Returns the one-line summary (without the seed number)."""
    t_start = time.monotonic()
    _check_options(o)
    dumpable_off = _not_dumpable()
    module = refmod.load(o.ref)
    run = _Run(o, module)
    seed = _secret_seed([o.seed_base + k for k in range(o.seeds)])
    sent = {}

    def deliver(data):
        _send_sealed_memfd(o.ephemeral_socket, data)
        sent["bytes"] = len(data)

    try:
        _seed_globals(seed)
        setup_bufs, setup_scalars = run.setup(seed)
        run.plan_once(setup_bufs, setup_scalars)
        _seed_globals(seed)  # as generate(): torch may have been imported just now
        run.one_seed(seed, setup_bufs, setup_scalars, deliver=deliver)
    finally:
        run.close()
    return {"status": "ok", "ephemeral": True, "bytes": sent["bytes"], "backend": run.backend.name,
            "device": run.backend.device, "buffers": [b.name for b in run.buffers], "not_dumpable": dumpable_off,
            "warnings": len(run.warnings), "elapsed_s": round(time.monotonic() - t_start, 3)}


def _remove_stale(out_dir, keep):
    for path in glob.glob(os.path.join(out_dir, "seed_*.safetensors")):
        if os.path.basename(path) not in keep:
            os.unlink(path)


def generate(o):
    """Writes the golden files; returns the one-line summary. Raises UsageError / RefError."""
    t_start = time.monotonic()
    _check_options(o)
    module = refmod.load(o.ref)
    run = _Run(o, module)
    run.phases.add("load", time.monotonic() - t_start)
    seeds = [o.seed_base + k for k in range(o.seeds)]
    os.makedirs(o.out, exist_ok=True)
    reference_timing = None
    secret = _secret_seed(seeds) if o.sealed_dir else None
    following = seeds[1:] + ([secret] if secret is not None else [])  # what each seed's draws are followed by
    sealed = None
    try:
        for i, seed in enumerate(seeds):
            with run.phases.timed("setup"):
                _seed_globals(seed)
                setup_bufs, setup_scalars = run.setup(seed)
            if i == 0:
                with run.phases.timed("plan"):
                    run.plan_once(setup_bufs, setup_scalars)
                _seed_globals(seed)  # torch may have been imported just now; draws below do not depend on it
            timed_here = i == 0 and o.time_reference  # nothing drawn beside the reference while it is timed
            nxt = following[i] if i < len(following) else None
            bufs, stored = run.one_seed(seed, setup_bufs, setup_scalars, next_seed=None if timed_here else nxt)
            del setup_bufs
            if timed_here:
                with run.phases.timed("write_wait"):
                    run.flush_writes()  # nothing beside the reference while it is timed
                with run.phases.timed("reference_timing"):
                    reference_timing = run.time_reference(bufs, stored)
                if nxt is not None:
                    run.prefetch(nxt)
            del bufs, stored
        if secret is not None:
            sealed = _sealed_seed(run, o.sealed_dir, secret)
    finally:
        run.close()
    if len(seeds) > 1 and len(set(run.input_digests)) == 1 and any(b.role != plan.OUTPUT for b in run.buffers):
        warn(run.warnings, "every seed has the same inputs: does setup() ignore its seed?")

    model = None
    wm = getattr(module, "workload_model", None)
    if wm is not None:
        if not callable(wm):
            raise UsageError("ref.py: workload_model is defined but is not a function")
        model = workload.validate(refmod.call(wm, "workload_model()", {**o.dims, **run.scalars}))

    tol = tolerances.resolve(module, sorted({b.dtype for b in run.buffers if b.role != plan.INPUT}))
    manifest = {
        "meta": _meta(run.backend),
        "version": MANIFEST_VERSION,
        "reference_module": os.path.abspath(o.ref),
        "backend": run.backend.name,
        "device": run.backend.device,
        "seeds": seeds,
        "files": run.files,
        "dims": o.dims,
        "params": [{"name": p.name, "kind": p.kind, "dtype": p.dtype, "const": p.const} for p in o.params],
        "buffers": [b.manifest() for b in run.buffers],
        "scalars": run.scalars,
        "sizes_guessed": run.sizes_guessed,
        "tolerances": tol,
        "workload_model": model,
        "reference_timing": reference_timing,
        "warnings": run.warnings,
    }
    if sealed:
        manifest["sealed"] = sealed
    manifest.update(o.extra_manifest or {})
    write_json_atomic(os.path.join(o.out, "manifest.json"), manifest)
    _remove_stale(o.out, {f["file"] for f in run.files})
    elapsed = time.monotonic() - t_start
    run.phases.add("other", elapsed - sum(run.phases.seconds.values()))
    return {
        "status": "ok",
        "out": os.path.abspath(o.out),
        "manifest": os.path.abspath(os.path.join(o.out, "manifest.json")),
        "seeds": seeds,
        "backend": run.backend.name,
        "device": run.backend.device,
        "buffers": [b.name for b in run.buffers],
        "sizes_guessed": run.sizes_guessed,
        "reference_median_ms": reference_timing["median_ms"] if reference_timing else None,
        "warnings": len(run.warnings),
        "elapsed_s": round(elapsed, 3),
        "phase_seconds": run.phases.rounded(),
    }
