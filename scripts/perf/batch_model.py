#!/usr/bin/env python3
"""Models how the batch size K trades evaluations against wall time (docs/history/PERFORMANCE-2026-11-30-to-2026-12-02.md section 6, sixth session).

For each K it runs `kopt __search-replay --branches K` on a measured table (every seed's evaluation count until the
first configuration within W% of the best), then charges each seed's evaluations a wall of C seconds per candidate
plus F seconds per completed iteration (selection, ablation, profile: what the loop spends once per batch), and
prints the share of seeds that get within W% inside the budget B.

  batch_model.py --kopt build/kopt --kernel examples/sgemm_tunable/kernel.cu \\
      --table tests/data/perf/h200-2026-11-30/sgemm_tunable_4096_measurements.csv \\
      --per-candidate 2.0 --per-iteration 22 --budget 68.5 [--k 4,8,12,16] [--runs 200]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def seconds_to_hit(evaluation, k, per_candidate, per_iteration):
    """Wall seconds from the end of the gates until evaluation `evaluation` (1 = the baseline) is measured."""
    if evaluation is None:
        return float("inf")
    n = evaluation - 1  # candidates, the baseline excluded
    if n <= 0:
        return 0.0
    done_iterations = (n - 1) // k
    within = (n - 1) % k + 1
    return done_iterations * (k * per_candidate + per_iteration) + within * per_candidate


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kopt", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--per-candidate", type=float, required=True, help="wall seconds per candidate (C)")
    ap.add_argument("--per-iteration", type=float, required=True, help="fixed wall seconds per iteration (F)")
    ap.add_argument("--budget", type=float, required=True, help="seconds after the gates (B)")
    ap.add_argument("--k", default="4,8,12,16")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--within", type=float, default=3.0)
    a = ap.parse_args(argv)
    for k in [int(x) for x in a.k.split(",")]:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "r.json")
            r = subprocess.run([a.kopt, "__search-replay", "--kernel", a.kernel, "--table", a.table, "--runs", str(a.runs),
                                "--branches", str(k), "--within", str(a.within), "--json", path],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if r.returncode != 0:
                sys.exit(f"batch_model: kopt __search-replay failed ({r.returncode}): {r.stderr[-400:]}")
            with open(path) as f:
                runs = json.load(f)["runs"]
        hits = [x.get("hit_evaluation") for x in runs]
        ok = sum(1 for h in hits if seconds_to_hit(h, k, a.per_candidate, a.per_iteration) <= a.budget)
        print(f"K {k:2d}: {ok / len(hits):.2f} of {len(hits)} seeds within {a.within:g}% inside {a.budget:g} s "
              f"(C {a.per_candidate:g} s, F {a.per_iteration:g} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
