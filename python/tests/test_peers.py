"""scripts/perf's peer comparison (issue 16): the Kernel Tuner view of a kopt space and the cachefile made from a
measured table (kt_cache.py), Kernel Tuner's simulation over it (kt_simulate.py; those tests need kernel_tuner and
skip without it), the live harness's source and plan (kt_sgemm.py), best-so-far from kopt run directories and
replays (kopt_curves.py), and the table and figure (peers.py)."""

import csv
import ctypes
import ctypes.util
import importlib.util
import json
import os
import subprocess
import sys

import pytest
from conftest import PYTHON_DIR

ROOT = os.path.dirname(PYTHON_DIR)
PERF = os.path.join(ROOT, "scripts", "perf")
SGEMM = os.path.join(ROOT, "examples", "sgemm_tunable", "kernel.cu")
H200 = os.path.join(ROOT, "tests", "data", "perf", "h200-2026-11-30")
sys.path.insert(0, PERF)


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(PERF, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


kt_cache = load("kt_cache")
kopt_curves = load("kopt_curves")
peers = load("peers")
kt_sgemm = load("kt_sgemm")
kt_simulate = load("kt_simulate")

try:
    import kernel_tuner  # noqa: F401
    from kernel_tuner import tune_kernel
    HAVE_KT = True
except ImportError:
    HAVE_KT = False
needs_kt = pytest.mark.skipif(not HAVE_KT, reason="kernel_tuner is not installed (pip install kernel-tuner==1.5.0)")

# A small space: two params, one method guard, a constraint with division, a derived thread count.
TINY = """
// @kopt param BM values=32,64 default=32
// @kopt param TM values=2,4 default=2
// @kopt method smem_padding guard=KOPT_SMEM_PADDING
// @kopt constraint BM / TM >= 16 && !(TM == 4 && KOPT_SMEM_PADDING)
__global__ void tiny(float* x) {}
"""
TINY_DERIVE = {"block_size_x": "BM/TM*4"}


def tiny_table(tmp_path, statuses=None):
    """measurements.csv of TINY's 5 valid configurations (index order as kopt_space enumerates them)."""
    space = kt_cache.KtSpace(TINY, TINY_DERIVE)
    statuses = statuses or {}
    rows = []
    for i, c in enumerate(space.configs):
        st = statuses.get(i, "ok")
        ms = 1.0 + 0.1 * i if st == "ok" else ""
        rows.append({"index": i, "BM": c["BM"], "TM": c["TM"], "KOPT_SMEM_PADDING": c["KOPT_SMEM_PADDING"],
                     "status": st, "median_ms": ms, "ci95_low_ms": "", "ci95_high_ms": "", "tflops": ""})
    path = tmp_path / "measurements.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    kernel = tmp_path / "tiny.cu"
    kernel.write_text(TINY)
    return space, path, kernel


def write_report(path, compile_s=10, golden_s=2, measure_s=20, jobs=4, gpu="NVIDIA H200, 580.159.04"):
    path.write_text(f"== the measured space\n\ndate: 2026-11-30T06:28:11Z\ngpu: {gpu}\n"
                    f"size: --M=256; 7 rounds per configuration, chunks of 32; {jobs} compile jobs\n"
                    f"stages: compile {compile_s} s, golden data {golden_s} s, measurement {measure_s} s\n")
    return path


# --- the space ------------------------------------------------------------------------------------------------

def test_the_space_as_kernel_tuner_sees_it():
    space = kt_cache.KtSpace(TINY, TINY_DERIVE)
    assert list(space.tune_params) == ["BM", "TM", "KOPT_SMEM_PADDING", "block_size_x"]
    assert [(c["BM"], c["TM"], c["KOPT_SMEM_PADDING"]) for c in space.configs] == [
        (32, 2, 0), (32, 2, 1), (64, 2, 0), (64, 2, 1), (64, 4, 0)]
    assert space.tune_params["block_size_x"] == [64, 128]
    assert space.restrictions == ["BM // TM >= 16", "not (TM == 4 and KOPT_SMEM_PADDING)",
                                  "block_size_x - (BM // TM * 4) == 0"]
    assert space.key(space.configs[4]) == "64,4,0,64"


def test_sgemm_space_is_kopts_enumeration():
    kopt_space = load("kopt_space")
    text = open(SGEMM).read()
    space = kt_cache.KtSpace(text, kt_sgemm.DERIVE)
    dims, constraints = kopt_space.parse_annotations(text)
    assert len(space.configs) == len(list(kopt_space.enumerate_space(dims, constraints))) == 496
    assert space.tune_params["block_size_x"] == [64, 128, 256, 512, 1024]
    assert all(c["block_size_x"] == (c["BM"] // c["TM"]) * (c["BN"] // c["TN"]) for c in space.configs)


@pytest.mark.parametrize("c,py", [("!a == b", "(not a) == b"), ("!(a == b)", "not a == b"), ("a - (b - c)", "a - (b - c)"),
                                  ("a / b * c", "a // b * c"), ("a * (b / c)", "a * (b // c)"), ("a < b == 1", "(a < b) == 1"),
                                  ("!(a && b) || c", "not (a and b) or c"), ("-(a + b) % 3", "-(a + b) % 3")])
def test_constraints_in_python_keep_cs_reading(c, py):
    kopt_space = load("kopt_space")
    assert kt_cache.to_python(kopt_space.Expr(c).tree) == py


def test_a_translation_that_would_change_the_space_is_refused():
    # C truncates (2 - 5) / 2 to -1; Python's // floors it to -2: the check over the product must catch it.
    text = "// @kopt param A values=1,2,3 default=1\n// @kopt constraint (A - 5) / 2 >= -1\n"
    with pytest.raises(ValueError, match="disagree"):
        kt_cache.KtSpace(text)


def test_a_bad_derived_parameter_is_refused():
    with pytest.raises(ValueError, match="unknown name"):
        kt_cache.KtSpace(TINY, {"block_size_x": "BM * WARPS"})
    with pytest.raises(ValueError, match="not a new identifier"):
        kt_cache.KtSpace(TINY, {"BM": "TM"})


# --- the cachefile ------------------------------------------------------------------------------------------------

def test_cachefile_is_kernel_tuners_format_with_uniform_costs(tmp_path):
    space, table, kernel = tiny_table(tmp_path, {1: "compile_failed", 3: "wrong_result"})
    report = write_report(tmp_path / "report.txt", compile_s=10, measure_s=20, jobs=4)
    text, summary = kt_cache.make_cache(table, kernel, "tiny", [256, 256], TINY_DERIVE, report=report)
    # The layout store_cache/close_cache produce: header with indent="", one entry per line, closed by "}\n}".
    assert text.startswith('{\n"device_name": "NVIDIA H200",\n"kernel_name": "tiny",\n')
    assert text.endswith("}}\n}")
    lines = text.split("\n")
    entry_lines = [ln for ln in lines if ln.startswith('"32,') or ln.startswith('"64,')]
    assert len(entry_lines) == 5 and all(ln.endswith(",") for ln in entry_lines[:-1])
    c = json.loads(text)
    assert c["tune_params_keys"] == ["BM", "TM", "KOPT_SMEM_PADDING", "block_size_x"]
    assert c["problem_size"] == [256, 256] and c["objective"] == ["time"]
    e0 = c["cache"]["32,2,0,64"]
    assert e0["time"] == 1.0 and e0["times"] == [1.0]
    assert e0["compile_time"] == pytest.approx(1000 * 10 * 4 / 5)  # compile 10 s on 4 jobs, 5 configurations
    assert e0["benchmark_time"] == pytest.approx(1000 * 20 / 5) and e0["verification_time"] == 0
    assert e0["strategy_time"] == 0 and e0["framework_time"] == 0
    assert e0["timestamp"] == "2026-11-30 06:28:11+00:00"
    assert c["cache"]["32,2,1,64"]["__error__"] == "CompilationFailedConfig"
    assert c["cache"]["32,2,1,64"]["benchmark_time"] == 0 and "time" not in c["cache"]["32,2,1,64"]
    assert c["cache"]["64,2,1,128"]["__error__"] == "RuntimeFailedConfig"
    assert summary["configurations"] == 5 and summary["ok"] == 3


def test_cachefile_costs_per_configuration_from_a_sweep(tmp_path):
    space, table, kernel = tiny_table(tmp_path)
    sweep = tmp_path / "sweep"
    (sweep / "compiled").mkdir(parents=True)
    (sweep / "runs").mkdir()
    cache_dir = tmp_path / "buildcache" / "abc"
    cache_dir.mkdir(parents=True)
    (cache_dir / "entry.json").write_text(json.dumps({"nvcc_ms": 1234.5}))
    for i in range(5):
        hit = i == 2  # a build cache hit: the entry's nvcc_ms, not the lookup's few ms
        lib = str(cache_dir / "kernel.so") if hit else f"/libs/{i}.so"
        (sweep / "compiled" / f"{i}.json").write_text(json.dumps(
            {"library": lib, "compile": {"status": "ok", "compile_ms": 3.0 if hit else 1000.0 + i, "cache_hit": hit}}))
    with open(sweep / "costs.csv", "w") as f:
        f.write("index,compile_ms,compile_cache_hit,measure_ms\n" + "".join(f"{i},,,{400 + i}\n" for i in range(5)))
    (sweep / "runs" / "chunk_001.json").write_text(json.dumps(
        {"libs": [{"lib": "/libs/0.so", "status": "ok", "samples_ms": [1.0, 1.1, 0.9]}]}))
    write_report(sweep / "report.txt")
    text, summary = kt_cache.make_cache(table, kernel, "tiny", [256], TINY_DERIVE, sweep=str(sweep))
    c = json.loads(text)["cache"]
    assert c["32,2,0,64"]["compile_time"] == 1000.0 and c["32,2,0,64"]["benchmark_time"] == 400
    assert c["32,2,0,64"]["times"] == [1.0, 1.1, 0.9]
    assert c["64,2,0,128"]["compile_time"] == 1234.5
    assert c["64,4,0,64"]["benchmark_time"] == 404 and c["64,4,0,64"]["times"] == [1.4]
    assert "per configuration" in summary["costs"]


def test_cachefile_needs_every_configuration_and_no_other(tmp_path):
    space, table, kernel = tiny_table(tmp_path)
    rows = list(csv.DictReader(open(table)))
    with open(table, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows[:-1])
    with pytest.raises(ValueError, match="lacks the configuration 64,4,0"):
        kt_cache.make_cache(table, kernel, "tiny", [1], TINY_DERIVE)
    rows[-1]["TM"] = "8"
    rows.append(dict(rows[0], index=5, TM="4", KOPT_SMEM_PADDING="0", BM="64"))
    with open(table, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with pytest.raises(ValueError, match="outside the kernel's space"):
        kt_cache.make_cache(table, kernel, "tiny", [1], TINY_DERIVE)


def test_cache_cli_names_a_missing_file(tmp_path, capsys):
    with pytest.raises(SystemExit, match="no such file"):
        kt_cache.main([str(tmp_path / "nope.csv"), "--kernel", SGEMM, "--kernel-name", "k", "--problem-size", "1",
                       "--out", str(tmp_path / "c.json")])


# --- Kernel Tuner's simulation over the cachefile ---------------------------------------------------------------

@needs_kt
def test_kernel_tuner_reads_the_cache_and_simulates_over_it(tmp_path):
    space, table, kernel = tiny_table(tmp_path, {1: "compile_failed"})
    text, _ = kt_cache.make_cache(table, kernel, "tiny", [256, 256], TINY_DERIVE,
                                  report=write_report(tmp_path / "report.txt", compile_s=10, measure_s=20, jobs=4))
    cache = tmp_path / "cache.json"
    cache.write_text(text)
    read = kernel_tuner.util.read_cache(str(cache), open_cache=False)
    assert isinstance(read["cache"]["32,2,1,64"]["__error__"], kernel_tuner.util.CompilationFailedConfig)
    header = read
    checked = kt_simulate.check_space(header, str(kernel), TINY_DERIVE)  # Kernel Tuner's space == kopt's
    assert len(checked.configs) == 5
    run = kt_simulate.simulate_one(tune_kernel, header, checked.restrictions, str(cache), "random_sample", 1, 5, 0, 1000)
    assert run["end"] == "evaluation budget" and len(run["points"]) == 5
    assert sorted(p[4] for p in run["points"]) == sorted(space.key(c) for c in space.configs)
    failed = [p for p in run["points"] if p[4] == "32,2,1,64"]
    assert failed[0][3] is None
    # Simulated time: compile 8 s + measurement 4 s per configuration (the failed compile: 8 s), plus overhead.
    wall, overhead = run["points"][-1][1], run["points"][-1][2]
    assert wall - overhead == pytest.approx(5 * 8 + 4 * 4, abs=1e-3)
    assert run["simulated_time_s"] == pytest.approx(5 * 8 + 4 * 4, abs=1e-3)
    # Random sampling is reproducible by seed (what the live calibration relies on).
    a = kt_simulate.simulate_one(tune_kernel, header, checked.restrictions, str(cache), "random_sample", 3, 4, 0, 1000)
    b = kt_simulate.simulate_one(tune_kernel, header, checked.restrictions, str(cache), "random_sample", 3, 4, 0, 1000)
    assert [p[4] for p in a["points"]] == [p[4] for p in b["points"]] and len(a["points"]) == 4


@needs_kt
def test_the_sgemm_cache_of_the_h200_table_simulates_every_required_strategy(tmp_path):
    out = tmp_path / "cache.json"
    assert kt_cache.main([os.path.join(H200, "sgemm_tunable_4096_measurements.csv"), "--kernel", SGEMM,
                          "--kernel-name", "sgemm_tunable", "--problem-size", "4096,4096", "--derive",
                          "block_size_x=(BM/TM)*(BN/TN)", "--report", os.path.join(H200, "sgemm_tunable_4096_report.txt"),
                          "--out", str(out)]) == 0
    header = kernel_tuner.util.read_cache(str(out), open_cache=False)
    space = kt_simulate.check_space(header, SGEMM, kt_sgemm.DERIVE)
    for strategy in ("random_sample", "genetic_algorithm", "bayes_opt"):
        run = kt_simulate.simulate_one(tune_kernel, header, space.restrictions, str(out), strategy, 1, 30, 0, 1000)
        assert 20 <= len(run["points"]) <= 30, strategy
        assert all(p[3] >= 3.0184 for p in run["points"]), strategy  # the table's best is 3.0185 ms


def test_trajectory_counts_distinct_configurations_and_all_costs():
    r = lambda key, t, c, s=0.0: {"A": key, "time": t, "compile_time": c, "verification_time": 0,  # noqa: E731
                                  "benchmark_time": 100, "strategy_time": s, "framework_time": 1}
    served_again = dict(r(1, 5.0, 0), benchmark_time=0)  # Kernel Tuner zeroes the costs of a configuration served again
    results = [r(1, 5.0, 1000, 10), r(2, 4.0, 2000), served_again, None, dict(r(3, 0, 500), __error__="x")]
    pts = kt_simulate.trajectory(results)
    assert [p[0] for p in pts] == [1, 2, 3] and [p[4] for p in pts] == ["1", "2", "3"]
    assert pts[0][1] == pytest.approx(1.111) and pts[0][2] == pytest.approx(0.011)
    assert pts[1][1] == pytest.approx(1.111 + 2.101)
    assert pts[2][1] == pytest.approx(1.111 + 2.101 + 0.001 + 0.601) and pts[2][3] is None


def test_seeds_parse():
    assert kt_simulate.parse_seeds("1-3,9") == [1, 2, 3, 9]
    with pytest.raises(SystemExit):
        kt_simulate.parse_seeds("a-b")


# --- the live harness, without a GPU ------------------------------------------------------------------------------

def test_harness_source_is_the_kernel_without_its_host_function():
    text = open(SGEMM).read()
    src = kt_sgemm.device_source(text)
    assert "__global__ void __launch_bounds__(kThreads) sgemm_tunable(" in src
    assert 'extern "C"' not in src and "<<<" not in src
    broken = text.replace("dim3 grid(N / BN, M / BM);", "dim3 grid(M / BM, N / BN);")
    with pytest.raises(ValueError, match="no longer launches"):
        kt_sgemm.device_source(broken)


def test_harness_dry_run_prints_the_plan(capsys):
    r = subprocess.run([sys.executable, os.path.join(PERF, "kt_sgemm.py"), "--dry-run", "--max-fevals", "5"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "496 configurations" in r.stdout and "grid_div_x BN, grid_div_y BM" in r.stdout and "dry run" in r.stdout


def nvrtc():
    for path in (ctypes.util.find_library("nvrtc"), "/usr/local/cuda/lib64/libnvrtc.so"):
        if path:
            try:
                return ctypes.CDLL(path)
            except OSError:
                pass
    return None


@pytest.mark.skipif(nvrtc() is None, reason="no libnvrtc here")
@pytest.mark.parametrize("cp_async", [0, 1])
def test_harness_source_compiles_with_nvrtc_as_kernel_tuner_does(cp_async):
    """Kernel Tuner's nvcuda backend: #define per tune parameter, #line 1, --std=c++11, compute_90, CUDA's
    include directory; the name expression `sgemm_tunable`."""
    lib = nvrtc()
    src = kt_sgemm.device_source(open(SGEMM).read())
    params = dict(BM=128, BN=128, BK=8, TM=8, TN=8, STAGES=3, KOPT_VECTORIZED_ACCESS=1,
                  KOPT_CP_ASYNC_PIPELINE=cp_async, KOPT_SMEM_PADDING=1, block_size_x=256)
    prefix = "".join(f"#define {k} {v}\n" for k, v in params.items()) + "#define kernel_tuner 1\n#line 1\n"
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), (prefix + src).encode(), b"CUDAProgram", 0, None, None) == 0
    assert lib.nvrtcAddNameExpression(prog, b"sgemm_tunable") == 0
    opts = [b"--std=c++11", b"--gpu-architecture=compute_90", f"-I{kt_sgemm.cuda_include()}".encode()]
    rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    assert rc == 0, log.value.decode()
    name = ctypes.c_char_p()
    assert lib.nvrtcGetLoweredName(prog, b"sgemm_tunable", ctypes.byref(name)) == 0
    assert name.value == b"_Z13sgemm_tunablePKfS0_Pfiii"


@needs_kt
def test_kernel_tuner_launches_what_solve_launches_and_accepts_the_arguments():
    """Kernel Tuner's own helpers: the grid and block of each configuration are solve()'s, the kernel's signature
    takes the harness's arguments, and the source Kernel Tuner would compile compiles (NVRTC, when present)."""
    import numpy as np
    from kernel_tuner import util
    text = open(SGEMM).read()
    src = kt_sgemm.device_source(text)
    space = kt_cache.KtSpace(text, kt_sgemm.DERIVE)
    names = ["block_size_x", "block_size_y", "block_size_z"]  # Kernel Tuner's defaults
    for c in space.configs[::61]:
        threads, grid = util.setup_block_and_grid((4096, 4096), (["BN"], ["BM"], None), c, names)
        assert threads == ((c["BM"] // c["TM"]) * (c["BN"] // c["TN"]), 1, 1)
        assert grid == (4096 // c["BN"], 4096 // c["BM"], 1)
    args = [np.zeros(4, np.float32), np.zeros(4, np.float32), np.zeros(4, np.float32), np.int32(1), np.int32(1), np.int32(1)]
    util.check_argument_list("sgemm_tunable", src, args)  # raises on a mismatch
    name, code = util.prepare_kernel_string("sgemm_tunable", src, space.configs[-1], (32, 32, 1), (256, 1, 1), names,
                                            "CUDA", None)
    assert name == "sgemm_tunable" and code.startswith("#define grid_size_x 32\n")
    lib = nvrtc()
    if lib is None:
        return
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), code.encode(), b"CUDAProgram", 0, None, None) == 0
    opts = [b"--std=c++11", b"--gpu-architecture=compute_90", f"-I{kt_sgemm.cuda_include()}".encode()]
    assert lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts)) == 0


# --- kopt: live run directories and replays -----------------------------------------------------------------------

def meta(t):
    return {"meta": {"kind": "x", "time": t}}


def fake_run(tmp_path, with_search_s=False, stamps=True):
    """A run directory: baseline, iteration 1 with three candidates (one failed, one outside the table: a
    compiler-flag method), iteration 2 with one."""
    d = tmp_path / "kopt_runs" / "run_20261201_000000"
    d.mkdir(parents=True)

    def cand(cid, bm, tm, pad, flags=()):
        return {"id": cid, "params": {"BM": bm, "TM": tm}, "guards": {"smem_padding": bool(pad)}, "flags": list(flags)}
    history = [
        {"candidate": cand("baseline", 32, 2, 0), "status": "ok", "median_ms": 1.02, "iteration": 0},
        {"candidate": cand("i1c1", 64, 2, 0), "status": "ok", "median_ms": 1.21, "iteration": 1},
        {"candidate": cand("i1c2", 32, 2, 1), "status": "compile_failed", "median_ms": None, "iteration": 1},
        {"candidate": cand("i1c3", 64, 4, 0, ["-Xptxas=-dlcm=cg"]), "status": "ok", "median_ms": 0.95, "iteration": 1},
        {"candidate": cand("i2c1", 64, 2, 1), "status": "ok", "median_ms": 1.31, "iteration": 2},
    ]
    if with_search_s:
        for h, t in zip(history, [0, 3.5, 4.0, 6.25, 20.0]):
            h["search_s"] = t
    (d / "state.json").write_text(json.dumps(dict(meta("2026-12-01T00:03:00Z"), history=history,
                                                  phase_seconds={"gates": 30, "ceilings": 5, "compile": 10, "measure": 40},
                                                  stop_reason="patience")))
    (d / "summary.json").write_text(json.dumps({"stop": {"reason": "patience"}, "phase_seconds": {"gates": 30}}))
    (d / "options.json").write_text(json.dumps({"seed": 7}))
    if stamps:
        (d / "iter_00_baseline").mkdir()
        (d / "iter_00_baseline" / "roofline.json").write_text(json.dumps(meta("2026-12-01T00:00:40Z")))
        for it, cid, t in ((1, "i1c1", "00:00:44"), (1, "i1c2", "00:00:44"), (1, "i1c3", "00:00:47"), (2, "i2c1", "00:01:00")):
            c = d / f"iter_{it:02d}" / "candidates" / cid
            c.mkdir(parents=True)
            if cid != "i1c2":
                (c / "run.json").write_text(json.dumps(meta(f"2026-12-01T{t}Z")))
            else:
                (c / "build.json").write_text(json.dumps(meta(f"2026-12-01T{t}Z")))
    return d


@pytest.mark.parametrize("mode", ["search_s", "stamps", "estimated"])
def test_best_so_far_from_a_kopt_run_directory(tmp_path, mode):
    space, table, kernel = tiny_table(tmp_path)  # 32,2,0 -> 1.0; 32,2,1 -> 1.1; 64,2,0 -> 1.2; 64,2,1 -> 1.3; 64,4,0 -> 1.4
    fake_run(tmp_path, with_search_s=mode == "search_s", stamps=mode == "stamps")
    series = kopt_curves.live_series([str(tmp_path)], str(table))
    r = series["runs"][0]
    assert r["seed"] == 7 and r["end"] == "patience"
    pts = r["points"]
    assert [p[0] for p in pts] == [1, 2, 3, 4, 5]
    # The table's value where the candidate is in the measured space, kopt's own median where it is not.
    assert [p[3] for p in pts] == [1.0, 1.2, None, 0.95, 1.3]
    assert pts[3][4] == "i1c3" and pts[1][4] == "64,2,0"
    times = [p[1] for p in pts]
    if mode == "search_s":
        assert times == [0, 3.5, 4.0, 6.25, 20.0] and r["time_source"] == "history[].search_s"
    elif mode == "stamps":
        assert times == [0, 4, 4, 7, 20] and r["time_source"].startswith("file time stamps")
    else:
        assert times == [0, 12.5, 25, 37.5, 50] and r["time_source"].startswith("estimated")
    assert r["search_wall_s"] == 50 and r["total_wall_s"] == 85
    out = tmp_path / "live.json"
    assert peers.main(["kopt-runs", str(tmp_path), "--table", str(table), "--out", str(out)]) == 0
    saved = json.loads(out.read_text())
    assert saved["best_ms"] == 1.0 and saved["series"][0]["runs"][0]["points"] == pts


def test_a_folder_without_runs_is_an_input_error(tmp_path):
    space, table, kernel = tiny_table(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit, match="no kopt run directory"):
        peers.main(["kopt-runs", str(tmp_path / "empty"), "--table", str(table), "--out", str(tmp_path / "o.json")])


def test_replay_curves_from_prefix_runs(tmp_path):
    """kopt __search-replay faked: seed 1 reaches the target (<= 1.03) at evaluation 7, seed 2 never does and
    its space runs out after 3 iterations."""
    space, table, kernel = tiny_table(tmp_path)
    per_seed = {1: [(5, 1.2), (9, 1.01), (13, 1.0)], 2: [(5, 1.3), (9, 1.2), (10, 1.1)]}
    calls = []

    def runner(argv, **_):
        k = int(argv[argv.index("--iterations") + 1])
        calls.append(k)
        runs = []
        for seed, its in per_seed.items():
            e, b = its[min(k, len(its)) - 1]
            hit = 7 if seed == 1 and k >= 2 else None
            end = "reached" if hit else ("exhausted" if seed == 2 and k >= 3 else "iterations")
            runs.append({"seed": seed, "evaluations": e, "best_found_ms": b, "hit_evaluation": hit, "end": end})
        with open(argv[argv.index("--json") + 1], "w") as f:
            json.dump({"summary": {"baseline_ms": 1.5}, "runs": runs}, f)
        return subprocess.CompletedProcess(argv, 0, "", "")
    res = kopt_curves.replay("kopt", str(kernel), str(table), [1, 2], max_iterations=10, runner=runner,
                             workdir=str(tmp_path))
    assert calls == [1, 2, 3]
    assert res[1]["per_iteration"] == [(5, 1.2), (9, 1.01)] and res[1]["hit_evaluation"] == 7 and res[1]["end"] == "reached"
    assert res[2]["per_iteration"] == [(5, 1.3), (9, 1.2), (10, 1.1)] and res[2]["end"] == "exhausted"
    s = kopt_curves.replay_series(res, 2.0, 1.03)
    assert s["runs"][0]["points"] == [[1, 2.0, 0.0, 1.5, "baseline"], [5, 10.0, 0.0, 1.2, ""], [7, 14.0, 0.0, 1.01, ""],
                                      [9, 18.0, 0.0, 1.01, ""]]
    assert peers.run_stats(s["runs"][0]["points"], 1.03)[:2] == (7, 14.0)
    assert peers.run_stats(s["runs"][1]["points"], 1.03)[0] is None


# --- the report -----------------------------------------------------------------------------------------------------

def test_medians_count_a_seed_that_never_got_there_as_infinite():
    assert peers.nearest_rank_median([3, None, 1]) == 3
    assert peers.nearest_rank_median([3, None, None]) is None
    assert peers.nearest_rank_median([4, 1, 2, 3]) == 2


def test_exhaustive_series_spends_compile_and_golden_first(tmp_path):
    space, table, kernel = tiny_table(tmp_path)
    s, total = peers.exhaustive_series(str(table), sweep_report=str(write_report(tmp_path / "r.txt", 10, 2, 20)))
    pts = s["runs"][0]["points"]
    assert total == 32 and [p[1] for p in pts] == [16.0, 20.0, 24.0, 28.0, 32.0]
    assert peers.run_stats(pts, 1.03) == (1, 16.0, 1.0, 5, 32.0)


def trajectories_file(path, tool, strategy, mode, runs):
    path.write_text(json.dumps({"series": [{"tool": tool, "strategy": strategy, "mode": mode, "runs": runs}]}))
    return str(path)


def test_report_table_and_figure(tmp_path, capsys):
    space, table, kernel = tiny_table(tmp_path)  # best 1.0 (32,2,0); within 3%: only it
    report = write_report(tmp_path / "r.txt", 10, 2, 20)
    pt = lambda e, s, ms: [e, s, 0.0, ms, ""]  # noqa: E731
    kt = trajectories_file(tmp_path / "kt.json", "Kernel Tuner", "random_sample", "simulated", [
        {"seed": 1, "points": [pt(1, 2.0, 1.3), pt(2, 4.0, 1.0)]},
        {"seed": 2, "points": [pt(1, 2.0, 1.2), pt(2, 4.0, 1.1), pt(3, 6.0, 1.4)]},
        {"seed": 3, "points": [pt(1, 2.0, 1.0)]}])
    ko = trajectories_file(tmp_path / "ko.json", "kopt", "default", "live", [
        {"seed": 1, "end": "patience", "total_wall_s": 60.0, "time_source": "history[].search_s",
         "points": [pt(1, 0.0, 1.5), pt(2, 3.0, 1.02)]}])
    md, js, fig = tmp_path / "t.md", tmp_path / "t.json", tmp_path / "f.png"
    assert peers.main(["report", kt, ko, "--table", str(table), "--sweep-report", str(report), "--md", str(md),
                       "--json", str(js), "--figure", str(fig)]) == 0
    text = md.read_text()
    assert "| exhaustive sweep | every configuration | measured | 1 run | 5 (all;" in text
    assert "| Kernel Tuner | random_sample | simulated (table costs) | 2/3 | 2 [1–2] | 4 [2–4] | 12% | 1.0000 ms (+0.0%; 2/3) |" in text
    assert "| kopt | default | measured | 1/1 | 2 [2–2] | 3 [3–3] | 9% | 1.0200 ms (+2.0%; 0/1) |" in text
    assert ("kopt default (live): whole run including the gates, median 60 s [60–60] over 1 runs; seconds to the "
            "target counted from the end of the gates (history[].search_s); stops: patience") in text
    stats = json.loads(js.read_text())["stats"]
    assert stats[1]["reached"] == 2 and stats[1]["evals_median"] == 2 and stats[1]["seconds_median"] == 4.0
    try:
        import matplotlib  # noqa: F401
        assert fig.exists() and fig.stat().st_size > 10_000
    except ImportError:
        assert not fig.exists() and "matplotlib is not installed" in capsys.readouterr().err


def test_live_kernel_tuner_runs_are_merged_per_strategy_and_valued_on_the_table(tmp_path, capsys):
    # Kernel Tuner's own timings (no L2 flush) are not the sweep's: kt-live values every configuration on the table,
    # as kopt-runs does for kopt, and keeps Kernel Tuner's own figures beside them.
    space, table, kernel = tiny_table(tmp_path)  # config i measured 1.0 + 0.1 i; the best is config 0
    key = lambda i: ",".join(str(space.configs[i][d]) for d in ("BM", "TM", "KOPT_SMEM_PADDING")) + ",64"  # noqa: E731
    a = trajectories_file(tmp_path / "a.json", "Kernel Tuner", "random_sample", "live", [
        {"seed": 1, "end": "evaluation budget", "points": [[1, 0.5, 0.0, 0.7, key(3)], [2, 1.0, 0.0, 0.9, key(0)]]}])
    b = tmp_path / "b.json"
    b.write_text(json.dumps({"costs_ms": [{"compile_time": 1.0}], "series": [
        {"tool": "Kernel Tuner", "strategy": "random_sample", "mode": "live",
         "runs": [{"seed": 2, "end": "evaluation budget", "points": [[1, 0.4, 0.0, None, key(1)], [2, 0.9, 0.0, 0.8, key(2)]]}]},
        {"tool": "Kernel Tuner", "strategy": "bayes_opt", "mode": "live",
         "runs": [{"seed": 1, "end": "evaluation budget", "points": [[1, 0.6, 0.0, 0.95, key(4)]]}]}]}))
    out = tmp_path / "merged.json"
    assert peers.main(["kt-live", a, str(b), "--table", str(table), "--note", "test", "--out", str(out)]) == 0
    d = json.loads(out.read_text())
    by = {s["strategy"]: s for s in d["series"]}
    assert sorted(by) == ["bayes_opt", "random_sample"] and d["costs_ms"] == [{"compile_time": 1.0}]
    rs = by["random_sample"]["runs"]
    assert [r["seed"] for r in rs] == [1, 2]
    assert [p[3] for p in rs[0]["points"]] == pytest.approx([1.3, 1.0]) and rs[0]["own_ms"] == [0.7, 0.9]
    assert rs[1]["points"][0][3] is None  # a failed evaluation stays failed
    assert by["bayes_opt"]["runs"][0]["points"][0][3] == pytest.approx(1.4)
    assert d["meta"]["not_in_table"] == 0
    assert "random_sample: 2 runs; within 3% on the table: seed 1: 2 / 1.0 s; seed 2: not reached" in capsys.readouterr().out
    # The same strategy and seed twice is refused, not counted twice.
    with pytest.raises(SystemExit, match="random_sample seed 1 appears twice"):
        peers.main(["kt-live", a, a, "--table", str(table), "--out", str(out)])


def test_simulated_series_retimed_at_a_live_cost(tmp_path):
    live = tmp_path / "kt_live.json"
    live.write_text(json.dumps({"costs_ms": [
        {"compile_time": 400, "verification_time": 100, "benchmark_time": 50, "framework_time": 50, "strategy_time": 9},
        {"compile_time": 900, "verification_time": 100, "benchmark_time": 50, "framework_time": 50},
        {"compile_time": 300, "verification_time": 100, "benchmark_time": 50, "framework_time": 50}]}))
    assert peers.live_eval_cost_s(str(live)) == pytest.approx(0.6)
    s = {"tool": "Kernel Tuner", "strategy": "x", "mode": "simulated",
         "runs": [{"seed": 1, "points": [[1, 1.9, 0.1, 2.0, "a"], [2, 3.9, 0.3, 1.0, "b"]]}]}
    r = peers.rescaled(s, 0.6)
    assert r["mode"] == "simulated at live cost" and s["mode"] == "simulated"
    assert r["runs"][0]["points"] == [[1, 0.7, 0.1, 2.0, "a"], [2, 1.5, 0.3, 1.0, "b"]]


def test_band_is_median_and_quartiles_of_best_so_far():
    s = {"runs": [{"points": [[1, 1.0, 0, 2.0, ""], [3, 3.0, 0, 1.0, ""]]},
                  {"points": [[1, 1.0, 0, 1.5, ""]]},
                  {"points": [[2, 2.0, 0, 1.2, ""]]}]}
    med, lo, hi = peers.band(s, [1, 2, 3], 0, 1.0)
    assert med[0] != med[0]  # NaN: the third run has measured nothing yet
    assert med[1:] == [1.5, 1.2] and lo[2] == pytest.approx(1.1) and hi[1] == pytest.approx(1.75)


def test_help_and_unknown_subcommand(capsys):
    assert peers.main(["--help"]) == 0 and "peers.py report" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="unknown subcommand"):
        peers.main(["plot"])
