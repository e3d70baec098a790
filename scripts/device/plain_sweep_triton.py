#!/usr/bin/env python3
"""The exhaustive sweep of a derived Triton space (scripts/device/plain_check.sh): every configuration of the
params `kopt annotate --json` lists (their cross product; derived Triton spaces carry no constraints), timed with
the harness's paired mode on golden data made once. A chunk whose process fails is split in halves down to single
configurations (one that still fails is recorded with the harness's message); one whose failing configuration the
harness names is run again without that one. A paired run times all its configurations by the most conservative
method any of them needs (plain events or a device-wide synchronisation, which count run_kernel's Python launch in
the sample, where the others are timed behind a sleep): a chunk that fell back is timed again one configuration a
run, so that no configuration's time depends on the chunk it happened to share (s27: liger_rms_norm's 4096-wide
points read 0.065 ms in one chunk against kopt's 0.049). Last, the finalists (the --finalists fastest and the
project's own point, every param at its default) are timed again together in one paired run, and those times are
the ones the table keeps (column `basis`: chunk, single or final). Each run is a child of the harness's
fork server (kopt_harness.fork_client), which, after a first check of the first configuration, also has the installed
modules the kernel's import loads imported (KOPT_TRITON_PRELOAD, python/kopt_harness/preload.py), as kopt's own runs
do: a Liger-Kernel kernel's import alone took 11 s in each process of a plain child (s25).

  plain_sweep_triton.py --kernel ANNOTATED.py --derivation DERIVED.json --golden GOLDEN_DIR --out DIR
                        [--chunk 12] [--rounds 10] [--max-time-s 2] [--finalists 4]

Writes DIR/measurements.csv (index, one column per param, status, median_ms, timing_method, basis) and prints the
best; after each chunk, DIR/measurements.partial.csv (the same columns, "missing" where nothing ran yet) and a line of
progress, so that a sweep cut by its caller still says what it measured.
"""
import argparse
import csv
import itertools
import json
import os
import re
import statistics
import subprocess
import sys
import time


def run_chunk(a, configs, tag, mode="paired"):
    out = os.path.join(a.out, f"run_{tag}.json")
    cmd = [sys.executable, "-m", "kopt_harness.fork_client", "triton-run", "--kernel", a.kernel, "--golden", a.golden,
           "--out", out, "--mode", mode]
    for c in configs if mode != "paired" else [configs]:
        cmd += ["--config", json.dumps(c)]
    if mode == "paired":
        cmd += ["--rounds", str(a.rounds), "--max-time-s", str(a.max_time_s)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    try:
        res = json.load(open(out))
    except (OSError, ValueError):
        res = {"status": "crashed", "message": p.stderr[-500:]}
    return res


BEHIND_SLEEP = "events_behind_sleep"  # sampling.BEHIND_SLEEP: the launch-free method


def measure(a, items, results, depth=0, methods=None, tag=""):
    """items: [(index, config)]; fills results[index] = (status, median_ms or None, message) and, given `methods`,
    methods[index] = (the timing method of the run that measured it, how many configurations that run timed)."""
    res = run_chunk(a, [c for _, c in items], f"{tag}{items[0][0]}_{len(items)}")
    libs = res.get("libs") or []
    if res.get("status") == "ok" and len(libs) == len(items):
        for (i, _), lib in zip(items, libs):
            s = lib.get("samples_ms") or []
            results[i] = ("ok", statistics.median(s), "") if s else ("no_samples", None, "")
            if methods is not None:
                methods[i] = (res.get("timing_method") or "", len(items))
        return
    message = str(res.get("message", ""))
    if len(items) == 1:
        results[items[0][0]] = (res.get("status", "failed"), None, message[:300])
        return
    # The harness checks every configuration of a paired run before timing any, and names the first that fails
    # ("configuration K {...}: ..."): that one is recorded and the rest run again without it. A failure it does not
    # name (a crash) is split in halves.
    named = re.match(r"configuration (\d+)\b", message)
    if named and int(named.group(1)) < len(items):
        k = int(named.group(1))
        results[items[k][0]] = (res.get("status", "failed"), None, message[:300])
        measure(a, items[:k] + items[k + 1:], results, depth + 1, methods, tag)
        return
    half = len(items) // 2
    measure(a, items[:half], results, depth + 1, methods, tag)
    measure(a, items[half:], results, depth + 1, methods, tag)


def even_out(a, configs, results, methods, basis):
    """Each configuration a paired run timed by a fallback method (not behind a sleep) beside others, timed again
    alone: its time no longer depends on which configurations shared its run. Then the finalists, the a.finalists
    fastest and the project's point (`project`, an index or None), timed again together: basis[i] says which run
    gave results[i] (chunk, single, final). Only configurations timed behind a sleep are finalists."""
    for i in list(results):
        if results[i][0] == "ok":
            basis[i] = "chunk"
    fell_back = [i for i, (method, shared) in methods.items() if method != BEHIND_SLEEP and shared > 1]
    for i in sorted(i for i in fell_back if basis.get(i) == "chunk"):
        single = {}
        measure(a, [(i, configs[i])], single, methods=methods, tag="single_")
        if single.get(i, ("",))[0] == "ok":
            results[i], basis[i] = single[i], "single"
    # Finalists among those timed behind the sleep: one that needs a fallback alone would take the others' back to it.
    clean = [i for i in results if results[i][0] == "ok" and methods.get(i, ("", 0))[0] == BEHIND_SLEEP]
    final = [i for _, i in sorted((results[i][1], i) for i in clean)[:max(0, a.finalists)]]
    if a.project is not None and a.project not in final and a.project in clean:
        final.append(a.project)
    if len(final) < 2:
        return
    again, before = {}, dict(methods)
    measure(a, [(i, configs[i]) for i in final], again, methods=methods, tag="final_")
    if any(again.get(i, ("",))[0] != "ok" or methods[i][0] != BEHIND_SLEEP for i in final):
        methods.update({i: before[i] for i in final})  # the finals' run is not kept: the earlier times stand
    else:
        for i in final:
            results[i], basis[i] = again[i], "final"


def project_index(params, names, configs):
    """The index of the project's own configuration (every param at its `default`), or None."""
    want = {n: p.get("default") for p, n in zip(params, names)}
    for i, c in enumerate(configs):
        if all(c[n] == want[n] for n in names):
            return i
    return None


def golden_dims(golden):
    """The dims the golden data was made at (its manifest's), {} where it says none."""
    try:
        with open(os.path.join(golden, "manifest.json")) as f:
            return json.load(f).get("dims") or {}
    except (OSError, ValueError):
        return {}


def uncovered(params, names, configs, dims):
    """The configurations a param with `covers` (one block of it covers that dim: a Triton row kernel's tile) rules out
    at these dims, as kopt's search does (Optimizer::prune_uncovered): {index: ("uncovered", None, why)}, never run."""
    out = {}
    for p, n in zip(params, names):
        need = dims.get(p.get("covers", ""), 0)
        for i, c in enumerate(configs):
            if need and c[n] < need and i not in out:
                out[i] = ("uncovered", None, f"{n}={c[n]} < {p['covers']}={need}: one block covers {p['covers']}")
    return out


def write_table(path, names, configs, results, methods, basis):
    """measurements.csv's rows: every configuration, "missing" where nothing was run."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["index"] + names + ["status", "median_ms", "timing_method", "basis"])
        for i, c in enumerate(configs):
            st, ms, _ = results.get(i, ("missing", None, ""))
            w.writerow([i] + [c[n] for n in names] + [st, "" if ms is None else f"{ms:.6f}",
                                                      methods.get(i, ("", 0))[0], basis.get(i, "")])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--derivation", required=True)
    ap.add_argument("--golden", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--chunk", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--max-time-s", type=float, default=2.0)
    ap.add_argument("--finalists", type=int, default=4, help="the fastest timed again together with the project's point")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    d = json.load(open(a.derivation))
    params = d["params"]
    names = [p["origin"] if p["kind"] in ("num_warps", "num_stages") else p["name"] for p in params]
    configs = [dict(zip(names, vals)) for vals in itertools.product(*[p["values"] for p in params])]
    results = uncovered(params, names, configs, golden_dims(a.golden))
    configs_to_run = [c for i, c in enumerate(configs) if i not in results]
    first = run_chunk(a, [configs_to_run[0]], "check_0", mode="check")  # its kernel's installed imports, for the rest
    names_file = os.path.join(os.path.abspath(a.out), "preload.txt")
    if first.get("installed_imports"):
        with open(names_file, "w") as f:
            f.write("".join(n + "\n" for n in first["installed_imports"]))
        os.environ["KOPT_TRITON_PRELOAD"] = names_file
    items = [(i, c) for i, c in enumerate(configs) if i not in results]
    methods, basis = {}, {}
    t0 = time.time()
    for k in range(0, len(items), a.chunk):
        measure(a, items[k:k + a.chunk], results, methods=methods)
        # What is measured so far, kept where a cut sweep leaves it (a sweep cut by its caller's timeout wrote nothing:
        # fla_chunk_local_cumsum, 35 points, 150 s, s32), apart from the table, which only a whole sweep writes.
        write_table(os.path.join(a.out, "measurements.partial.csv"), names, configs, results, methods, basis)
        done = sum(1 for i, _ in items if i in results)
        print(f"plain_sweep_triton: {done}/{len(items)} configurations run, "
              f"{sum(1 for r in results.values() if r[0] == 'ok')} ok, {time.time() - t0:.0f} s", flush=True)
    a.project = project_index(params, names, configs)
    even_out(a, configs, results, methods, basis)
    write_table(os.path.join(a.out, "measurements.csv"), names, configs, results, methods, basis)
    ok = [(results[i][1], configs[i]) for i in results if results[i][0] == "ok"]
    print(f"plain_sweep_triton: {len(ok)}/{len(configs)} configurations measured")
    if ok:
        best = min(ok, key=lambda x: x[0])
        print(f"plain_sweep_triton: best {best[0]:.4f} ms at {json.dumps(best[1])}")


if __name__ == "__main__":
    main()
