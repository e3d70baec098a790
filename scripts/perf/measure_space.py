#!/usr/bin/env python3
"""Times every compiled configuration of a search space with kopt's paired runner, a chunk of libraries per
process, and writes measurements.csv (the table search_efficiency.py and `kopt __search-replay` read).

  measure_space.py --kopt KOPT --golden GOLDEN_DIR --configs configs.txt --compiled DIR --out DIR
                   [--size S | --flops F] [--chunk 32] [--rounds 7] [--timeout-per-call-s 0.25]

configs.txt: one configuration per line as -DNAME=VALUE words (kopt_space.py). DIR/<i>.json: what
`kopt sass --compile-only --json` wrote for line i (0-based); no file means the compile failed.

Each chunk is one `kopt __runner --mode paired --lib L1 --lib L2 ...`: every library is checked once against the
golden output on fresh poison, then the correct ones are timed in R interleaved rounds (an L2 flush and CUDA
events around each call); a library that is wrong or cannot be loaded is reported in its own entry. A chunk
that dies:
  * with a result naming `failed_lib` (an illegal access breaks the CUDA context): that library gets the
    runner's status, the rest of the chunk runs again;
  * without a result (a signal, a timeout): the chunk is split in halves, down to single libraries, and a
    single library that dies gets `crashed` or `timed_out`;
  * with a result that names no library (golden data, driver, memory): the measurement stops; it would fail
    for every chunk.
Outputs in --out: measurements.csv (index, one column per dimension, status, median_ms, ci95_low_ms,
ci95_high_ms, tflops = F / median, F = --flops or 2*S^3; empty with --flops 0), failures.txt (index, status,
message of each row that is not ok), costs.csv (index, compile_ms, compile_cache_hit, measure_ms: what each
configuration cost, for tools that replay a search over the table with its costs, scripts/perf/kt_cache.py;
compile_ms is the compile JSON's compile.compile_ms, measure_ms the wall of each runner process that measured the
configuration divided by that process's number of libraries, summed over retries) and runs/ (each runner
result).
"""
import argparse
import csv
import json
import os
import signal
import subprocess
import sys
import time

FIELDS_AFTER_DIMS = ["status", "median_ms", "ci95_low_ms", "ci95_high_ms", "tflops"]


def parse_defines(line):
    """'-DA=1 -DB=2' -> {'A': 1, 'B': 2} (ordered as written)."""
    out = {}
    for word in line.split():
        name, _, value = word[2:].partition("=") if word.startswith("-D") else word.partition("=")
        out[name] = int(value)
    return out


def read_configs(path):
    with open(path) as f:
        return [parse_defines(ln) for ln in f if ln.strip()]


def read_compile_costs(compiled_dir, n):
    """index -> (compile_ms, cache_hit) from the compile JSONs (what `kopt sass --compile-only --json` wrote)."""
    out = {}
    for i in range(n):
        try:
            with open(os.path.join(compiled_dir, f"{i}.json")) as f:
                c = json.load(f).get("compile") or {}
        except (OSError, ValueError):
            continue
        if c.get("compile_ms") is not None:
            out[i] = (float(c["compile_ms"]), bool(c.get("cache_hit")))
    return out


def write_costs(path, n, compile_costs, cost_ms):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["index", "compile_ms", "compile_cache_hit", "measure_ms"])
        for i in range(n):
            c = compile_costs.get(i)
            w.writerow([i, "" if c is None else f"{c[0]:.1f}", "" if c is None else int(c[1]),
                        f"{cost_ms[i]:.1f}" if i in cost_ms else ""])


def read_libraries(compiled_dir, n):
    """index -> library path, for the configurations that compiled."""
    libs = {}
    for i in range(n):
        try:
            with open(os.path.join(compiled_dir, f"{i}.json")) as f:
                j = json.load(f)
        except (OSError, ValueError):
            continue
        if j.get("library") and (j.get("compile") or {}).get("status", "ok") == "ok":
            libs[i] = j["library"]
    return libs


def run_runner(kopt, golden, rounds, libs, out_json, timeout_s):
    """Runs one paired chunk; returns (how it ended, the result JSON or None). The child gets its own process
    group, killed as a whole at the timeout."""
    argv = [kopt, "__runner", "--mode", "paired", "--golden", golden, "--out", out_json, "--rounds", str(rounds),
            "--max-time-s", "1e9"]
    for lib in libs:
        argv += ["--lib", lib]
    if os.path.exists(out_json):
        os.remove(out_json)
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout_s)
        how = f"exit {p.returncode}" if p.returncode >= 0 else f"killed by signal {-p.returncode}"
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return f"timed out after {timeout_s:.0f} s", None
    try:
        with open(out_json) as f:
            return how, json.load(f)
    except (OSError, ValueError):
        tail = (out or b"").decode(errors="replace").strip()[-300:]
        return how + (f": {tail}" if tail else ""), None


class Systematic(Exception):
    """A failure that would end every chunk the same way (golden data, driver, memory)."""


def measure(indices, libs, run, chunk, log=print, cost_ms=None):
    """Times `indices` (configuration index -> libs[index]) in chunks through `run(chunk_libs, tag)`, which
    returns (how, result JSON or None). Returns {index: {"status", "message", "timing"?}} and the number of
    runner processes started. `cost_ms`, when given, receives index -> the wall of the processes that measured
    it, each process's wall shared evenly among its libraries."""
    results, processes = {}, 0
    cost_ms = {} if cost_ms is None else cost_ms
    queue = [indices[k:k + chunk] for k in range(0, len(indices), chunk)]
    while queue:
        part = queue.pop(0)
        processes += 1
        t0 = time.time()
        how, res = run([libs[i] for i in part], f"chunk_{processes:03d}")
        share_ms = 1000 * (time.time() - t0) / len(part)  # one wall for the process, shared evenly
        for i in part:
            cost_ms[i] = cost_ms.get(i, 0.0) + share_ms
        entries = (res or {}).get("libs")
        if isinstance(entries, list) and len(entries) == len(part):
            for i, e in zip(part, entries):
                results[i] = {"status": e.get("status", "internal_error"), "message": e.get("message", ""),
                              "timing": e.get("timing")}
            n_ok = sum(1 for i in part if results[i]["status"] == "ok")
            log(f"  chunk of {len(part)}: {n_ok} ok, {len(part) - n_ok} not ({time.time() - t0:.1f} s)")
            continue
        failed_lib = (res or {}).get("failed_lib")
        if res is not None and not failed_lib:
            raise Systematic(f"the runner failed without naming a library ({how}): {res.get('status')}: "
                             f"{res.get('message')}")
        culprit = next((i for i in part if libs[i] == failed_lib), None) if failed_lib else None
        if culprit is not None:
            results[culprit] = {"status": res.get("status", "crashed"), "message": res.get("message", how)}
            rest = [i for i in part if i != culprit]
            log(f"  chunk of {len(part)}: configuration {culprit} broke the context "
                f"({results[culprit]['status']}); {len(rest)} again")
            if rest:
                queue.insert(0, rest)
        elif len(part) == 1:
            status = "timed_out" if how.startswith("timed out") else "crashed"
            results[part[0]] = {"status": status, "message": how}
            log(f"  configuration {part[0]}: {status} ({how})")
        else:
            half = len(part) // 2
            log(f"  chunk of {len(part)} died without a result ({how}): splitting")
            queue[0:0] = [part[:half], part[half:]]
    return results, processes


def fmt(x):
    return "" if x is None else f"{x:.6f}"


def csv_rows(configs, compiled, results, size, flops=None):
    """One row per configuration, in order: index, its values, status, median_ms, ci95_low_ms, ci95_high_ms,
    tflops (`flops` per call, default 2 S^3; 0: left empty)."""
    flops = 2 * size ** 3 if flops is None else flops
    rows = []
    for i, cfg in enumerate(configs):
        if i not in compiled:
            r = {"status": "compile_failed", "message": "kopt sass --compile-only failed"}
        else:
            r = results.get(i, {"status": "not_measured", "message": "no runner result"})
        t = r.get("timing") or {}
        med = t.get("median_ms") if r["status"] == "ok" else None
        tflops = flops / (med * 1e-3) / 1e12 if med and flops else None
        rows.append([i] + list(cfg.values()) + [
            r["status"], fmt(med), fmt(t.get("ci95_low_ms") if med else None),
            fmt(t.get("ci95_high_ms") if med else None), "" if tflops is None else f"{tflops:.3f}"])
    return rows


def write_csv(path, dims, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["index"] + list(dims) + FIELDS_AFTER_DIMS)
        w.writerows(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kopt", required=True)
    ap.add_argument("--golden", required=True)
    ap.add_argument("--configs", required=True)
    ap.add_argument("--compiled", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--flops", type=float, default=None, help="FLOP per call for the tflops column (default 2*size^3; "
                    "0 leaves it empty)")
    ap.add_argument("--chunk", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--timeout-per-call-s", type=float, default=0.25,
                    help="a chunk's timeout is 60 s + this x libraries x (rounds + 3 warm-up calls)")
    a = ap.parse_args(argv)
    if a.rounds < 5:
        raise SystemExit("measure_space: --rounds must be at least 5 (the median of 5 rounds or more)")
    configs = read_configs(a.configs)
    if not configs:
        raise SystemExit(f"measure_space: {a.configs} has no configuration")
    compiled = read_libraries(a.compiled, len(configs))
    runs_dir = os.path.join(a.out, "runs")
    os.makedirs(runs_dir, exist_ok=True)

    def run(chunk_libs, tag):
        timeout = 60 + a.timeout_per_call_s * len(chunk_libs) * (a.rounds + 3)
        return run_runner(a.kopt, a.golden, a.rounds, chunk_libs, os.path.join(runs_dir, tag + ".json"), timeout)

    indices = sorted(compiled)
    print(f"measure_space: {len(indices)} of {len(configs)} configurations compiled; timing them in chunks of "
          f"{a.chunk}, {a.rounds} rounds each", flush=True)
    t0 = time.time()
    cost_ms = {}
    try:
        results, processes = measure(indices, compiled, run, a.chunk, log=lambda s: print(s, flush=True), cost_ms=cost_ms)
    except Systematic as e:
        print(f"measure_space: {e}", file=sys.stderr)
        return 1
    rows = csv_rows(configs, compiled, results, a.size, a.flops)
    write_csv(os.path.join(a.out, "measurements.csv"), configs[0].keys(), rows)
    write_costs(os.path.join(a.out, "costs.csv"), len(configs), read_compile_costs(a.compiled, len(configs)), cost_ms)
    with open(os.path.join(a.out, "failures.txt"), "w") as f:
        for i in range(len(configs)):
            r = results.get(i) if i in compiled else {"status": "compile_failed", "message": ""}
            r = r or {"status": "not_measured", "message": ""}
            if r["status"] != "ok":
                f.write(f"{i}\t{r['status']}\t{r.get('message', '')}\n")
    n_ok = sum(1 for r in rows if r[len(configs[0]) + 1] == "ok")
    print(f"measure_space: {n_ok}/{len(configs)} ok in {time.time() - t0:.0f} s ({processes} runner processes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
