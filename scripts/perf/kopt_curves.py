#!/usr/bin/env python3
"""Best-so-far trajectories of kopt's search, in the format of kt_simulate.py (points [evaluation, wall_s,
overhead_s, ms, key]), from two sources:

  * live runs: `kopt optimize` run directories (kopt_runs/run_*), one seed each. Evaluation i is the i-th entry
    of state.json's history (the baseline is evaluation 1; ablation builds are not evaluations). Its wall_s is
    the seconds from the end of the gates to the moment its timing was known, taken from, in order:
      1. history[i].search_s, which kopt writes since a44a8ff (seconds of search since the gates passed, when the
         candidate was measured; the baseline 0);
      2. the `meta.time` stamp (UTC, whole seconds) of iter_NN/candidates/<id>/run.json (build.json for a
         candidate that never ran), minus that of iter_00_baseline/roofline.json, the last file the gates write;
      3. else the search's phase seconds (summary.json phase_seconds less gates and ceilings) spread evenly
         over the candidates ("estimated").
    ms is the configuration's median_ms in the exhaustive table when the candidate lies in the measured space
    (its params and method guards; no compiler-flag method), so every tool is judged by the same measurement;
    else kopt's own median_ms of the candidate.
  * replays: `kopt __search-replay` (no GPU) run with --iterations 1, 2, ... for the same seeds: the result of
    k iterations is the first k iterations of the full run (the generator is seeded per iteration), so each
    gives the best found and the evaluation count at the end of iteration k; the replay's own hit_evaluation
    places the first configuration within the target exactly. wall_s is modelled as evaluations times the mean
    cost of one evaluation in the cache (compile + measurement, as in the Kernel Tuner simulation), because
    the replay's JSON does not name the configurations it evaluated.
"""
import calendar
import csv
import glob
import json
import os
import re
import subprocess
import sys
import time


def guard_macro(method_id):
    return "KOPT_" + re.sub(r"[^A-Za-z0-9]", "_", method_id).upper()


def read_table(path):
    """(dims, {config tuple: ms or None}, best_ms) from measurements.csv."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    fixed = {"index", "status", "median_ms", "ci95_low_ms", "ci95_high_ms", "tflops"}
    dims = [k for k in rows[0] if k not in fixed]
    ms = {}
    for r in rows:
        key = tuple(int(r[d]) for d in dims)
        ms[key] = float(r["median_ms"]) if r.get("status") == "ok" and r.get("median_ms") else None
    ok = [v for v in ms.values() if v is not None]
    if not ok:
        raise ValueError(f"{path}: no configuration measured ok")
    return dims, ms, min(ok)


def meta_epoch(path):
    """The meta.time of a kopt JSON as seconds since the epoch, or None."""
    try:
        with open(path) as f:
            t = json.load(f).get("meta", {}).get("time")
        return calendar.timegm(time.strptime(t, "%Y-%m-%dT%H:%M:%SZ")) if t else None
    except (OSError, ValueError, TypeError):
        return None


def candidate_key(cand, dims):
    """The candidate's configuration as a table key, or None when it lies outside the measured space."""
    if cand.get("flags"):
        return None
    values = dict(cand.get("params") or {})
    for method, on in (cand.get("guards") or {}).items():
        values[guard_macro(method)] = int(bool(on))
    if any(d not in values for d in dims):
        return None
    return tuple(int(values[d]) for d in dims)


def find_run_dirs(paths):
    """Each path is a run directory (holding state.json) or a folder holding kopt_runs/run_* or run_* ones."""
    out = []
    for p in paths:
        if os.path.exists(os.path.join(p, "state.json")):
            out.append(p)
            continue
        found = sorted(glob.glob(os.path.join(p, "kopt_runs", "run_*"))) + sorted(glob.glob(os.path.join(p, "run_*")))
        found = [d for d in found if os.path.exists(os.path.join(d, "state.json"))]
        if not found:
            raise ValueError(f"{p}: no kopt run directory (state.json) in it")
        out += found
    return out


def run_trajectory(run_dir, dims, table):
    """One live run -> {"seed", "end", "time_source", "total_wall_s", "search_wall_s", "points"}."""
    with open(os.path.join(run_dir, "state.json")) as f:
        state = json.load(f)
    summary, options = {}, {}
    for name, into in (("summary.json", summary), ("options.json", options)):
        try:
            with open(os.path.join(run_dir, name)) as f:
                into.update(json.load(f))
        except (OSError, ValueError):
            pass
    history = state.get("history") or []
    if not history:
        raise ValueError(f"{run_dir}: state.json has no history (did the gates pass?)")
    phases = state.get("phase_seconds") or summary.get("phase_seconds") or {}
    total = sum(phases.values())
    search_wall = (state.get("stop") or {}).get("search_s") or (total - phases.get("gates", 0) - phases.get("ceilings", 0))
    times = [h.get("search_s") for h in history]
    source = "history[].search_s"
    if any(t is None for t in times):
        t0 = meta_epoch(os.path.join(run_dir, "iter_00_baseline", "roofline.json"))
        stamps = []
        for h in history:
            cid = (h.get("candidate") or {}).get("id", "")
            if cid == "baseline":
                stamps.append(t0)
                continue
            cdir = os.path.join(run_dir, f"iter_{int(h.get('iteration', 0)):02d}", "candidates", cid)
            # run.json: its timing ended; a candidate that never ran (a failed compile): build.json
            stamps.append(next((t for t in (meta_epoch(os.path.join(cdir, n)) for n in ("run.json", "build.json"))
                                if t is not None), None))
        if t0 is not None and all(s is not None for s in stamps):
            times = [max(0.0, float(s - t0)) for s in stamps]
            source = "file time stamps (1 s)"
        else:
            n = len(history)
            times = [0.0] + [search_wall * i / max(1, n - 1) for i in range(1, n)]
            source = "estimated (phase seconds spread evenly)"
    points = []
    for i, (h, t) in enumerate(zip(history, times), 1):
        cand = h.get("candidate") or {}
        key = candidate_key(cand, dims)
        ms = None
        if h.get("status", "ok") == "ok" and h.get("median_ms") is not None:
            ms = table.get(key) if key is not None and table.get(key) is not None else float(h["median_ms"])
        points.append([i, round(float(t), 3), 0.0, ms, ",".join(map(str, key)) if key else cand.get("id", "")])
    seed = (options.get("options") or options).get("seed") if options else None
    stop = (summary.get("stop") or {}).get("reason") or state.get("stop_reason") or "unfinished"
    return {"seed": seed, "end": stop, "time_source": source, "total_wall_s": round(total, 3),
            "search_wall_s": round(search_wall, 3), "run_dir": os.path.abspath(run_dir), "points": points}


def live_series(paths, table_path, label="default"):
    dims, table, best = read_table(table_path)
    runs = []
    for i, d in enumerate(find_run_dirs(paths), 1):
        r = run_trajectory(d, dims, table)
        if r["seed"] is None:
            r["seed"] = i
        runs.append(r)
    return {"tool": "kopt", "strategy": label, "mode": "live", "runs": runs}


# --- replays ------------------------------------------------------------------------------------------------

def mean_eval_cost_s(cache_path):
    """Mean compile_time + verification_time + benchmark_time of a Kernel Tuner cachefile, in seconds."""
    with open(cache_path) as f:
        c = json.load(f)["cache"]
    costs = [e.get("compile_time", 0) + e.get("verification_time", 0) + e.get("benchmark_time", 0) for e in c.values()]
    return sum(costs) / len(costs) / 1000 if costs else 0.0


def replay(kopt, kernel, table, seeds, policy="loop", branches=12, within=3.0, max_iterations=None, runner=subprocess.run,
           workdir=None):
    """Runs `kopt __search-replay` with --iterations 1, 2, ... until every seed's run has ended. Returns
    {seed: {"per_iteration": [(evaluations, best_found_ms)], "hit_evaluation", "end"}}."""
    n_rows = sum(1 for _ in open(table)) - 1
    max_iterations = max_iterations or (n_rows + branches - 1) // branches
    workdir = workdir or os.getcwd()
    first, runs = min(seeds), max(seeds) - min(seeds) + 1
    out = {s: {"per_iteration": [], "hit_evaluation": None, "end": "iterations", "baseline_ms": None} for s in seeds}
    for k in range(1, max_iterations + 1):
        path = os.path.join(workdir, f"replay_{policy}_{k}.json")
        argv = [kopt, "__search-replay", "--kernel", kernel, "--table", table, "--runs", str(runs), "--seed", str(first),
                "--iterations", str(k), "--branches", str(branches), "--within", str(within), "--policy", policy,
                "--json", path]
        r = runner(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({r.returncode}): {(r.stderr or '')[-400:]}")
        with open(path) as f:
            res = json.load(f)
        os.remove(path)
        live = False
        for o in out.values():
            o["baseline_ms"] = res["summary"].get("baseline_ms")
        for run in res["runs"]:
            s = run["seed"]
            if s not in out or out[s]["end"] != "iterations":
                continue
            o = out[s]
            if not o["per_iteration"] or run["evaluations"] != o["per_iteration"][-1][0]:
                o["per_iteration"].append((run["evaluations"], run["best_found_ms"]))
            o["hit_evaluation"] = run.get("hit_evaluation")
            if run["end"] != "iterations":
                o["end"] = run["end"]
            else:
                live = True
        if not live:
            break
    return out


def replay_series(result, eval_cost_s, target_ms, policy="loop"):
    """Points from replay(): one per iteration end, plus the exact first evaluation within the target."""
    runs = []
    for seed, r in sorted(result.items()):
        points, hit = [], r["hit_evaluation"]
        if r.get("baseline_ms"):
            points.append([1, round(eval_cost_s, 3), 0.0, r["baseline_ms"], "baseline"])
        prev_evals = 1
        for evals, best in r["per_iteration"]:
            if hit and prev_evals < hit < evals and best <= target_ms:
                points.append([hit, round(hit * eval_cost_s, 3), 0.0, best, ""])
            if not points or points[-1][0] != evals:
                points.append([evals, round(evals * eval_cost_s, 3), 0.0, best, ""])
            prev_evals = evals
        runs.append({"seed": seed, "end": r["end"], "hit_evaluation": hit, "points": points})
    return {"tool": "kopt", "strategy": f"default ({policy} policy)" if policy == "loop" else f"{policy} policy",
            "mode": "replay", "runs": runs}


def main_replay(a):
    dims, table, best = read_table(a.table)
    from kt_simulate import parse_seeds
    seeds = parse_seeds(a.seeds)
    cost = mean_eval_cost_s(a.cache) if a.cache else a.eval_cost_s
    t0 = time.time()
    res = replay(a.kopt, a.kernel, a.table, seeds, a.policy, a.branches, a.within)
    series = replay_series(res, cost, best * (1 + a.within / 100), a.policy)
    out = {"meta": {"kind": "peer_trajectories", "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "command": "scripts/perf/peers.py replay " + " ".join(sys.argv[2:]), "table": os.path.abspath(a.table),
                    "eval_cost_s": cost, "eval_cost_source": f"mean of {a.cache}" if a.cache else "--eval-cost-s"},
           "space_size": len(table), "best_ms": best, "series": [series]}
    write_json(a.out, out)
    hits = [r["hit_evaluation"] for r in series["runs"]]
    print(f"peers replay: {len(seeds)} seeds, policy {a.policy}: evaluations to within {a.within:g}%: {hits} "
          f"({time.time() - t0:.1f} s) -> {a.out}")
    return 0


def main_live(a):
    series = live_series(a.run_dirs, a.table, a.label)
    dims, table, best = read_table(a.table)
    out = {"meta": {"kind": "peer_trajectories", "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "command": "scripts/perf/peers.py kopt-runs " + " ".join(sys.argv[2:]), "table": os.path.abspath(a.table)},
           "space_size": len(table), "best_ms": best, "series": [series]}
    write_json(a.out, out)
    for r in series["runs"]:
        hit = next((p for p in r["points"] if p[3] is not None and p[3] <= best * 1.03), None)
        print(f"peers kopt-runs: {r['run_dir']}: {len(r['points'])} evaluations, times from {r['time_source']}, "
              f"within 3% {'at evaluation %d, %.1f s' % (hit[0], hit[1]) if hit else 'not reached'}; stop: {r['end']}")
    print(f"peers kopt-runs: -> {a.out}")
    return 0


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, separators=(",", ":"))
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit("kopt_curves.py is a module: use scripts/perf/peers.py replay | kopt-runs")
