#!/usr/bin/env python3
"""Kernel Tuner, live on the GPU, on examples/sgemm_tunable: the harness a Kernel Tuner user would write for
this kernel, over the same space kopt searches (issue 16).

  kt_sgemm.py [--size 4096] [--strategy random_sample] [--seed 1] [--max-fevals 20] [--lang auto|cupy|nvcuda]
              [--iterations 7] [--cache kt_live_cache.json] [--out kt_live.json] [--dry-run]

What it tunes: the __global__ function `sgemm_tunable` of examples/sgemm_tunable/kernel.cu, compiled by Kernel
Tuner (NVRTC, through CuPy or cuda-python) from the kernel's own text up to its host function `solve()`, which
NVRTC cannot compile and Kernel Tuner does not need: Kernel Tuner launches the kernel itself, as solve() does.
  * tune_params: the kernel's `@kopt param` and `@kopt method` dimensions, in declared order, and
    block_size_x = (BM/TM)*(BN/TN), the thread count solve() launches (Kernel Tuner takes a block's size from a
    tune parameter); restrictions: the `@kopt constraint`s in Python, and block_size_x's definition
    (scripts/perf/kt_cache.py, KtSpace). Kernel Tuner prepends `#define NAME VALUE` for each, which the kernel's
    `#ifndef NAME` defaults give way to.
  * launch: problem_size (N, M), grid_div_x = BN, grid_div_y = BM: the grid (N/BN, M/BM) of solve().
  * arguments A (M x K), B (K x N), C (M x N, NaN before each check), M, N, K (int32), A and B from the
    example's ref.py `setup(seed=0)`, the expected C from its `reference()`; a configuration is correct when C
    is finite and within ref.py's atol/rtol of it (Kernel Tuner stops the run on a wrong one).
  * timing: Kernel Tuner's own (`iterations` launches between CUDA events, their mean as `time`, ms).
The seed: random.seed and numpy.random.seed before tune_kernel, under PYTHONHASHSEED=0, exactly as
kt_simulate.py does, so that the simulation of the same strategy and seed over this session's table proposes
the same configurations (peers.py calibrate checks it).

Output: Kernel Tuner's own cachefile (--cache, deleted first: an existing one would serve old results) and
--out, a trajectories file (peers.py) with the run's points, each evaluation's costs (costs_ms) and Kernel
Tuner's env. --dry-run builds the space, the source and the arguments' shapes and prints the plan: no GPU.
"""
import argparse
import importlib.util
import json
import os
import random
import re
import shutil
import sys
import time
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kt_cache  # noqa: E402
import kt_simulate  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "sgemm_tunable")
KERNEL_NAME = "sgemm_tunable"
DERIVE = {"block_size_x": "(BM/TM)*(BN/TN)"}
WHEELS_HINT = ("neither CuPy nor cuda-python (cuda.bindings) is importable: carry wheels, e.g. "
               "cuda-bindings and cuda-pathfinder for --lang nvcuda (scripts/device/peers_check.sh lists them)")


def device_source(kernel_text):
    """The kernel's text up to its host function solve(), after checking that solve() launches what this harness
    tells Kernel Tuner to launch: grid (N / BN, M / BM) and kThreads = (BM/TM)*(BN/TN) threads."""
    cut = kernel_text.find('extern "C" void solve(')
    if cut < 0:
        raise ValueError('no `extern "C" void solve(` in the kernel')
    host = kernel_text[cut:]
    if not re.search(r"dim3\s+grid\(\s*N\s*/\s*BN\s*,\s*M\s*/\s*BM\s*\)", host) or \
            not re.search(r"sgemm_tunable<<<\s*grid\s*,\s*kThreads\s*>>>", host):
        raise ValueError("solve() no longer launches sgemm_tunable<<<dim3(N / BN, M / BM), kThreads>>>: update the "
                         "harness's grid_div and block_size_x")
    if not re.search(r"kThreads\s*=\s*kThreadsM\s*\*\s*kThreadsN", kernel_text) or \
            not re.search(r"kThreadsM\s*=\s*BM\s*/\s*TM", kernel_text) or not re.search(r"kThreadsN\s*=\s*BN\s*/\s*TN", kernel_text):
        raise ValueError("the kernel's thread count is no longer (BM/TM)*(BN/TN): update DERIVE")
    return kernel_text[:cut]


def load_ref():
    spec = importlib.util.spec_from_file_location("sgemm_ref", os.path.join(EXAMPLE, "ref.py"))
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    return ref


def as_numpy(x):
    return x.detach().cpu().numpy() if hasattr(x, "detach") else x


def make_arguments(size, ref):
    """(arguments, answer, verify): ref.py's data and its tolerances."""
    import numpy as np
    m = n = k = size
    bufs = ref.setup(seed=0, M=m, N=n, K=k)
    expected = bufs["C"]
    ref.reference(A=bufs["A"], B=bufs["B"], C=expected, M=m, N=n, K=k)
    a, b, c_ref = (np.ascontiguousarray(as_numpy(bufs[x]), dtype=np.float32) for x in ("A", "B", "C"))
    c = np.full((m, n), np.nan, dtype=np.float32)  # anything the kernel leaves unwritten fails the check
    arguments = [a, b, c, np.int32(m), np.int32(n), np.int32(k)]
    answer = [None, None, c_ref, None, None, None]
    ref_atol, ref_rtol = float(ref.atol), float(ref.rtol)

    def verify(answer, result_host, atol=None):  # Kernel Tuner passes its own atol; ref.py's pair decides
        got = result_host[2]
        return bool(np.isfinite(got).all() and np.allclose(got, answer[2], atol=ref_atol, rtol=ref_rtol))

    return arguments, answer, verify


def pick_lang(lang):
    if lang != "auto":
        return lang
    try:
        import cupy  # noqa: F401
        return "cupy"
    except ImportError:
        pass
    try:
        from cuda.bindings import driver  # noqa: F401
        return "nvcuda"
    except ImportError:
        pass
    raise SystemExit(f"kt_sgemm: {WHEELS_HINT}")


def cuda_include():
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")):
        if home and os.path.isdir(os.path.join(home, "include")):
            return os.path.join(home, "include")
    nvcc = shutil.which("nvcc")
    if nvcc:
        inc = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))), "include")
        if os.path.isdir(inc):
            return inc
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="head -30 scripts/perf/kt_sgemm.py says what is tuned and how.")
    ap.add_argument("--size", type=int, default=4096, help="M = N = K (a multiple of 128; default 4096)")
    ap.add_argument("--strategy", default="random_sample")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-fevals", type=int, default=20)
    ap.add_argument("--lang", default="auto", choices=["auto", "cupy", "nvcuda"])
    ap.add_argument("--iterations", type=int, default=7, help="Kernel Tuner's timed launches per configuration")
    ap.add_argument("--cache", default="kt_live_cache.json", help="Kernel Tuner's cachefile (deleted first)")
    ap.add_argument("--out", default="kt_live.json")
    ap.add_argument("--dry-run", action="store_true", help="no GPU: print the plan")
    a = ap.parse_args(argv)
    if a.size <= 0 or a.size % 128:
        raise SystemExit("kt_sgemm: --size must be a positive multiple of 128")
    kt_simulate.reexec_with_fixed_hash_seed()
    text = open(os.path.join(EXAMPLE, "kernel.cu")).read()
    try:
        source = device_source(text)
    except ValueError as e:
        raise SystemExit(f"kt_sgemm: {e}")
    space = kt_cache.KtSpace(text, DERIVE)
    problem_size = (a.size, a.size)  # (N, M)
    plan = (f"kt_sgemm: {KERNEL_NAME}, {len(space.configs)} configurations; tune_params {list(space.tune_params)}; "
            f"restrictions {space.restrictions}; problem_size {problem_size}, grid_div_x BN, grid_div_y BM; "
            f"{a.strategy}, seed {a.seed}, max_fevals {a.max_fevals}, {a.iterations} iterations")
    print(plan, flush=True)
    if a.dry_run:
        print(f"kt_sgemm: source: {len(source.splitlines())} lines (the kernel up to solve()); CUDA include "
              f"{cuda_include()}; dry run: nothing compiled or launched")
        return 0
    try:
        import numpy as np
        import kernel_tuner
        from kernel_tuner import tune_kernel
    except ImportError as e:
        raise SystemExit(f"kt_sgemm: Kernel Tuner is not importable ({e})")
    lang = pick_lang(a.lang)
    inc = cuda_include()
    options = [f"-I{inc}"] if inc and lang == "cupy" else []  # the nvcuda backend adds CUDA's include itself
    t0 = time.time()
    ref = load_ref()
    arguments, answer, verify = make_arguments(a.size, ref)
    t_data = time.time() - t0
    if os.path.exists(a.cache):
        os.remove(a.cache)
    random.seed(a.seed)
    np.random.seed(a.seed)
    t1 = time.time()
    results, env = tune_kernel(KERNEL_NAME, source, problem_size, arguments, space.tune_params,
                               grid_div_x=["BN"], grid_div_y=["BM"], restrictions=space.restrictions, answer=answer,
                               verify=verify, lang=lang, compiler_options=options, iterations=a.iterations,
                               strategy=a.strategy, strategy_options={"max_fevals": a.max_fevals}, cache=a.cache,
                               quiet=True, seed=a.seed)
    wall = time.time() - t1
    points = kt_simulate.trajectory(results, list(space.tune_params))
    seen, costs = set(), []
    keys = list(space.tune_params)
    for r in results:
        key = ",".join(str(r[k]) for k in keys)
        if key in seen:
            continue
        seen.add(key)
        costs.append({k: r.get(k, 0) for k in ("compile_time", "verification_time", "benchmark_time",
                                                "framework_time", "strategy_time")})
    keep = {k: v for k, v in env.items() if isinstance(v, (int, float, str, bool))}
    out = {"meta": {"kind": "peer_trajectories", "time": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "command": "scripts/perf/kt_sgemm.py " + " ".join(sys.argv[1:]), "kernel_tuner": kernel_tuner.__version__,
                    "lang": lang, "device_name": env.get("device_name"), "strategy": a.strategy, "seed": a.seed,
                    "max_fevals": a.max_fevals, "size": a.size, "iterations": a.iterations, "cache": os.path.abspath(a.cache),
                    "data_s": round(t_data, 3), "tune_wall_s": round(wall, 3)},
           "env": keep, "costs_ms": costs,
           "series": [{"tool": "Kernel Tuner", "strategy": a.strategy, "mode": "live",
                       "runs": [{"seed": a.seed, "end": "evaluation budget" if len(points) >= a.max_fevals else "the strategy ended",
                                 "points": points}]}]}
    with open(a.out + ".tmp", "w") as f:
        json.dump(out, f, separators=(",", ":"))
    os.replace(a.out + ".tmp", a.out)
    best = min((p[3] for p in points if p[3] is not None), default=float("nan"))
    print(f"kt_sgemm: {len(points)} evaluations in {wall:.1f} s (data {t_data:.1f} s) on {env.get('device_name')} "
          f"({lang}); best {best:.4f} ms -> {a.out}, {a.cache}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
