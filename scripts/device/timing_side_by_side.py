#!/usr/bin/env python3
"""The timing side-by-side of issue 17 (scripts/device/timing_check.sh, docs/PERFORMANCE.md): the same kopt
kernel, on the same golden inputs, timed three ways.

  calls    --lib K.so --golden DIR [--calls 15] [--keep-busy-us US]
                                                         solve() N times between cuProfilerStart/Stop, each
                                                         followed by a device synchronisation: run under
                                                         `ncu --profile-from-start off` for gpu__time_duration;
                                                         --keep-busy-us runs a spin kernel of that length on
                                                         every SM right before each call (give ncu
                                                         --kernel-name to leave it unprofiled), so the call
                                                         starts on a GPU that was busy, as kopt's samples do;
                                                         --flush memset|memset_then_read|memset_then_discard flushes the L2 as kopt
                                                         does before each call (for ncu --cache-control none)
  nvbench  --lib K.so --golden DIR --name NAME --json OUT [--sync] [--timeout-s 3]
                                                         nvbench (PyPI cuda-bench) cold measurement of solve()
  row      --rows ROWS.json --name NAME [--bench B.json] [--ncu NCU.csv --calls N] [--nvbench NV.json]
                                                         appends one kernel's figures to ROWS.json (a tool
                                                         that failed leaves its file absent: "-" in the table)
  ncu-clocks --ncu NCU.csv --name NAME                    one line: the median gpu__time_duration and the
                                                         clocks ncu saw (check.sh flushes' extra metrics)
  table    --rows ROWS.json                               the final table

solve() is called from the compiled .so through ctypes with device buffers holding the golden data's first seed
(its inputs uploaded, its outputs poisoned as kopt does), so all three tools time the same work. No torch and no
CUDA Python bindings are needed for `calls`: the CUDA driver is reached through ctypes as well.

nvbench's cold measurement (measure_cold): an L2 flush (a memset of the L2's size) and a stream sync, then a
blocking kernel on nvbench's stream, the start event, the launcher, the stop event, the release, a sync. solve()
launches on the legacy default stream; nvbench's stream is an ordinary (blocking) stream, so the legacy stream's
implicit ordering puts solve()'s kernels behind the blocking kernel and the stop event behind them: the
launches are queued before the GPU runs them, as in kopt's blocked timing. A solve() that synchronises inside
needs --sync (nvbench's exec(sync=True): no blocking kernel, launch included); work on a non-blocking stream
escapes nvbench's stop event (its figure for that kernel is not the work's).
"""
import argparse
import csv
import ctypes
import io
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

CTYPES = {"float32": ctypes.c_float, "float64": ctypes.c_double, "int32": ctypes.c_int32, "uint32": ctypes.c_uint32,
          "int64": ctypes.c_int64, "uint64": ctypes.c_uint64}


# --- golden data (pure) -----------------------------------------------------------------------------------

def load_golden(folder):
    """(params, buffers, scalars, inputs): the signature's params [(name, kind, dtype)], buffers {name: (role,
    nbytes, dtype)}, scalar values, and the first seed's uploaded bytes {name: bytes} (inputs and in-out)."""
    with open(os.path.join(folder, "signature.json"), encoding="utf-8") as f:
        sj = json.load(f)
    sig = sj.get("signature", sj)
    with open(os.path.join(folder, "manifest.json"), encoding="utf-8") as f:
        m = json.load(f)
    params = [(p["name"], p["kind"], p["dtype"]) for p in sig["params"]]
    buffers = {b["name"]: (b["role"], int(b["nbytes"]), b["dtype"]) for b in m["buffers"]}
    scalars = dict(m.get("scalars") or {})
    seed = m["seeds"][0]
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from kopt_harness import store  # noqa: PLC0415 (the harness's safetensors reader, numpy only)

    raw = store.read_raw(os.path.join(folder, f"seed_{seed}.safetensors"))
    inputs = {name: bytes(raw["in." + name][2]) for name, (role, _, _) in buffers.items()
              if role in ("input", "inout") and "in." + name in raw}
    return params, buffers, scalars, inputs


def poison_byte(dtype):
    return 0xFF if dtype.startswith(("float", "bfloat")) else 0xA5


# --- the CUDA driver through ctypes -----------------------------------------------------------------------

class Driver:
    def __init__(self):
        self.cu = ctypes.CDLL("libcuda.so.1")
        self.check(self.cu.cuInit(0), "cuInit")
        dev = ctypes.c_int()
        self.check(self.cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
        ctx = ctypes.c_void_p()
        self.check(self.cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
        self.check(self.cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")

    @staticmethod
    def check(rc, what):
        if rc != 0:
            raise RuntimeError(f"{what} failed: CUresult {rc}")

    def alloc(self, nbytes):
        p = ctypes.c_uint64()
        self.check(self.cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(max(nbytes, 1))), "cuMemAlloc")
        return p.value

    def upload(self, dptr, data):
        buf = ctypes.create_string_buffer(data, len(data))
        self.check(self.cu.cuMemcpyHtoD_v2(ctypes.c_uint64(dptr), buf, ctypes.c_size_t(len(data))), "cuMemcpyHtoD")

    def fill(self, dptr, byte, nbytes):
        self.check(self.cu.cuMemsetD8_v2(ctypes.c_uint64(dptr), ctypes.c_ubyte(byte), ctypes.c_size_t(nbytes)), "cuMemsetD8")

    def sync(self):
        self.check(self.cu.cuCtxSynchronize(), "cuCtxSynchronize")


def bind_solve(lib_path, golden, drv):
    """solve with its arguments bound: a no-argument callable."""
    params, buffers, scalars, inputs = load_golden(golden)
    lib = ctypes.CDLL(os.path.abspath(lib_path))
    solve = lib.solve
    solve.restype = None
    types, args = [], []
    for name, kind, dtype in params:
        if kind == "pointer":
            role, nbytes, bdtype = buffers[name]
            d = drv.alloc(nbytes)
            if name in inputs:
                drv.upload(d, inputs[name])
            else:
                drv.fill(d, poison_byte(bdtype), nbytes)
            types.append(ctypes.c_void_p)
            args.append(ctypes.c_void_p(d))
        else:
            t = CTYPES[dtype]
            types.append(t)
            args.append(t(scalars[name]))
    solve.argtypes = types
    drv.sync()
    return lambda: solve(*args)


# A spin kernel for --keep-busy-us (PTX, loaded by the driver: nothing is compiled on the GPU machine). Every thread
# runs dependent FMAs until %globaltimer has advanced by `ns`; the FMA chain's result is stored only if it is -1,
# which it never is, so the loop is not removed.
KEEP_BUSY_PTX = r"""
.version 7.8
.target sm_90
.address_size 64
.visible .entry kopt_keep_busy(.param .u64 ns, .param .u64 sink)
{
  .reg .pred %p<3>;
  .reg .f32 %f<4>;
  .reg .b32 %r<2>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [ns];
  ld.param.u64 %rd2, [sink];
  cvta.to.global.u64 %rd2, %rd2;
  mov.u64 %rd3, %globaltimer;
  mov.u32 %r1, %tid.x;
  cvt.rn.f32.u32 %f1, %r1;
LOOP:
  fma.rn.f32 %f1, %f1, 0f3F7FBE77, 0f3F800000;
  fma.rn.f32 %f1, %f1, 0f3F7FBE77, 0f3F800000;
  fma.rn.f32 %f1, %f1, 0f3F7FBE77, 0f3F800000;
  fma.rn.f32 %f1, %f1, 0f3F7FBE77, 0f3F800000;
  fma.rn.f32 %f1, %f1, 0f3F7FBE77, 0f3F800000;
  fma.rn.f32 %f1, %f1, 0f3F7FBE77, 0f3F800000;
  fma.rn.f32 %f1, %f1, 0f3F7FBE77, 0f3F800000;
  fma.rn.f32 %f1, %f1, 0f3F7FBE77, 0f3F800000;
  mov.u64 %rd4, %globaltimer;
  sub.s64 %rd5, %rd4, %rd3;
  setp.lt.u64 %p1, %rd5, %rd1;
  @%p1 bra LOOP;
  setp.neu.f32 %p2, %f1, 0fBF800000;
  @%p2 bra DONE;
  st.global.u64 [%rd2], %rd4;
DONE:
  ret;
}
"""


def kopt_ptx_module():
    """The PTX module kopt's runner loads (src/runner/blocker_ptx.cpp: its blocker, the clean flush's read pass
    kopt_l2_clean_read, ...), read from the source tree, so --flush memset_then_read runs kopt's own read pass."""
    with open(os.path.join(ROOT, "src", "runner", "blocker_ptx.cpp"), encoding="utf-8") as f:
        text = f.read()
    start = text.index('R"KOPT_PTX(') + len('R"KOPT_PTX(')
    return text[start:text.index(')KOPT_PTX"', start)]


FLUSH_BYTES = 256 << 20  # kopt's flush buffer (docs/RUNNER.md, "The L2 flush"): four times the H200's 60 MiB L2


def load_function(drv, ptx, name):
    mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
    drv.check(drv.cu.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(ptx.encode())), "cuModuleLoadData")
    drv.check(drv.cu.cuModuleGetFunction(ctypes.byref(fn), mod, name.encode()), "cuModuleGetFunction")
    return fn


def sm_count(drv):
    sms, dev = ctypes.c_int(), ctypes.c_int()
    drv.check(drv.cu.cuCtxGetDevice(ctypes.byref(dev)), "cuCtxGetDevice")
    drv.check(drv.cu.cuDeviceGetAttribute(ctypes.byref(sms), 16, dev), "cuDeviceGetAttribute")  # MULTIPROCESSOR_COUNT
    return sms.value


def launcher(drv, fn, blocks, threads, args):
    """A no-argument callable launching fn on the legacy default stream with `args` (ctypes values)."""
    params = (ctypes.c_void_p * len(args))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in args])

    def launch():
        drv.check(drv.cu.cuLaunchKernel(fn, ctypes.c_uint(blocks), ctypes.c_uint(1), ctypes.c_uint(1),
                                        ctypes.c_uint(threads), ctypes.c_uint(1), ctypes.c_uint(1), ctypes.c_uint(0),
                                        ctypes.c_void_p(0), params, ctypes.c_void_p(0)), "cuLaunchKernel")
    launch.keep = (args, params)  # the argument storage lives as long as the callable
    return launch


def l2_flush(drv, how):
    """A no-argument callable flushing the L2 as kopt's runner does (runner/timer.cpp, Timer::flush_async: a 32-bit
    memset of FLUSH_BYTES with a new value each time; with `memset_then_read`, then kopt_l2_clean_read on 1024 blocks
    of 256 threads; with `memset_then_discard`, then kopt_l2_discard on as many), or None for `none` (run ncu with
    --cache-control none to use it)."""
    if how == "none":
        return None
    buf = drv.alloc(FLUSH_BYTES)
    after = None  # the pass after the memset
    if how == "memset_then_read":
        fn = load_function(drv, kopt_ptx_module(), "kopt_l2_clean_read")
        after = launcher(drv, fn, 1024, 256, [ctypes.c_uint64(buf), ctypes.c_uint64(FLUSH_BYTES // 16),
                                              ctypes.c_uint32(0x9E3779B9), ctypes.c_uint64(drv.alloc(16))])
    elif how == "memset_then_discard":
        fn = load_function(drv, kopt_ptx_module(), "kopt_l2_discard")
        after = launcher(drv, fn, 1024, 256, [ctypes.c_uint64(buf), ctypes.c_uint64(FLUSH_BYTES // 128)])
    token = [0]

    def flush():
        token[0] += 1
        value = (token[0] * 2654435761) & 0xFFFFFFFF
        drv.check(drv.cu.cuMemsetD32_v2(ctypes.c_uint64(buf), ctypes.c_uint32(value), ctypes.c_size_t(FLUSH_BYTES // 4)),
                  "cuMemsetD32")
        if after:
            after()
    return flush


def keep_busy(drv, us):
    """A no-argument callable that launches kopt_keep_busy for `us` microseconds on 8 blocks of 256 threads per SM
    (the legacy default stream, as solve()'s kernels), or None when us is 0."""
    if not us:
        return None
    fn = load_function(drv, KEEP_BUSY_PTX, "kopt_keep_busy")
    return launcher(drv, fn, 8 * sm_count(drv), 256, [ctypes.c_uint64(int(us * 1000)), ctypes.c_uint64(drv.alloc(8))])


# --- modes ------------------------------------------------------------------------------------------------

def cmd_calls(a):
    drv = Driver()
    call = bind_solve(a.lib, a.golden, drv)
    busy = keep_busy(drv, a.keep_busy_us)
    flush = l2_flush(drv, a.flush)
    for _ in range(3):  # warm-up: module load, first touch
        call()
        drv.sync()
    drv.check(drv.cu.cuProfilerStart(), "cuProfilerStart")
    for _ in range(a.calls):
        if busy:
            busy()
        if flush:
            flush()
        call()
        drv.sync()
    drv.check(drv.cu.cuProfilerStop(), "cuProfilerStop")


def cmd_nvbench(a):
    import cuda.bench as bench  # noqa: PLC0415 (carried as wheels: scripts/device/carry_nvbench.sh)

    drv = Driver()
    call = bind_solve(a.lib, a.golden, drv)
    call()
    drv.sync()

    def kopt_solve(state):
        state.set_timeout(a.timeout_s)
        state.exec(lambda launch: call(), batched=False, sync=a.sync)

    b = bench.register(kopt_solve)
    b.set_name(a.name)
    bench.run_all_benchmarks([sys.argv[0], "--devices", "0", "--json", a.json])


def nvbench_figures(doc):
    """{name: {"gpu_median_ms", "gpu_mean_ms", "samples", "gpu_noise"}} from nvbench's --json output (values in
    seconds, as strings)."""
    out = {}
    for bm in doc.get("benchmarks", []):
        for st in bm.get("states", []):
            vals = {}
            for s in st.get("summaries") or []:
                for d in s.get("data") or []:
                    if d.get("name") == "value":
                        try:
                            vals[s["tag"]] = float(d["value"])
                        except (TypeError, ValueError):
                            pass
            median = vals.get("nv/cold/time/gpu/median")
            mean = vals.get("nv/cold/time/gpu/mean")
            out[bm.get("name", "?")] = {
                "gpu_median_ms": median * 1e3 if median is not None else None,
                "gpu_mean_ms": mean * 1e3 if mean is not None else None,
                "samples": int(vals.get("nv/cold/sample_size", 0)),
                "gpu_noise": vals.get("nv/cold/time/gpu/stdev/relative"),
                "skipped": bool(st.get("is_skipped", False)),
            }
    return out


UNIT_MS = {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0, "second": 1e3,
           "s": 1e3}


def ncu_rows(text):
    """The rows of `ncu --csv` output (its details page), one per kernel and metric; lines that are not CSV
    (==PROF== notes, the program's output) are skipped."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    return list(csv.DictReader(io.StringIO("\n".join(lines))))


def ncu_metric_medians(text):
    """{metric name: (median value, count)} over every kernel row of `ncu --csv --print-units base` output (values
    in their base units: ns, cycles, cycles per second)."""
    by = {}
    for r in ncu_rows(text):
        try:
            by.setdefault(r["Metric Name"], []).append(float(r["Metric Value"].replace(",", "")))
        except (KeyError, ValueError):
            pass
    return {k: (statistics.median(v), len(v)) for k, v in by.items()}


def ncu_per_call_ms(text, calls):
    """Per-call GPU time (ms) from `ncu --csv --metrics gpu__time_duration.sum` output (its details page): the
    kernels in launch order, grouped into `calls` equal groups (a solve() of k kernels gives k rows per call),
    each summed. Lines that are not CSV (==PROF== notes, the program's output) are skipped."""
    values = []
    for r in ncu_rows(text):
        if r.get("Metric Name") != "gpu__time_duration.sum" or "kopt_keep_busy" in (r.get("Kernel Name") or ""):
            continue
        unit = (r.get("Metric Unit") or "").strip()
        if unit not in UNIT_MS:
            raise ValueError(f"unknown unit {unit!r} for gpu__time_duration.sum")
        values.append(float(r["Metric Value"].replace(",", "")) * UNIT_MS[unit])
    if not values or len(values) % calls:
        raise ValueError(f"{len(values)} kernel results are not a multiple of {calls} calls")
    k = len(values) // calls
    return [sum(values[i * k:(i + 1) * k]) for i in range(calls)]


def median_or_none(xs):
    return statistics.median(xs) if xs else None


def fmt_ms(x):
    return "-" if x is None else f"{x:.4f}"


def fmt_ratio(a, b):
    return "-" if a is None or b in (None, 0) else f"{a / b:.3f}"


def table(rows):
    """The final table: one line per kernel. A row: name, kopt {gpu_ms, robust_cv, call_ms, method, clock,
    event_ms}, ncu_ms, nvbench_ms (any may be None when a tool failed). kopt's event median sits next to its
    gpu_ms: on the kernel clock (cupti_activity) it is the figure kopt reported before it; on events they agree."""
    head = ["kernel", "kopt gpu_ms", "clock", "kopt event_ms", "robust CV", "kopt call_ms", "method", "ncu median",
            "nvbench cold median", "kopt/ncu", "kopt/nvbench"]
    body = []
    for r in rows:
        k = r.get("kopt") or {}
        cv = k.get("robust_cv")
        body.append([r["name"], fmt_ms(k.get("gpu_ms")), k.get("clock") or "-", fmt_ms(k.get("event_ms")),
                     "-" if cv is None else f"{100 * cv:.2f}%",
                     fmt_ms(k.get("call_ms")), k.get("method") or "-", fmt_ms(r.get("ncu_ms")),
                     fmt_ms(r.get("nvbench_ms")), fmt_ratio(k.get("gpu_ms"), r.get("ncu_ms")),
                     fmt_ratio(k.get("gpu_ms"), r.get("nvbench_ms"))])
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths))  # noqa: E731
    return "\n".join([line(head), line(["-" * w for w in widths])] + [line(b) for b in body])


def kopt_figures(bench_json):
    """gpu_ms, robust_cv, call_ms, method, clock and event_ms from `kopt bench --json`. The clock and the event
    median come from the runner's timing_info (outcome.details.timing_info); a result from before the kernel
    clock has neither: its gpu_ms is the event figure."""
    with open(bench_json, encoding="utf-8") as f:
        j = json.load(f)
    o = j.get("outcome", {})
    t, c = o.get("timing") or {}, o.get("call") or {}
    ti = (o.get("details") or {}).get("timing_info") or {}
    clock = ti.get("gpu_clock") or j.get("gpu_clock")
    event_ms = ti.get("event_median_ms")
    if event_ms is None and clock in (None, "events"):
        event_ms = t.get("median_ms")
    return {"gpu_ms": t.get("median_ms"), "robust_cv": t.get("robust_cv"), "call_ms": c.get("median_ms"),
            "method": o.get("timing_method") or j.get("timing_method"), "status": o.get("status"),
            "clock": clock or ("events" if t else None), "event_ms": event_ms}


def cmd_row(a):
    row = {"name": a.name, "kopt": None, "ncu_ms": None, "nvbench_ms": None, "errors": []}
    if a.bench and os.path.exists(a.bench):
        row["kopt"] = kopt_figures(a.bench)
    if a.ncu and os.path.exists(a.ncu):
        try:
            with open(a.ncu, encoding="utf-8", errors="replace") as f:
                row["ncu_ms"] = median_or_none(ncu_per_call_ms(f.read(), a.calls))
        except ValueError as e:
            row["errors"].append(f"ncu: {e}")
    if a.nvbench and os.path.exists(a.nvbench):
        with open(a.nvbench, encoding="utf-8") as f:
            figs = nvbench_figures(json.load(f))
        fig = figs.get(a.name) or (next(iter(figs.values())) if figs else None)
        if fig:
            row["nvbench_ms"] = fig["gpu_median_ms"]
            row["nvbench_samples"] = fig["samples"]
    rows = []
    if os.path.exists(a.rows):
        with open(a.rows, encoding="utf-8") as f:
            rows = json.load(f)
    rows.append(row)
    with open(a.rows, "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=1)
    print(json.dumps(row))


def cmd_ncu_clocks(a):
    """One line: the median gpu__time_duration (ms) and the clocks Nsight Compute saw (check.sh flushes, softmax-sizes)."""
    with open(a.ncu, encoding="utf-8", errors="replace") as f:
        m = ncu_metric_medians(f.read())
    get = lambda k: m.get(k, (0.0, 0))  # noqa: E731
    t, n = get("gpu__time_duration.sum")
    print(f"NCU {a.name}: {n} calls, gpu__time_duration median {t * 1e-6:.4f} ms, GPC clock median "
          f"{get('gpc__cycles_elapsed.avg.per_second')[0] / 1e6:.0f} MHz, DRAM clock "
          f"{get('dram__cycles_elapsed.avg.per_second')[0] / 1e6:.0f} MHz, GPC cycles {get('gpc__cycles_elapsed.max')[0]:.0f}")


def cmd_table(a):
    with open(a.rows, encoding="utf-8") as f:
        rows = json.load(f)
    print(table(rows))
    for r in rows:
        for e in r.get("errors") or []:
            print(f"  {r['name']}: {e}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("calls")
    c.add_argument("--lib", required=True)
    c.add_argument("--golden", required=True)
    c.add_argument("--calls", type=int, default=15)
    c.add_argument("--keep-busy-us", type=float, default=0.0,
                   help="a spin kernel of this length on every SM before each call (0: none)")
    c.add_argument("--flush", choices=("none", "memset", "memset_then_read", "memset_then_discard"), default="none",
                   help="kopt's own L2 flush before each call (with ncu --cache-control none)")
    n = sub.add_parser("nvbench")
    n.add_argument("--lib", required=True)
    n.add_argument("--golden", required=True)
    n.add_argument("--name", required=True)
    n.add_argument("--json", required=True)
    n.add_argument("--sync", action="store_true", help="solve() synchronises inside: no blocking kernel")
    n.add_argument("--timeout-s", type=float, default=3.0)
    r = sub.add_parser("row")
    r.add_argument("--rows", required=True)
    r.add_argument("--name", required=True)
    r.add_argument("--bench")
    r.add_argument("--ncu")
    r.add_argument("--calls", type=int, default=15)
    r.add_argument("--nvbench")
    k = sub.add_parser("ncu-clocks")
    k.add_argument("--ncu", required=True)
    k.add_argument("--name", required=True)
    t = sub.add_parser("table")
    t.add_argument("--rows", required=True)
    a = ap.parse_args(argv)
    {"calls": cmd_calls, "nvbench": cmd_nvbench, "row": cmd_row, "ncu-clocks": cmd_ncu_clocks,
     "table": cmd_table}[a.cmd](a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
