#!/usr/bin/env python3
"""Runs Kernel Tuner's search strategies in its simulation mode over a cachefile made from kopt's exhaustive
measurement (scripts/perf/kt_cache.py), several seeds each, and writes every run's trajectory.

  kt_simulate.py CACHE.json --kernel KERNEL.cu [--derive NAME=EXPR ...] [--strategies a,b,...] [--seeds 1-10]
                 [--max-fevals N] [--time-limit-s S] [--out sim.json]

No GPU: `tune_kernel(kernel_name, "", problem_size, [], tune_params, restrictions=..., cache=CACHE.json,
simulation_mode=True, strategy=S, strategy_options={"max_fevals": N})` looks every configuration up in the cache
(kernel_tuner/runners/simulation.py). The tune_params come from the cache's header; the restrictions are the
kernel's `@kopt constraint`s (kt_cache.KtSpace, as the live harness scripts/perf/kt_sgemm.py passes them), and
Kernel Tuner's own search space must equal kopt's enumeration of the kernel's space, else nothing is run.

Seeds: Kernel Tuner 1.5.0 passes its `seed` argument to the pymoo strategies only; the others draw from Python's
`random` and numpy's global generator, so each run seeds both (random.seed(s), numpy.random.seed(s)) before
tune_kernel, and the script runs under PYTHONHASHSEED=0 (it re-executes itself with it), so that a live run of
the harness with the same seed, space and strategy proposes the same configurations.

A trajectory, per run, is one point per configuration evaluated for the first time, in order:
  [evaluation, wall_s, overhead_s, ms, key]
evaluation: 1-based count of distinct configurations; ms: its time (null for a failed one); key: Kernel Tuner's
cache key. wall_s: simulated seconds from the start of the search, the sum over the results so far of the
recorded compile_time + verification_time + benchmark_time (zero for a configuration served again) plus Kernel
Tuner's own overhead, overhead_s: its strategy_time + framework_time (the strategy's and the runner's real
seconds on this machine; Kernel Tuner spreads them evenly over the results of each batch it hands the runner).
"""
import argparse
import json
import os
import random
import sys
import time
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kt_cache  # noqa: E402

DEFAULT_STRATEGIES = ["random_sample", "genetic_algorithm", "bayes_opt", "greedy_ils", "simulated_annealing",
                      "pso", "diff_evo", "firefly_algorithm", "mls", "basinhopping", "dual_annealing"]


def reexec_with_fixed_hash_seed():
    """Python's string hashing is randomised per process; Kernel Tuner's search-space construction goes through
    sets. Fixing it makes a seed mean the same run here and on the GPU machine."""
    if os.environ.get("PYTHONHASHSEED") != "0":
        env = dict(os.environ, PYTHONHASHSEED="0")
        os.execve(sys.executable, [sys.executable] + sys.argv, env)


def parse_seeds(text):
    """'1-5' or '1,3,7' or '1-3,9' -> [1, 2, 3, 9]."""
    seeds = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        lo, dash, hi = part.partition("-")
        try:
            seeds += list(range(int(lo), int(hi) + 1)) if dash else [int(lo)]
        except ValueError:
            raise SystemExit(f"kt_simulate: --seeds {text!r}: expected numbers and ranges like 1-5,9")
    if not seeds:
        raise SystemExit("kt_simulate: --seeds names no seed")
    return seeds


def trajectory(results, keys=None):
    """Kernel Tuner's results list -> points [evaluation, wall_s, overhead_s, ms, key] (module docstring). `keys`:
    the tune_params' names in order (default: every key of the first result that is not one of Kernel Tuner's
    own fields)."""
    points, seen = [], set()
    wall_ms = over_ms = 0.0
    for r in results:
        if r is None:
            continue
        if keys is None:
            keys = [k for k in r if k not in ("time", "times", "compile_time", "verification_time", "benchmark_time",
                                              "strategy_time", "framework_time", "timestamp", "__error__")]
        overhead = r.get("strategy_time", 0) + r.get("framework_time", 0)
        wall_ms += r.get("compile_time", 0) + r.get("verification_time", 0) + r.get("benchmark_time", 0) + overhead
        over_ms += overhead
        key = ",".join(str(r[k]) for k in keys)
        if key in seen:
            continue
        seen.add(key)
        ms = r.get("time") if "__error__" not in r else None
        points.append([len(seen), round(wall_ms / 1000, 6), round(over_ms / 1000, 6), ms, key])
    return points


class StallGuard:
    """Ends a simulated run whose strategy proposes `limit` configurations in a row that were all evaluated
    before. Kernel Tuner's budget counts distinct configurations only, so a local search that has seen its whole
    neighbourhood in a small space would propose cached ones forever; the guard raises Kernel Tuner's own
    StopCriterionReached from the runner, which every strategy treats as the end of its budget."""

    def __init__(self, limit):
        self.limit, self.stalled = limit, False
        self.seen, self.since_new = set(), 0

    def install(self):
        from kernel_tuner.runners import simulation
        from kernel_tuner.util import StopCriterionReached
        original = simulation.SimulationRunner.run
        guard = self

        def run(runner, parameter_space, tuning_options):
            parameter_space = list(parameter_space)
            for element in parameter_space:
                key = tuple(element)
                if key in guard.seen:
                    guard.since_new += 1
                else:
                    guard.seen.add(key)
                    guard.since_new = 0
            if guard.since_new >= guard.limit:
                guard.stalled = True
                raise StopCriterionReached(f"{guard.limit} proposals in a row evaluated before")
            return original(runner, parameter_space, tuning_options)

        simulation.SimulationRunner.run = run
        return original

    @staticmethod
    def remove(original):
        from kernel_tuner.runners import simulation
        simulation.SimulationRunner.run = original


def simulate_one(tune_kernel, header, restrictions, cache, strategy, seed, max_fevals, time_limit_s, stall_limit):
    import numpy as np
    random.seed(seed)
    np.random.seed(seed)
    options = {"max_fevals": max_fevals}
    if time_limit_s:
        options["time_limit"] = time_limit_s
    t0 = time.time()
    guard = StallGuard(stall_limit)
    original = guard.install()
    try:
        results, env = tune_kernel(header["kernel_name"], "", header["problem_size"], [], header["tune_params"],
                                   restrictions=restrictions, cache=cache, simulation_mode=True, strategy=strategy,
                                   strategy_options=options, quiet=True, verbose=False, seed=seed)
    finally:
        StallGuard.remove(original)
    points = trajectory(results, header["tune_params_keys"])
    if guard.stalled:
        end = f"stalled ({stall_limit} proposals in a row already evaluated)"
    elif len(points) >= max_fevals:
        end = "evaluation budget"
    elif time_limit_s and points and points[-1][1] >= time_limit_s * 0.9:
        end = "time budget"
    else:
        end = "the strategy ended"
    return {"seed": seed, "end": end, "cpu_s": round(time.time() - t0, 3), "results": len(results),
            "simulated_time_s": round(env.get("simulated_time", 0) / 1000, 3), "points": points}


def check_space(header, kernel, derive):
    """The KtSpace of the kernel, checked against the cache's header and against Kernel Tuner's Searchspace."""
    from kernel_tuner.searchspace import Searchspace
    space = kt_cache.KtSpace(open(kernel).read(), derive)
    if list(space.tune_params) != header["tune_params_keys"] or space.tune_params != header["tune_params"]:
        raise SystemExit(f"kt_simulate: the cache's tune_params ({header['tune_params_keys']}) are not the kernel's "
                         f"({list(space.tune_params)}); make the cache from this kernel with the same --derive")
    ss = Searchspace(header["tune_params"], space.restrictions, 1 << 30)
    kt = {",".join(str(v) for v in c) for c in ss.list}
    ko = {space.key(c) for c in space.configs}
    if kt != ko:
        raise SystemExit(f"kt_simulate: Kernel Tuner's search space ({len(kt)} configurations) is not kopt's "
                         f"({len(ko)}) under the restrictions {space.restrictions}")
    return space


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="The module docstring (head -30 scripts/perf/kt_simulate.py) defines the output.")
    ap.add_argument("cache", help="the Kernel Tuner cachefile (kt_cache.py)")
    ap.add_argument("--kernel", required=True, help="the kernel whose annotations declare the space")
    ap.add_argument("--derive", action="append", metavar="NAME=EXPR", help="as given to kt_cache.py")
    ap.add_argument("--strategies", default=",".join(DEFAULT_STRATEGIES),
                    help=f"comma-separated Kernel Tuner strategies (default {','.join(DEFAULT_STRATEGIES)})")
    ap.add_argument("--seeds", default="1-10", help="seeds, e.g. 1-10 or 1,2,5 (default 1-10)")
    ap.add_argument("--max-fevals", type=int, default=0, help="evaluation budget per run (default: the whole space)")
    ap.add_argument("--time-limit-s", type=float, default=0, help="also a simulated-time budget per run (seconds)")
    ap.add_argument("--stall-limit", type=int, default=1000,
                    help="end a run after this many proposals in a row of configurations evaluated before (default 1000)")
    ap.add_argument("--out", default="kt_simulation.json")
    a = ap.parse_args(argv)
    reexec_with_fixed_hash_seed()
    try:
        import kernel_tuner
        from kernel_tuner import tune_kernel
    except ImportError as e:
        raise SystemExit(f"kt_simulate: Kernel Tuner is not importable ({e}): pip install kernel-tuner==1.5.0")
    if not os.path.exists(a.cache):
        raise SystemExit(f"kt_simulate: no such cachefile: {a.cache}")
    header = kernel_tuner.util.read_cache(a.cache, open_cache=False)  # as Kernel Tuner reads it
    space = check_space(header, a.kernel, kt_cache.parse_derive(a.derive))
    n = len(header["cache"])
    max_fevals = a.max_fevals or n
    strategies = [s.strip() for s in a.strategies.split(",") if s.strip()]
    seeds = parse_seeds(a.seeds)
    best = min(e["time"] for e in header["cache"].values() if "__error__" not in e)
    out = {"meta": {"kind": "peer_trajectories", "time": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "command": "scripts/perf/kt_simulate.py " + " ".join(sys.argv[1:]),
                    "kernel_tuner": kernel_tuner.__version__, "cache": os.path.abspath(a.cache),
                    "device_name": header["device_name"], "kernel_name": header["kernel_name"]},
           "space_size": n, "best_ms": best, "max_fevals": max_fevals, "time_limit_s": a.time_limit_s or None,
           "stall_limit": a.stall_limit, "series": []}
    import warnings
    for strategy in strategies:
        runs = []
        for seed in seeds:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    run = simulate_one(tune_kernel, header, space.restrictions, a.cache, strategy, seed, max_fevals,
                                       a.time_limit_s, a.stall_limit)
                except Exception as e:  # a strategy that fails is reported, the others still run
                    print(f"kt_simulate: {strategy} seed {seed}: {type(e).__name__}: {e}", file=sys.stderr)
                    runs.append({"seed": seed, "end": f"error: {type(e).__name__}: {e}", "points": []})
                    continue
            runs.append(run)
            pts = run["points"]
            hit = next((p[0] for p in pts if p[3] is not None and p[3] <= best * 1.03), None)
            print(f"kt_simulate: {strategy:<20} seed {seed:>3}: {len(pts):>4} evaluations, best "
                  f"{min((p[3] for p in pts if p[3] is not None), default=float('nan')):.4f} ms, within 3% at "
                  f"{hit if hit else '-'}, {run['cpu_s']:.1f} s CPU", flush=True)
        out["series"].append({"tool": "Kernel Tuner", "strategy": strategy, "mode": "simulated", "runs": runs})
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f, separators=(",", ":"))
    os.replace(tmp, a.out)
    print(f"kt_simulate: {len(strategies)} strategies x {len(seeds)} seeds -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
