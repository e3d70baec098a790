#!/usr/bin/env python3
"""The corpus benchmark's table (issue 35, item 4) from what `bash scripts/device/check.sh corpus-bench` brings back:
per kernel, kopt's default optimize against the exhaustive sweep of the same derived space and the project's own
choice; then the median whole wall to within 3%.

  corpus_table.py SOURCE... [--md FILE] [--json FILE] [--plot FILE.png] [--only NAME] [--lines] [--within 3]

SOURCE: corpus_bench.tgz, or the folder it unpacks to (corpus_bench/, or a folder holding it). Several SOURCEs, in
the order the calls ran: one row per kernel, the last source's that ran it (docs/PERFORMANCE.md's table gathers
several calls so). Per kernel the folder NAME/ holds kernel.json (dims, caps, each step's rc and seconds; `skipped`
when it did not run), state.json (the optimize run's), measurements.csv (the sweep: index, one column per derived
param, status, median_ms, ...), derived.json (`kopt annotate --json`: the params and their defaults), bench.json
(kopt bench of the kernel as it is); any may be missing (the row then says what it lacks).

How each figure is made:
* distinct candidates: the optimize history's measured entries (status ok, a median) other than the baseline,
  distinct by (params, methods, flags). Evaluated: every history entry other than the baseline, whatever its verdict
  (incorrect, failed to build, predicted infeasible by the search's feasibility model and built but not run); "measured
  zero candidates" means none was evaluated. A run that evaluated some but found none correct says so, with the
  sweep's count of correct points (a space whose only correct point is the project's has nothing else to find).
* sweep best: the fastest ok row of measurements.csv, among those timed without the launch (LAUNCH_FREE) where any
  was: a point the sweep could only time with its launch (s43: liger_dyt's autotuned default, its probe misread as work
  on another stream) is left out and the row says so. The project's choice: the sweep's row at every param's default
  (a derived param's default is the project's launch; `0` of a derived block is "the launcher's own value"); without
  a sweep, kopt bench's median, else the optimize baseline's.
* a candidate's time on the sweep's basis: the sweep's time of its point when it is one (no method, no compiler
  flag: kopt adds compiler-flag methods to every CUDA space, the sweep covers the params only), like for like;
  otherwise kopt's own median (a different process: a few % of noise between the two). `champion / best` is the
  champion's time on that basis over the sweep's best; within 3% when at most 1.03 (--within).
* speed-up vs the project's choice: the project's choice over the champion, both on that basis; `kopt's own`: the
  optimize baseline's median over its champion's (kopt's summary); `best`: the project's choice over the sweep's best.
* kopt's objective: where the optimize ran at several cases (its default workload matrix: the dims x1, x0.75 and x0.5
  weighted 0.5/0.3/0.2, kernel.json `cases`) and the sweep was repeated at each (measurements_CASE.csv), a point's
  objective is the weighted geometric mean of its times at the cases (a point correct at all of them), which is what
  kopt's races rank by (docs/GATES.md). The sweep's best is then also taken by that objective, and `within` (and the
  wall to within 3%) are judged by it: a champion chosen for the blend is held to the blend's best, and its ratio at
  the dims alone is shown beside it (`champion / best` at the dims; `objective`). Without the cases' sweeps, by the
  dims alone.
* wall to within 3%: the first history entry (by search_s, seconds after the gates) within 3% of the sweep's best,
  as seconds since the command started: the end of the gates (wall.gates_s; in a state.json without it,
  wall.first_candidate_s minus the earliest search_s plus cost_ms.cases of a candidate measured in the first iteration:
  when the first candidate's measurement ended) plus its search_s; the baseline counts (at the end of the gates).
  Also the search's own seconds (search_s). Whole wall: state.json wall.whole_s.
"""
import argparse
import csv
import json
import math
import os
import statistics
import sys
import tarfile
import tempfile

NOT_DIMS = {"index", "status", "median_ms", "ci95_low_ms", "ci95_high_ms", "tflops", "message", "timing_method", "basis"}


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


# Timing methods that leave the launch out of a sample (src/runner/timing_method.cpp): a sweep's point timed another
# way (its Python or host launch in the sample) is not compared with those timed without it.
LAUNCH_FREE = ("events_blocked", "events_behind_sleep")


def sweep_table(path, with_launch=None):
    """(dim names, {point tuple of str: median_ms}, number of rows) from measurements.csv; ({}, ...) without it.
    A point timed with its launch (timing_method not in LAUNCH_FREE) where others were timed without it is left out
    of the table; given a dict `with_launch`, it gets {point: timing_method} of those."""
    try:
        with open(path) as f:
            rows = list(csv.DictReader(f))
    except OSError:
        return [], {}, 0
    if not rows:
        return [], {}, 0
    dims = [k for k in rows[0] if k not in NOT_DIMS]
    ok = [r for r in rows if r.get("status") == "ok" and r.get("median_ms")]
    free = any(r.get("timing_method") in LAUNCH_FREE for r in ok)
    table = {}
    for r in ok:
        pt = tuple(str(r[k]) for k in dims)
        if free and r.get("timing_method") and r["timing_method"] not in LAUNCH_FREE:
            if with_launch is not None:
                with_launch[pt] = r["timing_method"]
            continue
        table[pt] = float(r["median_ms"])
    return dims, table, len(rows)


def objective_table(d, dims, table, cases, with_launch=None):
    """({point: weighted geometric mean ms} over the cases, None) or (None, why): the primary case's table is `table`
    (measurements.csv), each other case's measurements_NAME.csv; a point counts when it is ok at every case (and was
    timed without its launch: `with_launch` gets {point: case name} of those a case's sweep left out)."""
    if len(cases) < 2 or not table:
        return None, None
    per_case = []
    for c in cases:
        if c.get("primary"):
            per_case.append((float(c.get("weight", 1)), table))
            continue
        left = {}
        cd, ct, _ = sweep_table(os.path.join(d, "measurements_%s.csv" % c["name"]), left)
        if with_launch is not None:
            with_launch.update({pt: c["name"] for pt in left})
        if not ct:
            return None, "no sweep at case %s" % c["name"]
        if cd != dims:
            return None, "case %s's sweep has other columns" % c["name"]
        per_case.append((float(c.get("weight", 1)), ct))
    total = sum(w for w, _ in per_case)
    out = {}
    for pt in table:
        if all(pt in t for _, t in per_case):
            out[pt] = math.exp(sum(w * math.log(t[pt]) for w, t in per_case) / total)
    return out, None


def defaults_of(derived):
    return {p["name"]: p.get("default") for p in (derived or {}).get("params", []) if "name" in p}


def point_of(cand, dims, defaults):
    """The sweep point of a candidate (a tuple of str), or None when it is not one (a method or a compiler flag on)."""
    if cand.get("methods") or cand.get("flags") or any((cand.get("guards") or {}).values()):
        return None
    params = cand.get("params") or {}
    out = []
    for k in dims:
        v = params.get(k, defaults.get(k))
        if v is None:
            return None
        out.append(str(v))
    return tuple(out)


def key_of(cand):
    return json.dumps([cand.get("params") or {}, sorted(cand.get("methods") or []), cand.get("flags") or []],
                      sort_keys=True)


def gates_end_s(state):
    """Seconds from the command's start to the end of the gates (see the module's docstring); None if unknown."""
    wall = state.get("wall") or {}
    if wall.get("gates_s") is not None:  # recorded by kopt since 2026-12-06
        return wall["gates_s"]
    hist = state.get("history") or []
    first = wall.get("first_candidate_s")
    # Before: first_candidate_s is stamped when the first candidate's measurement ends, its other cases' checks
    # included (72aab4d, 2026-12-04: every run of this benchmark), and that candidate's search_s when its primary
    # measurement ended: the gates ended at first_candidate_s minus the earliest (search_s + cases_ms) of iteration 1.
    ends = [h.get("search_s", 0.0) + ((h.get("cost_ms") or {}).get("cases") or 0.0) / 1000 for h in hist
            if h.get("iteration", 0) >= 1 and ((h.get("cost_ms") or {}).get("measure") or 0) > 0]
    if first is not None and ends:
        return max(0.0, first - min(ends))
    champ = ((state.get("champion") or {}).get("candidate") or {}).get("id")
    if champ == "baseline" and wall.get("champion_s") is not None:
        return wall["champion_s"]
    return None


def kernel_row(d, within=3.0):
    name = os.path.basename(os.path.normpath(d))
    kj = load_json(os.path.join(d, "kernel.json")) or {}
    row = {"kernel": name, "dims": kj.get("dims", ""), "typical": kj.get("typical", ""),
           "skipped": kj.get("skipped"), "notes": []}
    if row["skipped"]:
        return row
    state = load_json(os.path.join(d, "state.json"))
    derived = load_json(os.path.join(d, "derived.json"))
    bench = load_json(os.path.join(d, "bench.json"))
    with_launch = {}
    dims, table, n_rows = sweep_table(os.path.join(d, "measurements.csv"), with_launch)
    for pt, method in sorted(with_launch.items()):
        row["notes"].append(f"the sweep timed {point_text(dict(zip(dims, pt)))} with its launch ({method}), the "
                            "others without: not compared (kopt's own median stands in where it is needed)")
    defaults = defaults_of(derived)
    row.update(space=n_rows, sweep_ok=len(table) + len(with_launch), sweep_dims=dims,
               optimize_rc=((kj.get("steps") or {}).get("optimize") or {}).get("rc"),
               optimize_cmd_s=((kj.get("steps") or {}).get("optimize") or {}).get("s"))
    best_pt = min(table, key=table.get) if table else None
    best = table[best_pt] if best_pt else None
    row["sweep_best_ms"] = best
    row["sweep_best_point"] = dict(zip(dims, best_pt)) if best_pt else None
    default_pt = tuple(str(defaults.get(k)) for k in dims) if dims else None
    project = table.get(default_pt) if default_pt else None
    row["project_basis"] = "sweep" if project else None
    if project is None and bench:
        project = (((bench.get("outcome") or {}).get("timing")) or {}).get("median_ms")
        row["project_basis"] = "kopt bench" if project else None
    if project is None and state:
        project = (state.get("baseline") or {}).get("median_ms")
        row["project_basis"] = "optimize baseline" if project else None
    row["project_ms"] = project
    if best and project:
        row["best_speedup"] = project / best
    if not state:
        row["notes"].append("no optimize state.json")
        return row

    def basis(cand, own_ms):
        pt = point_of(cand, dims, defaults) if dims else None
        if pt is not None and pt in table:
            return table[pt], "sweep"
        return own_ms, "kopt"

    hist = [h for h in state.get("history") or [] if h.get("median_ms") is not None and h.get("status", "ok") == "ok"]
    row["distinct_candidates"] = len({key_of(h["candidate"]) for h in hist if h["candidate"].get("id") != "baseline"})
    row["measured"] = sum(1 for h in hist if h["candidate"].get("id") != "baseline")
    others = [h for h in state.get("history") or [] if h["candidate"].get("id") != "baseline"]
    row["evaluated"] = len(others)
    row["predicted_infeasible"] = sum(1 for h in others if h.get("predicted_infeasible"))
    row["not_correct"] = sum(1 for h in others if h.get("status", "ok") != "ok" and not h.get("predicted_infeasible"))
    row["unwritten"] = sum(1 for h in others if h.get("unwritten_fraction"))
    row["stop"] = state.get("stop_reason")
    champ = state.get("champion") or {}
    cc = champ.get("candidate") or {}
    row["champion_ms"] = champ.get("median_ms")
    row["champion_id"] = cc.get("id")
    row["champion_params"] = cc.get("params") or {}
    row["champion_methods"] = cc.get("methods") or []
    value, how = basis(cc, champ.get("median_ms"))
    row["champion_basis"] = how
    row["champion_value_ms"] = value
    if value and best:
        row["champion_over_best"] = value / best
        row["within"] = value / best <= 1 + within / 100
    if value and project:
        row["speedup"] = project / value
    base = (state.get("baseline") or {}).get("median_ms")
    if base and champ.get("median_ms"):
        row["kopt_speedup"] = base / champ["median_ms"]
    wall = state.get("wall") or {}
    row["whole_s"] = wall.get("whole_s")
    g = gates_end_s(state)
    row["gates_end_s"] = g
    if best:
        for h in sorted(hist, key=lambda h: h.get("search_s", 0.0)):
            v, _ = basis(h["candidate"], h["median_ms"])
            if v is not None and v / best <= 1 + within / 100:
                row["to_within_search_s"] = h.get("search_s", 0.0)
                row["to_within_s"] = None if g is None else g + h.get("search_s", 0.0)
                row["to_within_id"] = h["candidate"].get("id")
                break
    launch_at = {pt: "the dims" for pt in with_launch}  # where the sweep timed a point with its launch
    obj, why = objective_table(d, dims, table, kj.get("cases") or [], launch_at)
    if why:
        row["notes"].append("objective by the dims alone: " + why)
    if obj:
        ob_pt = min(obj, key=obj.get)
        o = {"cases": [{"name": c["name"], "weight": c.get("weight")} for c in kj["cases"]], "points": len(obj),
             "best_ms": obj[ob_pt], "best_point": dict(zip(dims, ob_pt))}
        cpt = point_of(cc, dims, defaults)
        if cpt is not None and cpt in obj:
            o["champion_ms"] = obj[cpt]
            o["champion_over_best"] = obj[cpt] / obj[ob_pt]
            row["within_dims"] = row.get("within")
            row["within"] = o["champion_over_best"] <= 1 + within / 100
        else:
            bare = point_of({"params": cc.get("params") or {}}, dims, defaults)
            extra = ""
            if bare in obj:
                o["params_point_over_best"] = obj[bare] / obj[ob_pt]
                extra = f" (its parameters without its methods: {o['params_point_over_best']:.3f} of the objective's best)"
            why_not = (f"the sweep timed its point with its launch at {launch_at[cpt]}" if cpt in launch_at else
                       "the champion is not a sweep point")
            row["notes"].append(why_not + ": judged at the dims alone" + extra)
        row["objective"] = o
        if "champion_ms" in o:
            row.pop("to_within_s", None), row.pop("to_within_search_s", None), row.pop("to_within_id", None)
            for h in sorted(hist, key=lambda h: h.get("search_s", 0.0)):
                hp = point_of(h["candidate"], dims, defaults)
                if hp in obj and obj[hp] / obj[ob_pt] <= 1 + within / 100:
                    row["to_within_search_s"] = h.get("search_s", 0.0)
                    row["to_within_s"] = None if g is None else g + h.get("search_s", 0.0)
                    row["to_within_id"] = h["candidate"].get("id")
                    break
    if row["evaluated"] == 0:
        row["notes"].append("measured zero candidates")
    elif row["distinct_candidates"] == 0:
        only = " (the sweep: only 1 correct point)" if len(table) == 1 else ""
        row["notes"].append(f"no other correct point: {row['not_correct']} measured and not correct, "
                            f"{row['predicted_infeasible']} predicted infeasible{only}")
    if row.get("optimize_rc") not in (None, 0):
        row["notes"].append(f"optimize exit {row['optimize_rc']}")
    return row


def fmt(x, spec=".4f", none="–"):
    return none if x is None else format(x, spec)


def point_text(p):
    return " ".join(f"{k}={v}" for k, v in (p or {}).items()) or "–"


def summary(rows, within=3.0):
    ran = [r for r in rows if not r.get("skipped") and r.get("whole_s") is not None]
    reached = [r["to_within_s"] for r in ran if r.get("to_within_s") is not None]
    judged = [r for r in ran if r.get("within") is not None]
    out = {"kernels": len(rows), "ran": len(ran), "skipped": [r["kernel"] for r in rows if r.get("skipped")],
           "judged": len(judged), "within": sum(1 for r in judged if r["within"]),
           "zero_candidates": [r["kernel"] for r in ran if r.get("evaluated") == 0],
           "reached": len(reached), "median_to_within_s": statistics.median(reached) if reached else None,
           "median_whole_s": statistics.median([r["whole_s"] for r in ran]) if ran else None}
    # The median wall to within 3% counting a kernel that never got there as its whole wall (an upper bound of
    # what the user waited without the answer): the figure the issue's target (under 60 s) is read against.
    both = [r["to_within_s"] if r.get("to_within_s") is not None else r["whole_s"] for r in ran]
    out["median_to_within_or_whole_s"] = statistics.median(both) if both else None
    return out


def evaluated_text(r):
    """The distinct correct candidates, and what else was evaluated when there was more."""
    d = fmt(r.get("distinct_candidates"), "d")
    extra = [f"{r[k]} {label}" for k, label in (("not_correct", "not correct"), ("predicted_infeasible", "predicted infeasible"))
             if r.get(k)]
    return d + (f" (+ {', '.join(extra)})" if extra else "")


def markdown(rows, s, within=3.0):
    w = f"{within:g}%"
    lines = [f"| kernel | dims | space (ok) | distinct candidates | stop | project's choice ms | sweep best ms (point) | "
             f"kopt champion ms (point) | champion / best | within {w} | speed-up vs the project's choice: kopt "
             f"(kopt's own) / sweep best | to within {w}: s from start (s after the gates) | whole wall s |",
             "| " + " | ".join(["---"] * 13) + " |"]
    for r in rows:
        if r.get("skipped"):
            lines.append(f"| {r['kernel']} | {r.get('dims') or '–'} | not run: {r['skipped']} |" + " |" * 10)
            continue
        reduced = r.get("dims") and r.get("typical") and r["dims"] != r["typical"]
        dims = (r.get("dims") or "–") + (f" (typical {r['typical']})" if reduced else "")
        champ_pt = point_text(r.get("champion_params")) + (" + " + ",".join(r["champion_methods"]) if r.get("champion_methods") else "")
        within_txt = "–" if r.get("within") is None else ("**yes**" if r["within"] else "no")
        ob = r.get("objective") or {}
        if ob.get("champion_over_best") is not None:
            within_txt += f" (objective {ob['champion_over_best']:.3f}, best {point_text(ob.get('best_point'))})"
        if r.get("champion_basis") == "kopt" and r.get("within") is not None:
            within_txt += " (kopt's time)"
        tw = "not reached" if r.get("to_within_search_s") is None and r.get("sweep_best_ms") else (
            f"{fmt(r.get('to_within_s'), '.1f')} ({fmt(r.get('to_within_search_s'), '.1f')})")
        notes = f" ({'; '.join(r['notes'])})" if r.get("notes") else ""
        lines.append(
            f"| {r['kernel']}{notes} | {dims} | {r.get('space', 0)} ({r.get('sweep_ok', 0)}) | "
            f"{evaluated_text(r)} | {r.get('stop') or '–'} | {fmt(r.get('project_ms'))} | "
            f"{fmt(r.get('sweep_best_ms'))} ({point_text(r.get('sweep_best_point'))}) | "
            f"{fmt(r.get('champion_ms'))} ({champ_pt}) | {fmt(r.get('champion_over_best'), '.3f')} | {within_txt} | "
            f"{fmt(r.get('speedup'), '.2f')}x ({fmt(r.get('kopt_speedup'), '.2f')}x) / {fmt(r.get('best_speedup'), '.2f')}x | "
            f"{tw} | {fmt(r.get('whole_s'), '.1f')} |")
    lines.append("")
    lines.append(f"Kernels run: {s['ran']} of {s['kernels']}" + (f" (not run: {', '.join(s['skipped'])})" if s["skipped"] else "")
                 + f"; champion within {w} of the sweep's best: **{s['within']} of {s['judged']}**; runs that measured"
                 f" zero candidates: {len(s['zero_candidates'])}" + (f" ({', '.join(s['zero_candidates'])})" if s["zero_candidates"] else "") + ".")
    lines.append(f"Median wall to within {w} (from the command's start): **{fmt(s['median_to_within_s'], '.1f')} s** over the "
                 f"{s['reached']} kernels that got there; {fmt(s['median_to_within_or_whole_s'], '.1f')} s counting a kernel that "
                 f"did not as its whole wall; median whole wall {fmt(s['median_whole_s'], '.1f')} s.")
    return "\n".join(lines) + "\n"


def judged_ratio(row):
    """The ratio a row's `within` was judged by: the champion's over the best by kopt's objective over its cases where
    the sweep was repeated at each (the champion a sweep point), else at the dims alone."""
    ob = (row.get("objective") or {}).get("champion_over_best")
    return ob if ob is not None else row.get("champion_over_best")


def plot(rows, path, within=3.0):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("corpus_table: matplotlib is not installed: no plot (pip install matplotlib)", file=sys.stderr)
        return False
    ran = [r for r in rows if not r.get("skipped") and r.get("whole_s") is not None]
    if not ran:
        return False
    names = [r["kernel"] for r in ran]
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 0.5 * len(ran) + 2), sharey=True)
    ys = list(range(len(ran)))
    # The bar is what `within` was judged by (the objective where the cases were swept); a tick marks the ratio at
    # the dims alone where that differs (a champion chosen for the blend may be slower at the dims).
    judged = [judged_ratio(r) or 0 for r in ran]
    a.barh(ys, judged, color=["tab:green" if r.get("within") else "tab:red" for r in ran])
    dims_only = [(y, r["champion_over_best"]) for y, r, j in zip(ys, ran, judged)
                 if r.get("champion_over_best") and abs(r["champion_over_best"] - j) > 1e-3]
    if dims_only:
        a.plot([v for _, v in dims_only], [y for y, _ in dims_only], "k|", ms=14, label="at the dims alone")
    a.axvline(1 + within / 100, color="k", ls="--", lw=1, label=f"{within:g}% of the sweep's best")
    every = [v for v in judged if v] + [v for _, v in dims_only]
    a.set_xlim(min(every + [1.0]) * 0.98, max(every + [1 + within / 100]) * 1.02)
    a.set_yticks(ys, names)
    a.set_xlabel("kopt's champion / the sweep's best (by kopt's objective over its cases where swept)")
    a.legend(loc="lower right", fontsize=8)
    b.barh([y + 0.2 for y in ys], [r["whole_s"] for r in ran], height=0.4, color="tab:gray", label="whole wall")
    b.barh([y - 0.2 for y in ys], [r.get("to_within_s") or 0 for r in ran], height=0.4, color="tab:blue",
           label=f"to within {within:g}% (0: not reached)")
    b.set_xlabel("seconds from the command's start")
    b.legend(loc="lower right", fontsize=8)
    a.invert_yaxis()
    fig.suptitle("kopt optimize (default flags) against the exhaustive sweep of its derived space, corpus kernels")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def find_root(path, tmp):
    """The folder holding one folder per kernel."""
    if not os.path.exists(path):
        raise SystemExit(f"corpus_table: {path}: no such file or folder (give corpus-bench's corpus_bench.tgz or its folder)")
    if os.path.isfile(path):
        with tarfile.open(path) as t:
            if hasattr(tarfile, "data_filter"):
                t.extractall(tmp, filter="data")
            else:
                t.extractall(tmp)
        path = tmp
    for cand in (path, os.path.join(path, "corpus_bench")):
        if os.path.isdir(cand) and any(os.path.isfile(os.path.join(cand, e, "kernel.json")) for e in os.listdir(cand)):
            return cand
    raise SystemExit(f"corpus_table: no kernel folders (NAME/kernel.json) in {path}")


def rows_of_sources(sources, within=3.0, only=()):
    """The rows of one or more corpus-bench outputs, in the order the kernels first ran; a kernel run in several takes
    the row of the last source that ran it (not skipped there): a later call's run supersedes an earlier one's. Also
    each source's run.json (those that have one)."""
    rows, order, runs = {}, [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i, src in enumerate(sources):
            root = find_root(src, os.path.join(tmp, str(i)))
            run = load_json(os.path.join(root, "run.json"))
            if run:
                runs.append(run)
            names = [e for e in sorted(os.listdir(root)) if os.path.isfile(os.path.join(root, e, "kernel.json"))]
            names.sort(key=lambda n: (load_json(os.path.join(root, n, "kernel.json")) or {}).get("started_s", 1e9))
            for n in names:
                if only and n not in only:
                    continue
                row = kernel_row(os.path.join(root, n), within)
                if n not in rows:
                    order.append(n)
                if n not in rows or not row.get("skipped") or rows[n].get("skipped"):
                    rows[n] = row
    return [rows[n] for n in order], runs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source", nargs="+", help="a corpus-bench output (folder or tgz); several: each kernel's row from the "
                    "last one that ran it")
    ap.add_argument("--md", help="write the markdown table here (default: stdout)")
    ap.add_argument("--json", help="write the rows and the summary as JSON here")
    ap.add_argument("--plot", help="write a PNG (needs matplotlib; skipped without it)")
    ap.add_argument("--only", action="append", default=[], help="only this kernel (repeatable)")
    ap.add_argument("--lines", action="store_true", help="one line per kernel instead of the table")
    ap.add_argument("--within", type=float, default=3.0, help="percent of the sweep's best (default 3)")
    a = ap.parse_args(argv)
    rows, runs = rows_of_sources(a.source, a.within, a.only)
    s = summary(rows, a.within)
    if a.lines:
        for r in rows:
            if r.get("skipped"):
                print(f"corpus {r['kernel']}: not run ({r['skipped']})")
                continue
            print(f"corpus {r['kernel']}: {fmt(r.get('distinct_candidates'), 'd')} distinct candidates, stop {r.get('stop')}; "
                  f"champion {fmt(r.get('champion_ms'))} ms, on the sweep's basis {fmt(r.get('champion_value_ms'))} "
                  f"({r.get('champion_basis')}); sweep best {fmt(r.get('sweep_best_ms'))} of {r.get('sweep_ok', 0)} ok; "
                  f"ratio {fmt(r.get('champion_over_best'), '.3f')}"
                  + (f" (objective over {len(r['objective']['cases'])} cases {fmt(r['objective'].get('champion_over_best'), '.3f')})"
                     if r.get("objective") else "") + f"; project's choice {fmt(r.get('project_ms'))} "
                  f"({r.get('project_basis')}); to within {a.within:g}% {fmt(r.get('to_within_s'), '.1f')} s; "
                  f"whole {fmt(r.get('whole_s'), '.1f')} s" + (f"; {'; '.join(r['notes'])}" if r["notes"] else ""))
        return 0
    text = markdown(rows, s, a.within)
    for run in runs:
        text += (f"\nRun: {run.get('date', '?')}, {run.get('gpu', '?')}, kopt {run.get('commit', '?')}, "
                 f"whole call {fmt(run.get('whole_s'), '.0f')} s.\n")
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    print(text, end="")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"meta": {"kind": "corpus_table", "run": runs[-1] if runs else {}, "runs": runs}, "summary": s, "rows": rows}, f, indent=1)
    if a.plot:
        plot(rows, a.plot, a.within)
    return 0


if __name__ == "__main__":
    sys.exit(main())
