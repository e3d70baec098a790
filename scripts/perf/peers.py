#!/usr/bin/env python3
"""kopt and its peers side by side on one exhaustively measured search space (issue 16, docs/PERFORMANCE.md
"Peers"): best-so-far against evaluations and against wall seconds, median over seeds.

  peers.py cache      MEASUREMENTS.csv --kernel K.cu --kernel-name NAME --problem-size P --out CACHE.json [...]
                      the Kernel Tuner cachefile of the measured table (kt_cache.py --help)
  peers.py simulate   CACHE.json --kernel K.cu [--strategies ...] [--seeds 1-10] --out SIM.json
                      Kernel Tuner's strategies in its simulation mode, no GPU (kt_simulate.py --help)
  peers.py replay     --table MEASUREMENTS.csv --kernel K.cu [--kopt BIN] [--seeds 1-10] [--cache CACHE.json] --out R.json
                      kopt's search replayed against the table, no GPU (kopt __search-replay)
  peers.py kopt-runs  RUN_DIR... --table MEASUREMENTS.csv --out LIVE.json
                      kopt's live runs (one `kopt optimize` run directory per seed)
  peers.py kt-live    KT_LIVE.json... --table MEASUREMENTS.csv --out MERGED.json
                      live Kernel Tuner runs (kt_sgemm.py outputs, or files that merged them) as one series per
                      strategy, each configuration valued on the table as kopt's live runs are (its own timing kept)
  peers.py calibrate  --live KT_LIVE.json --cache CACHE.json --kernel K.cu [--derive ...]
                      a live Kernel Tuner run (kt_sgemm.py) against the simulation of the same strategy and seed
  peers.py report     --table MEASUREMENTS.csv (--sweep DIR | --sweep-report REPORT.txt) TRAJECTORIES.json...
                      [--within 3] [--md OUT.md] [--figure OUT.svg|png] [--title T] [--kt-cost-from KT_LIVE.json]
                      the table (markdown) and the figure (matplotlib, optional)

Every trajectories file (simulate, replay, kopt-runs, kt_sgemm.py) holds "series": [{tool, strategy, mode,
runs: [{seed, end, points: [[evaluation, wall_s, overhead_s, ms, key], ...]}]}]; a point is one configuration
evaluated for the first time, ms null when it failed. The report's figures per series:
  * within W% (runs): how many seeds measured a configuration within W% of the exhaustive best;
  * evaluations / seconds to within W%: the median over seeds (nearest rank, a seed that never got there
    counting as infinite, so "not reached" when half of them or more did not) and the range over those that did;
  * seconds are simulated for Kernel Tuner (the table's compile and measurement seconds per configuration plus
    Kernel Tuner's own overhead on the machine that ran the simulation; with --kt-cost-from, also at the median
    cost of one evaluation in a live Kernel Tuner run, plus the same overhead), modelled for a replay
    (evaluations x the mean cost of one), and measured for live runs (from the end of the gates, kopt; from the
    start of tune_kernel, Kernel Tuner);
  * % of the exhaustive sweep: those seconds over the sweep's total wall (compile + golden data + measurement);
  * final best: the median over seeds of the best found, as % above the exhaustive best.
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kopt_curves  # noqa: E402
import kt_cache  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# --- the exhaustive sweep as a series ----------------------------------------------------------------------

def exhaustive_series(table_path, sweep=None, sweep_report=None):
    """The sweep in its measurement order (the table's index order): every configuration compiled first (all in
    parallel), the golden data made once, then measured one after the other. Returns (series, total_wall_s)."""
    import csv
    with open(table_path, newline="") as f:
        rows = list(csv.DictReader(f))
    n = len(rows)
    report = sweep_report or (os.path.join(sweep, "report.txt") if sweep else None)
    if not report or not os.path.exists(report):
        raise ValueError("the exhaustive sweep's stage times need --sweep DIR (with report.txt) or --sweep-report")
    compile_s, golden_s, measure_s, _ = kt_cache.read_report_stages(report)
    per = [measure_s / n] * n
    if sweep:
        costs = kt_cache.sweep_costs(sweep, n)
        if all("measure_ms" in costs[i] for i in range(n)):
            per = [costs[i]["measure_ms"] / 1000 for i in range(n)]
    fixed = {"index", "status", "median_ms", "ci95_low_ms", "ci95_high_ms", "tflops"}
    dims = [k for k in rows[0] if k not in fixed]
    points, wall = [], compile_s + golden_s
    for i, r in enumerate(sorted(rows, key=lambda r: int(r["index"]))):
        wall += per[i]
        ms = float(r["median_ms"]) if r.get("status") == "ok" and r.get("median_ms") else None
        points.append([i + 1, round(wall, 3), 0.0, ms, ",".join(r[d] for d in dims)])
    total = compile_s + golden_s + measure_s
    return {"tool": "exhaustive sweep", "strategy": "every configuration", "mode": "measured",
            "runs": [{"seed": None, "end": "space exhausted", "points": points}]}, total


# --- figures per run and per series --------------------------------------------------------------------------

def run_stats(points, target_ms):
    """(evaluations to target or None, seconds to target or None, best ms or None, evaluations, seconds)."""
    best = None
    hit_e = hit_s = None
    for e, s, _, ms, _ in points:
        if ms is not None and (best is None or ms < best):
            best = ms
        if hit_e is None and best is not None and best <= target_ms:
            hit_e, hit_s = e, s
    last = points[-1] if points else [0, 0.0]
    return hit_e, hit_s, best, last[0], last[1]


def nearest_rank_median(values):
    """Median by nearest rank over values where None means 'never': None when half or more are None."""
    keyed = sorted(values, key=lambda v: math.inf if v is None else v)
    return keyed[(len(keyed) + 1) // 2 - 1] if keyed else None


def series_stats(series, best_ms, within, exhaustive_wall_s=None):
    target = best_ms * (1 + within / 100)
    per = [run_stats(r["points"], target) for r in series["runs"]]
    hits_e = [p[0] for p in per]
    hits_s = [p[1] for p in per]
    reached = [p for p in per if p[0] is not None]
    finals = [p[2] for p in per if p[2] is not None]
    st = {"tool": series["tool"], "strategy": series["strategy"], "mode": series["mode"], "seeds": len(per),
          "reached": len(reached), "evals_median": nearest_rank_median(hits_e), "seconds_median": nearest_rank_median(hits_s),
          "evals_range": (min(p[0] for p in reached), max(p[0] for p in reached)) if reached else None,
          "seconds_range": (min(p[1] for p in reached), max(p[1] for p in reached)) if reached else None,
          "final_best_median_ms": nearest_rank_median(finals) if finals else None,
          "found_best": sum(1 for f in finals if f <= best_ms),
          "evals_used_median": nearest_rank_median([p[3] for p in per]),
          "seconds_used_median": nearest_rank_median([p[4] for p in per])}
    if exhaustive_wall_s and st["seconds_median"] is not None:
        st["share_of_exhaustive"] = st["seconds_median"] / exhaustive_wall_s
    return st


TIME_BASIS = {"simulated": "simulated (table costs)", "replay": "modelled (table costs)", "live": "measured",
              "measured": "measured"}


def fmt_num(v, digits=0):
    if v is None:
        return "not reached"
    return f"{v:.{digits}f}"


def markdown_table(stats, best_ms, within, exhaustive_wall_s):
    lines = [f"| tool | strategy | seconds | seeds within {within:g}% | evaluations to within {within:g}%: median [range] "
             f"| seconds to within {within:g}%: median [range] | share of the sweep's {exhaustive_wall_s:.0f} s "
             f"| final best: median (runs that found the best) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for st in stats:
        if st["mode"] == "measured" and st["tool"] == "exhaustive sweep":
            lines.append(f"| exhaustive sweep | every configuration | measured | 1 run | {st['evals_used_median']} (all; "
                         f"the best is known once all are measured) | {exhaustive_wall_s:.0f} | 100% | "
                         f"{best_ms:.4f} ms (the best) |")
            continue
        er = f" [{st['evals_range'][0]}–{st['evals_range'][1]}]" if st["evals_range"] else ""
        sr = f" [{st['seconds_range'][0]:.0f}–{st['seconds_range'][1]:.0f}]" if st["seconds_range"] else ""
        share = f"{100 * st['share_of_exhaustive']:.0f}%" if st.get("share_of_exhaustive") is not None else "–"
        fb = st["final_best_median_ms"]
        fbs = f"{fb:.4f} ms ({100 * (fb / best_ms - 1):+.1f}%; {st['found_best']}/{st['seeds']})" if fb else "–"
        lines.append(f"| {st['tool']} | {st['strategy']} | {TIME_BASIS.get(st['mode'], st['mode'])} | "
                     f"{st['reached']}/{st['seeds']} | {fmt_num(st['evals_median'])}{er} | "
                     f"{fmt_num(st['seconds_median'])}{sr} | {share} | {fbs} |")
    return "\n".join(lines)


# --- the figure ----------------------------------------------------------------------------------------------

def best_so_far_on(points, xs, axis):
    """The run's best-so-far (ms) at each x of xs, along evaluations (axis 0) or seconds (axis 1); NaN before
    its first correct measurement; after its last point the run's final best."""
    out, best, j = [], math.nan, 0
    for x in xs:
        while j < len(points) and points[j][axis] <= x:
            ms = points[j][3]
            if ms is not None and (math.isnan(best) or ms < best):
                best = ms
            j += 1
        out.append(best)
    return out


def percentile(sorted_vals, q):
    if not sorted_vals:
        return math.nan
    pos = (len(sorted_vals) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


def band(series, xs, axis, best_ms):
    """Median, 25th and 75th percentile over runs of best-so-far / best at each x (NaN where any run has nothing
    yet: the curve starts once every run has a measurement)."""
    curves = [best_so_far_on(r["points"], xs, axis) for r in series["runs"] if r["points"]]
    med, lo, hi = [], [], []
    for k in range(len(xs)):
        col = [c[k] / best_ms for c in curves]
        if not col or any(math.isnan(v) for v in col):
            med.append(math.nan), lo.append(math.nan), hi.append(math.nan)
            continue
        col.sort()
        med.append(percentile(col, 0.5)), lo.append(percentile(col, 0.25)), hi.append(percentile(col, 0.75))
    return med, lo, hi


def plot(all_series, best_ms, within, exhaustive_wall_s, path, title, space_size):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("peers report: matplotlib is not installed, so no figure was drawn (pip install matplotlib; the "
              "table above does not need it)", file=sys.stderr)
        return False
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    max_wall = max(p[1] for s in all_series for r in s["runs"] for p in r["points"][-1:]) if all_series else 1
    xs_e = [float(x) for x in range(1, space_size + 1)]
    xs_s = [10 ** (math.log10(0.5) + k * (math.log10(max_wall * 1.05) - math.log10(0.5)) / 400) for k in range(401)]
    colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
    kopt_colours = ["#d62728", "#ff9896", "#7f0000"]  # the first kopt series red, earlier builds' lighter or darker
    ci = ki = 0
    for s in all_series:
        label = f"{s['tool']}: {s['strategy']}" + (f" ({s['mode']})" if s["tool"] != "exhaustive sweep" else "")
        if s["tool"] == "exhaustive sweep":
            style = dict(color="black", linestyle=":", linewidth=1.5)
        elif s["tool"] == "kopt":
            style = dict(color=kopt_colours[ki % len(kopt_colours)], linewidth=2.2 if ki == 0 else 1.8,
                         linestyle="-" if s["mode"] == "live" else "--")
            ki += 1
        else:
            style = dict(color=colours[ci % len(colours)], linewidth=1.4)
            ci += 1
        n_runs = len([r for r in s["runs"] if r["points"]])
        if n_runs > 1:
            label += f", median of {n_runs}"
        for ax, xs, axis in ((axes[0], xs_e, 0), (axes[1], xs_s, 1)):
            med, lo, hi = band(s, xs, axis, best_ms)
            ax.plot(xs, med, label=label if ax is axes[0] else None, **style)
            if n_runs > 1:
                ax.fill_between(xs, lo, hi, color=style["color"], alpha=0.12, linewidth=0)
    for ax in axes:
        ax.axhline(1 + within / 100, color="grey", linewidth=0.8, linestyle="--")
        ax.set_xscale("log")
        ax.grid(True, which="both", alpha=0.25)
    axes[0].text(1.1, 1 + within / 100 + 0.005, f"within {within:g}% of the best", color="grey", fontsize=8)
    axes[1].axvline(0.25 * exhaustive_wall_s, color="grey", linewidth=0.8)
    axes[1].text(0.25 * exhaustive_wall_s * 1.03, 1.55, "25% of the\nexhaustive sweep", color="grey", fontsize=8)
    axes[0].set_xlabel("evaluations (distinct configurations measured)")
    axes[1].set_xlabel("wall seconds from the start of the search")
    axes[0].set_ylabel("best so far / exhaustive best")
    axes[0].set_ylim(0.98, 1.7)
    axes[0].set_xlim(1, space_size)
    axes[0].legend(fontsize=7, loc="upper right", title="median over seeds; band: 25th to 75th percentile",
                   title_fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None} if path.endswith(".svg") else None)
    print(f"peers report: figure -> {path}")
    return True


# --- subcommands ---------------------------------------------------------------------------------------------

def load_series(paths):
    series = []
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        if "series" not in d:
            raise SystemExit(f"peers report: {p} has no 'series' (not a trajectories file)")
        series += d["series"]
    return series


def pick_for_plot(series, stats, wanted):
    """The series to draw: kopt's and the exhaustive sweep always; Kernel Tuner's named in `wanted` (default:
    random_sample, genetic_algorithm, bayes_opt and the best other one by median evaluations)."""
    chosen = []
    kt = [(s, st) for s, st in zip(series, stats) if s["tool"] == "Kernel Tuner"]
    if wanted:
        names = set(wanted)
    else:
        names = {"random_sample", "genetic_algorithm", "bayes_opt"}
        others = [(st["evals_median"] if st["evals_median"] is not None else math.inf, s["strategy"])
                  for s, st in kt if s["strategy"] not in names]
        if others:
            names.add(min(others)[1])
    for s, st in zip(series, stats):
        if s["tool"] != "Kernel Tuner" or (s["strategy"] in names and s["mode"] != "simulated at live cost"):
            chosen.append(s)
    return chosen


def live_eval_cost_s(path):
    """The median cost of one evaluation in a live Kernel Tuner run (kt_sgemm.py's costs_ms: compile, verification,
    benchmark and framework time), in seconds."""
    with open(path) as f:
        costs = json.load(f).get("costs_ms") or []
    if not costs:
        raise ValueError(f"{path} has no costs_ms (not a kt_sgemm.py output)")
    per = sorted(sum(c.get(k, 0) for k in ("compile_time", "verification_time", "benchmark_time", "framework_time"))
                 for c in costs)
    return percentile(per, 0.5) / 1000


def rescaled(series, eval_cost_s):
    """A simulated series re-timed at another cost per evaluation: wall = evaluations x cost + the strategy's own
    overhead, as recorded."""
    runs = [dict(r, points=[[p[0], round(p[0] * eval_cost_s + p[2], 3), p[2], p[3], p[4]] for p in r["points"]])
            for r in series["runs"]]
    return dict(series, mode="simulated at live cost", runs=runs)


def cmd_report(a):
    _, table, best_ms = kopt_curves.read_table(a.table)
    exh, exh_wall = exhaustive_series(a.table, a.sweep, a.sweep_report)
    series = [exh] + load_series(a.trajectories)
    if a.kt_cost_from:
        cost = live_eval_cost_s(a.kt_cost_from)
        TIME_BASIS["simulated at live cost"] = f"simulated (Kernel Tuner's live {cost:.2f} s per evaluation)"
        series += [rescaled(s, cost) for s in series if s["tool"] == "Kernel Tuner" and s["mode"] == "simulated"]
    stats = [series_stats(s, best_ms, a.within, exh_wall) for s in series]
    md = markdown_table(stats, best_ms, a.within, exh_wall)
    for s in series:  # live kopt runs: the whole run's wall too (gates included), and where the times came from
        totals = sorted(r["total_wall_s"] for r in s["runs"] if r.get("total_wall_s") is not None)
        if totals:
            sources = sorted({r.get("time_source", "?") for r in s["runs"]})
            md += (f"\n\n{s['tool']} {s['strategy']} ({s['mode']}): whole run including the gates, median "
                   f"{percentile(totals, 0.5):.0f} s [{totals[0]:.0f}–{totals[-1]:.0f}] over {len(totals)} runs; "
                   f"seconds to the target counted from the end of the gates ({', '.join(sources)}); stops: "
                   f"{', '.join(sorted({str(r.get('end')) for r in s['runs']}))}")
    print(md)
    if a.md:
        with open(a.md, "w") as f:
            f.write(md + "\n")
    if a.json:
        kopt_curves.write_json(a.json, {"best_ms": best_ms, "within_pct": a.within, "exhaustive_wall_s": exh_wall,
                                        "stats": stats})
    if a.figure:
        wanted = [s.strip() for s in a.plot_strategies.split(",")] if a.plot_strategies else None
        plot(pick_for_plot(series, stats, wanted), best_ms, a.within, exh_wall, a.figure, a.title or "", len(table))
    return 0


def kt_live_on_table(docs, table, dims):
    """Live Kernel Tuner series merged per strategy, each point's ms replaced by the table's figure for the same
    configuration (the exhaustive sweep's measurement, as kopt-runs does for kopt's live runs: one yardstick for
    both tools; Kernel Tuner's own timings differ, e.g. no L2 flush). A configuration the table lacks keeps its
    own figure and is counted. Each run keeps its own figures as `own_ms` (one per point). A point's key is Kernel
    Tuner's configuration in its tune_params order, which kt_sgemm.py takes from kopt's enumeration of the space, the
    table's column order, with derived parameters (block_size_x) after them: the first len(dims) values are the
    table's key (a different order would show as configurations not in the table)."""
    by, missing, seen = {}, 0, set()
    for d in docs:
        for sr in d.get("series") or []:
            if sr.get("tool") != "Kernel Tuner" or sr.get("mode") != "live":
                continue
            for r in sr["runs"]:
                if (sr["strategy"], r["seed"]) in seen:
                    raise ValueError(f"{sr['strategy']} seed {r['seed']} appears twice")
                seen.add((sr["strategy"], r["seed"]))
                pts, own = [], []
                for p in r["points"]:
                    key = tuple(int(v) for v in str(p[4]).split(",")[:len(dims)]) if p[4] else None
                    ms = p[3]
                    if ms is not None and key is not None:
                        if key in table and table[key] is not None:
                            ms = table[key]
                        else:
                            missing += 1
                    pts.append([p[0], p[1], p[2], ms, p[4]])
                    own.append(p[3])
                by.setdefault(sr["strategy"], []).append(dict(r, points=pts, own_ms=own))
    series = [{"tool": "Kernel Tuner", "strategy": st, "mode": "live", "valued_on": "the table",
               "runs": sorted(runs, key=lambda r: r["seed"])} for st, runs in sorted(by.items())]
    return series, missing


def cmd_kt_live(a):
    dims, table, best = kopt_curves.read_table(a.table)
    docs, costs, metas = [], [], []
    for path in a.live:
        with open(path) as f:
            d = json.load(f)
        if "series" not in d:
            raise ValueError(f"{path} has no 'series' (not a kt_sgemm.py output)")
        docs.append(d)
        costs += d.get("costs_ms") or []
        metas.append(d.get("meta", {}))
    series, missing = kt_live_on_table(docs, table, dims)
    if not series:
        raise ValueError("no live Kernel Tuner series in " + ", ".join(a.live))
    out = {"meta": {"kind": "peer_trajectories", "command": "scripts/perf/peers.py kt-live " + " ".join(sys.argv[2:]),
                    "table": os.path.abspath(a.table), "note": a.note or "",
                    "valued_on": "each configuration's figure in the table (Kernel Tuner's own in runs[].own_ms)",
                    "not_in_table": missing, "runs": [m for m in metas if m]},
           "space_size": len(table), "best_ms": best, "costs_ms": costs, "series": series}
    kopt_curves.write_json(a.out, out)
    for s in series:
        hits = []
        for r in s["runs"]:
            hit = next((p for p in r["points"] if p[3] is not None and p[3] <= best * 1.03), None)
            hits.append(f"seed {r['seed']}: " + (f"{hit[0]} / {hit[1]:.1f} s" if hit else "not reached"))
        print(f"peers kt-live: {s['strategy']}: {len(s['runs'])} runs; within 3% on the table: {'; '.join(hits)}")
    print(f"peers kt-live: {missing} configurations not in the table -> {a.out}")
    return 0


def cmd_calibrate(a):
    """A live Kernel Tuner run against its simulation: same configurations? same times? what each evaluation
    cost live, against the table's costs."""
    import kt_simulate
    with open(a.live) as f:
        live = json.load(f)
    meta = live["meta"]
    try:
        import kernel_tuner
        from kernel_tuner import tune_kernel
    except ImportError as e:
        raise SystemExit(f"peers calibrate: Kernel Tuner is not importable ({e})")
    header = kernel_tuner.util.read_cache(a.cache, open_cache=False)
    space = kt_simulate.check_space(header, a.kernel, kt_cache.parse_derive(a.derive))
    sim = kt_simulate.simulate_one(tune_kernel, header, space.restrictions, a.cache, meta["strategy"], meta["seed"],
                                   meta["max_fevals"], 0, 1000)
    lpts = live["series"][0]["runs"][0]["points"]
    spts = sim["points"]
    same = [p[4] for p in lpts] == [p[4] for p in spts[:len(lpts)]]
    table = {k: e for k, e in header["cache"].items()}
    ratios = sorted(p[3] / table[p[4]]["time"] for p in lpts if p[3] is not None and "time" in table.get(p[4], {}))
    costs = live.get("costs_ms") or []

    def med(xs):
        xs = sorted(xs)
        return xs[len(xs) // 2] if xs else math.nan
    lines = [f"calibration: {meta['strategy']}, seed {meta['seed']}, {len(lpts)} evaluations live on {meta.get('device_name')}"
             f" ({meta.get('lang')} backend, Kernel Tuner {meta.get('kernel_tuner')})",
             f"  same configurations, same order as the simulation: {'yes' if same else 'NO'}"]
    if not same:
        for i, (lp, sp) in enumerate(zip(lpts, spts)):
            if lp[4] != sp[4]:
                lines.append(f"    first difference at evaluation {i + 1}: live {lp[4]}, simulated {sp[4]}")
                break
    if ratios:
        lines.append(f"  live time / table median_ms: median {percentile(ratios, 0.5):.3f}, range "
                     f"{ratios[0]:.3f}–{ratios[-1]:.3f} ({len(ratios)} configurations; Kernel Tuner: mean of its "
                     "iterations, no L2 flush; kopt: median after an L2 flush)")
    if costs:
        for k in ("compile_time", "verification_time", "benchmark_time", "framework_time", "strategy_time"):
            lines.append(f"  live {k:<18} median {med([c.get(k, 0) for c in costs]):9.1f} ms per evaluation")
    tab_costs = [table[p[4]].get("compile_time", 0) + table[p[4]].get("benchmark_time", 0) for p in lpts if p[4] in table]
    live_wall = lpts[-1][1] if lpts else 0
    sim_wall = spts[len(lpts) - 1][1] if len(spts) >= len(lpts) and lpts else math.nan
    lines.append(f"  wall for these {len(lpts)} evaluations: live {live_wall:.1f} s, simulated {sim_wall:.1f} s "
                 f"(table: median {med(tab_costs):.0f} ms per evaluation)")
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    return 0 if same else 2


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    cmd, rest = argv[0], argv[1:]
    if cmd == "cache":
        return kt_cache.main(rest)
    if cmd == "simulate":
        import kt_simulate
        return kt_simulate.main(rest)
    ap = argparse.ArgumentParser(prog=f"peers.py {cmd}")
    if cmd == "replay":
        ap.add_argument("--table", required=True)
        ap.add_argument("--kernel", required=True)
        ap.add_argument("--kopt", default=None, help="the kopt binary (default $KOPT_BIN, build/kopt, .carry/build/kopt)")
        ap.add_argument("--seeds", default="1-10")
        ap.add_argument("--policy", default="loop", choices=["loop", "free"])
        ap.add_argument("--branches", type=int, default=12, help="candidates per iteration (kopt optimize's default for the built-in generator)")
        ap.add_argument("--within", type=float, default=3.0)
        ap.add_argument("--cache", help="a Kernel Tuner cachefile: the mean cost of one evaluation is taken from it")
        ap.add_argument("--eval-cost-s", type=float, default=0.0, help="else the cost of one evaluation, in seconds")
        ap.add_argument("--out", required=True)
        a = ap.parse_args(rest)
        a.kopt = a.kopt or next((c for c in (os.environ.get("KOPT_BIN"), os.path.join(ROOT, "build", "kopt"),
                                             os.path.join(ROOT, ".carry", "build", "kopt")) if c and os.access(c, os.X_OK)), None)
        if not a.kopt:
            raise SystemExit("peers replay: no kopt binary (build it, or give --kopt / KOPT_BIN)")
        return kopt_curves.main_replay(a)
    if cmd == "kopt-runs":
        ap.add_argument("run_dirs", nargs="+", help="kopt optimize run directories, or folders holding kopt_runs/run_*")
        ap.add_argument("--table", required=True)
        ap.add_argument("--label", default="default")
        ap.add_argument("--out", required=True)
        a = ap.parse_args(rest)
        try:
            return kopt_curves.main_live(a)
        except ValueError as e:
            raise SystemExit(f"peers kopt-runs: {e}")
    if cmd == "kt-live":
        ap.add_argument("live", nargs="+", help="kt_sgemm.py outputs (or files merging them)")
        ap.add_argument("--table", required=True)
        ap.add_argument("--note", help="where and when they ran")
        ap.add_argument("--out", required=True)
        a = ap.parse_args(rest)
        try:
            return cmd_kt_live(a)
        except (ValueError, OSError) as e:
            raise SystemExit(f"peers kt-live: {e}")
    if cmd == "calibrate":
        ap.add_argument("--live", required=True, help="the JSON kt_sgemm.py wrote")
        ap.add_argument("--cache", required=True, help="the cachefile made from the same session's table")
        ap.add_argument("--kernel", required=True)
        ap.add_argument("--derive", action="append", metavar="NAME=EXPR")
        ap.add_argument("--out")
        a = ap.parse_args(rest)
        kt_simulate_reexec()
        return cmd_calibrate(a)
    if cmd == "report":
        ap.add_argument("trajectories", nargs="*", help="trajectories files (simulate, replay, kopt-runs, kt_sgemm.py)")
        ap.add_argument("--table", required=True)
        ap.add_argument("--sweep", help="the sweep directory (report.txt, and costs.csv when it has one)")
        ap.add_argument("--sweep-report", help="else the sweep's report.txt")
        ap.add_argument("--within", type=float, default=3.0)
        ap.add_argument("--md", help="also write the table here")
        ap.add_argument("--json", help="also write the figures as JSON")
        ap.add_argument("--figure", help="draw the figure here (.svg or .png; needs matplotlib)")
        ap.add_argument("--plot-strategies", help="Kernel Tuner strategies to draw (default: random_sample, "
                        "genetic_algorithm, bayes_opt and the best other)")
        ap.add_argument("--title", default="")
        ap.add_argument("--kt-cost-from", metavar="KT_LIVE.json", help="also re-time every simulated Kernel Tuner series "
                        "at the median cost of one evaluation in this live run (kt_sgemm.py)")
        a = ap.parse_args(rest)
        if not (a.sweep or a.sweep_report):
            raise SystemExit("peers report: give --sweep DIR or --sweep-report REPORT.txt (the exhaustive sweep's stage times)")
        try:
            return cmd_report(a)
        except ValueError as e:
            raise SystemExit(f"peers report: {e}")
    raise SystemExit(f"peers.py: unknown subcommand '{cmd}' (see --help)")


def kt_simulate_reexec():
    import kt_simulate
    kt_simulate.reexec_with_fixed_hash_seed()


if __name__ == "__main__":
    sys.exit(main())
