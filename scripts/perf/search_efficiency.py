#!/usr/bin/env python3
"""Search efficiency from an exhaustive measurement of a search space (scripts/perf/search_efficiency.sh).

  search_efficiency.py MEASUREMENTS.csv [--kernel KERNEL.cu] [--evaluated EVALUATED.txt] [--within 1,2,5]

MEASUREMENTS.csv: `index`, one column per dimension, `status`, `median_ms`, ... (one row per configuration;
rows whose status is not ok count as failed). Reports the true best configuration, the default's time, how many
configurations lie within 1/2/5% of the best, and how many evaluations uniform random search (without
replacement) needs on average to measure one of them: (N + 1) / (m + 1) for m good configurations among N.
With --kernel (the measured kernel, e.g. kernel_subspace.cu), also the default configuration (kopt's baseline)
and the best's speedup over it.

EVALUATED.txt: the configurations kopt optimize measured, in order, one per line as NAME=VALUE words (a leading
-D is accepted; the baseline first). Names not in the CSV (compiler-flag methods...) make a line "outside the
measured space". The report then gives, for the best and for each --within level, the 1-based evaluation at
which kopt first measured such a configuration (or "not reached after E evaluations").
"""
import argparse
import csv
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kopt_space  # noqa: E402


def read_measurements(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise SystemExit(f"search_efficiency: {path} has no rows")
    fixed = {"index", "status", "median_ms", "ci95_low_ms", "ci95_high_ms", "tflops"}
    dims = [k for k in rows[0] if k not in fixed]
    configs = []
    for r in rows:
        key = tuple((d, int(r[d])) for d in dims)
        ms = float(r["median_ms"]) if r.get("median_ms") and r.get("status") == "ok" else math.inf
        configs.append({"key": key, "ms": ms, "status": r.get("status", ""), "row": r})
    return dims, configs


def parse_config_line(line):
    out = {}
    for word in line.split():
        if word.startswith("-D"):
            word = word[2:]
        name, eq, value = word.partition("=")
        if not eq:
            raise ValueError(f"not NAME=VALUE: {word!r}")
        out[name] = int(value)
    return out


def describe(key):
    return " ".join(f"{d}={v}" for d, v in key)


def random_search_expectation(n, good):
    """Expected draws, uniformly without replacement from n items of which `good` are good, to the first good."""
    return (n + 1) / (good + 1)


def report(dims, configs, evaluated=None, within=(1, 2, 5), default=None):
    lines = []
    ok = [c for c in configs if math.isfinite(c["ms"])]
    if not ok:
        return "no configuration measured ok"
    best = min(ok, key=lambda c: c["ms"])
    n = len(configs)
    lines.append(f"configurations: {n} ({len(ok)} ok, {n - len(ok)} failed or wrong)")
    tf = best["row"].get("tflops")
    lines.append(f"true best: {best['ms']:.4f} ms{f' ({tf} TFLOP/s)' if tf else ''}  {describe(best['key'])}")
    if default is not None:
        d = next((c for c in configs if c["key"] == tuple((n, default.get(n)) for n in dims)), None)
        if d is None:
            lines.append("default: not among the measured configurations")
        elif math.isfinite(d["ms"]):
            lines.append(f"default: {d['ms']:.4f} ms  {describe(d['key'])}  (the best is {d['ms'] / best['ms']:.2f}x faster)")
        else:
            lines.append(f"default: {d['status']}  {describe(d['key'])}")
    lines.append("")
    lines.append(f"{'target':<22} {'configs':>8} {'random search: mean evaluations':>32}")
    targets = [("the best", lambda c: c is best)]
    targets += [(f"within {w:g}% of the best", (lambda w: lambda c: c["ms"] <= best["ms"] * (1 + w / 100))(w))
                for w in within]
    for name, pred in targets:
        m = sum(1 for c in configs if pred(c))
        lines.append(f"{name:<22} {m:>8} {random_search_expectation(n, m):>32.1f}")
    slowest = max(ok, key=lambda c: c["ms"])
    lines.append("")
    lines.append(f"slowest ok: {slowest['ms']:.4f} ms ({slowest['ms'] / best['ms']:.2f}x the best)  {describe(slowest['key'])}")
    if evaluated is not None:
        by_key = {c["key"]: c for c in configs}
        lines.append("")
        lines.append(f"kopt's search: {len(evaluated)} evaluations")
        outside = 0
        hits = {}
        for i, cfg in enumerate(evaluated, 1):
            if set(cfg) != set(dims):
                outside += 1
                continue
            c = by_key.get(tuple((d, cfg[d]) for d in dims))
            if c is None:
                outside += 1
                continue
            for name, pred in targets:
                if name not in hits and pred(c):
                    hits[name] = i
        for name, _ in targets:
            got = f"evaluation {hits[name]}" if name in hits else f"not reached after {len(evaluated)} evaluations"
            lines.append(f"  {name:<22} {got}")
        if outside:
            lines.append(f"  {outside} evaluation(s) outside the measured space (other dimensions or values)")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("measurements")
    ap.add_argument("--kernel", help="the measured kernel: its annotation defaults are kopt's baseline")
    ap.add_argument("--evaluated")
    ap.add_argument("--within", default="1,2,5", help="percent levels, comma-separated (default 1,2,5)")
    a = ap.parse_args(argv)
    dims, configs = read_measurements(a.measurements)
    evaluated = None
    if a.evaluated:
        with open(a.evaluated) as f:
            try:
                evaluated = [parse_config_line(ln) for ln in f if ln.strip() and not ln.startswith("#")]
            except ValueError as e:
                raise SystemExit(f"search_efficiency: {a.evaluated}: {e}")
    within = [float(w) for w in a.within.split(",") if w.strip()]
    default = None
    if a.kernel:
        with open(a.kernel) as f:
            default = {name: d for name, _, d in kopt_space.parse_annotations(f.read())[0]}
    print(report(dims, configs, evaluated, within, default))
    return 0


if __name__ == "__main__":
    sys.exit(main())
