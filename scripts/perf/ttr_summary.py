#!/usr/bin/env python3
"""One line per `kopt optimize` run for issue 36's time-to-result figures (docs/PERFORMANCE.md §12), from the
run's state.json: its walls (whole, gates, first candidate, champion), phase seconds, stop reason and iterations;
without --best, how many candidates it measured and its champion against the baseline;
with --best MS instead how many evaluations it made and the first one within --within percent of MS (the stored
sweep's best): its search second and the whole wall to it (the gates' wall plus that second), the figure the
issue's "within 3% in under 40 s" is read from. A run that never got there says "not reached".

    python3 scripts/perf/ttr_summary.py runs/NAME/kopt_runs/run_*/state.json --name NAME [--best 3.018464]
"""

import argparse
import json
import sys


def first_within(state, best_ms, within_pct):
    """The earliest search second of a correct measurement within within_pct of best_ms (None when none is)."""
    limit = best_ms * (1 + within_pct / 100)
    secs = [h.get("search_s") or 0.0 for h in state.get("history", [])
            if h.get("status", "ok") == "ok" and h.get("median_ms") and h["median_ms"] <= limit]
    return min(secs) if secs else None


def line(state, name, best_ms=None, within_pct=3.0):
    wall = state.get("wall") or {}
    out = f"{name}: wall " + str({k: round(v, 1) for k, v in wall.items() if v is not None})
    out += " phases " + str({k: round(v, 1) for k, v in (state.get("phase_seconds") or {}).items()})
    out += f" stop {state.get('stop_reason')} iterations {state.get('iterations_done')}"
    history = state.get("history", [])
    measured = [h for h in history if (h.get("candidate") or {}).get("id") != "baseline"]
    if best_ms is None:  # what a run with no sweep to hold it to measured (issue 35: never zero candidates)
        base = next((h.get("median_ms") for h in history if (h.get("candidate") or {}).get("id") == "baseline"), None)
        champ = state.get("champion") or {}
        cid, cms = (champ.get("candidate") or {}).get("id"), champ.get("median_ms")
        correct = sum(1 for h in measured if h.get("status", "ok") == "ok")
        out += f"; measured {len(measured)} candidate(s), {correct} correct; champion {cid}"
        if cms and base:
            out += f" at {cms:.4g} ms, {base / cms:.3f}x the baseline's {base:.4g} ms"
    if best_ms is not None:
        hit = first_within(state, best_ms, within_pct)
        out += f" evaluations {len(measured)}; within {within_pct:g}% of {best_ms} ms: "
        if hit is None:
            out += "not reached"
        elif wall.get("gates_s") is None:
            out += f"at search second {hit:.1f} (no gates wall)"
        else:
            out += f"at search second {hit:.1f} -> whole {wall['gates_s'] + hit:.1f} s"
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("state", help="a run's state.json")
    ap.add_argument("--name", default="run", help="the label the line starts with")
    ap.add_argument("--best", type=float, help="the sweep's best median (ms): report the first evaluation near it")
    ap.add_argument("--within", type=float, default=3.0, help="percent of --best (default 3)")
    a = ap.parse_args(argv)
    try:
        with open(a.state) as f:
            state = json.load(f)
    except (OSError, ValueError) as e:
        print(f"{a.name}: no readable state.json ({e})")
        return 1
    print(line(state, a.name, a.best, a.within))
    return 0


if __name__ == "__main__":
    sys.exit(main())
