#!/usr/bin/env bash
# Plain kernels (issue 15): for each of examples/plain/*, `kopt optimize` with default flags on the un-annotated
# kernel (it searches the space kopt derives), then an exhaustive sweep of the same derived space (`kopt annotate
# --write` and the existing sweep tooling on the annotated copy), and one line per kernel: distinct candidates
# kopt measured, kopt's champion ms, the sweep's best ms, and the sweep's time of kopt's champion point over the
# sweep's best (same measurement, so the ratio compares like with like; 1.00 = kopt found the best point).
#
# Prepare here: cmake --build build && bash scripts/device/carry_build.sh
# Run there:    bash scripts/device/plain_check.sh [NAME ...]      (carry [".carry/build"]; NAME: sgemm_tiled,
#               elementwise_templated, reduction_define, triton_literal; default all four)
# Budget: about 8-9 minutes on one H200. Each optimize is capped by `timeout -s INT $OPT_LIMIT_S` (default 80 s; an
# interrupted run still writes its summary); PLAIN_OPT_FLAGS adds flags (default none: kopt's defaults).
# Sizes make one call take >= ~0.02 ms (the kernel clock resolves that to < 1%) and are not multiples of the tiles
# (the kernels check their edges); smaller than before (2026-12-01 morning) so that golden data for the default
# workload matrix (3 cases x 3 seeds) takes seconds, not half a minute, and a candidate's checks (3 seeds at 3 cases)
# about a second, not ten (reduction_define at n = 67 M: 10 s each on 2026-12-01).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_check
cat .carry/build/COMMIT 2>/dev/null
OUT="${OUT:-$PWD/plain_out}"
mkdir -p "$OUT" runs/plain
OPT_LIMIT_S="${OPT_LIMIT_S:-80}"
PLAIN_OPT_FLAGS="${PLAIN_OPT_FLAGS:-}"
# Kernels whose sweep is repeated at every case of the run's workload matrix (kopt's default objective).
CASE_SWEEPS="${PLAIN_CASE_SWEEPS:-sgemm_tiled elementwise_templated}"
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"

dims_of() {
  case "$1" in
    sgemm_tiled) echo "--M=2000 --N=2000 --K=2000" ;;
    elementwise_templated) echo "--n=16777259" ;;
    reduction_define) echo "--n=16777259" ;;
    triton_literal) echo "--M=4000 --N=6000" ;;
  esac
}

# report NAME RUN_DIR SWEEP_CSV: the summary lines of one kernel.
report() {
  python3 - "$@" <<'PY'
import csv, json, sys
name, run, table = sys.argv[1:4]
try:
    st = json.load(open(f"{run}/state.json"))
except OSError:
    print(f"plain {name}: no optimize state ({run})"); sys.exit(0)
hist = st.get("history", [])
measured = {json.dumps(h["candidate"].get("params", {}), sort_keys=True) + json.dumps(h["candidate"].get("flags", []))
            for h in hist if h.get("median_ms") is not None}
champ = st.get("champion") or {}
champ_ms = champ.get("median_ms")
params = (champ.get("candidate") or {}).get("params", {})
rows = []
try:
    rows = [r for r in csv.DictReader(open(table)) if r.get("status") == "ok" and r.get("median_ms")]
except OSError:
    pass
best = min(rows, key=lambda r: float(r["median_ms"])) if rows else None
dims = [k for k in (rows[0].keys() if rows else []) if k not in ("index", "status", "median_ms", "ci95_low_ms", "ci95_high_ms", "tflops")]
methods = set((champ.get("candidate") or {}).get("methods", []))
def value(k):  # the champion's value of a sweep column: a param, or a method guard (KOPT_<ID>: 1 when the method is on)
    if k.startswith("KOPT_"):
        return "1" if k[5:].lower() in methods else "0"
    return str(params.get(k, ""))
mine = None
for r in rows:
    if all(value(k) == r[k] for k in dims):
        mine = float(r["median_ms"]); break
bms = float(best["median_ms"]) if best else None
fmt = lambda x: "n/a" if x is None else f"{x:.4f}"
ratio = f"{mine / bms:.3f}" if mine and bms else "n/a"
print(f"plain {name}: distinct candidates measured {len(measured)}; kopt champion {fmt(champ_ms)} ms "
      f"({st.get('stop_reason', '')}); sweep: {len(rows)} points, best {fmt(bms)} ms; "
      f"kopt's champion point in the sweep {fmt(mine)} ms; ratio {ratio}")
if best:
    print(f"plain {name}: sweep best point {json.dumps({k: best[k] for k in dims})}; kopt champion point {json.dumps({k: value(k) for k in dims})}")
# kopt's own objective over the workload matrix's cases: per point, G = exp(sum_i w_i ln(t_i(point) / t_i(default))),
# the weights normalised, from the sweeps at every case (the points measured ok at all of them).
import math, os
case_file = sys.argv[4] if len(sys.argv) > 4 else ""
if case_file and os.path.exists(case_file):
    tables = []
    for line in open(case_file):
        cname, w, path = line.split()
        try:
            t = {tuple(r[k] for k in dims): float(r["median_ms"]) for r in csv.DictReader(open(path))
                 if r.get("status") == "ok" and r.get("median_ms")}
        except OSError:
            t = {}
        tables.append((cname, float(w), t))
    if len(tables) > 1 and all(t for _, _, t in tables):
        keys = set.intersection(*(set(t) for _, _, t in tables))
        import re
        ann = open(sys.argv[5]).read() if len(sys.argv) > 5 and os.path.exists(sys.argv[5]) else ""
        dflt = dict(re.findall(r"@kopt param (\w+) .*?default=(\S+)", ann))
        defaults = tuple("0" if k.startswith("KOPT_") else dflt.get(k, "") for k in dims)
        base = min(keys, key=lambda k: sum(1 for a, b in zip(k, defaults) if a != b)) if keys else None
        wsum = sum(w for _, w, _ in tables)
        G = {k: math.exp(sum(w / wsum * math.log(t[k] / t[base]) for _, w, t in tables)) for k in keys}
        gbest = min(G, key=G.get)
        mine_k = tuple(value(k) for k in dims)
        gm = G.get(mine_k)
        print(f"plain {name}: over the {len(tables)} cases ({', '.join(c for c, _, _ in tables)}), {len(keys)} points: "
              f"best weighted geomean vs the default point {G[gbest]:.4f} at {json.dumps(dict(zip(dims, gbest)))}; "
              f"kopt's champion point {'n/a' if gm is None else f'{gm:.4f}'}; ratio "
              f"{'n/a' if gm is None else f'{gm / G[gbest]:.3f}'}")
PY
}

NAMES=("$@")
[ ${#NAMES[@]} -gt 0 ] || NAMES=(sgemm_tiled elementwise_templated reduction_define triton_literal)
for NAME in "${NAMES[@]}"; do
  EX="examples/plain/$NAME"
  KF="$EX/kernel.cu"; [ -f "$KF" ] || KF="$EX/kernel.py"
  DIMS="$(dims_of "$NAME")"
  W="runs/plain/$NAME"
  rm -rf "$W"; mkdir -p "$W"; : >"$W/case_tables.txt"
  $K annotate "$KF" --write "$W/annotated.${KF##*.}" --json "$W/derived.json" >"$W/annotate.txt" 2>&1
  cat "$W/annotate.txt"
  # shellcheck disable=SC2086
  step "optimize $NAME" $((OPT_LIMIT_S + 30)) timeout -s INT "$OPT_LIMIT_S" $K optimize "$KF" --ref "$EX/ref.py" $DIMS \
    $PLAIN_OPT_FLAGS --out-dir "$W/opt" </dev/null >"$OUT/optimize_$NAME.log" 2>&1
  tail -15 "$OUT/optimize_$NAME.log"
  RUN=$(ls -d "$W"/opt/kopt_runs/run_* 2>/dev/null | head -1)
  if [ "${KF##*.}" = "cu" ]; then
    step "sweep $NAME" 240 bash scripts/perf/search_efficiency.sh --kernel "$W/annotated.cu" --ref "$EX/ref.py" \
      --dims "$DIMS" --rounds 5 --runs 1 --chunk 48 --out "$W/sweep" >"$OUT/sweep_$NAME.log" 2>&1
    TABLE="$W/sweep/measurements.csv"
    # The same sweep at the run's other cases (its workload matrix, gates/cases.json: realised dims and weights),
    # so that kopt's objective (the weighted geometric mean over the cases) can be computed for every point too.
    if [[ " $CASE_SWEEPS " == *" $NAME "* ]] && [ -f "${RUN:-none}/gates/cases.json" ]; then
      python3 - "$RUN/gates/cases.json" >"$W/cases.txt" <<'PY'
import json, sys
for c in json.load(open(sys.argv[1]))["cases"]:
    dims = " ".join(f"--{k}={v}" for k, v in sorted(c["realised"].items()))
    print(f"{c['name']}\t{c['weight']}\t{'primary' if c.get('primary') else 'other'}\t{dims}")
PY
      while IFS=$'\t' read -r CNAME CW CP CDIMS; do
        [ "$CP" = primary ] && { echo "$CNAME $CW $TABLE" >>"$W/case_tables.txt"; continue; }
        step "sweep $NAME at $CNAME" 200 bash scripts/perf/search_efficiency.sh --kernel "$W/annotated.cu" --ref "$EX/ref.py" \
          --dims "$CDIMS" --rounds 5 --runs 1 --chunk 48 --out "$W/sweep_$CNAME" >"$OUT/sweep_${NAME}_$CNAME.log" 2>&1
        echo "$CNAME $CW $W/sweep_$CNAME/measurements.csv" >>"$W/case_tables.txt"
        cp "$W/sweep_$CNAME/measurements.csv" "$OUT/sweep_${NAME}_$CNAME.csv" 2>/dev/null
      done <"$W/cases.txt"
    fi
  else
    step "golden $NAME" 120 $K bench "$W/annotated.py" --ref "$EX/ref.py" $DIMS --seeds 1 --no-reference-timing \
      --measure-budget-s 0.3 --out-dir "$W/bench" >"$OUT/bench_$NAME.log" 2>&1 </dev/null
    G="$(find "$W/bench/kopt_runs" -maxdepth 2 -type d -name golden 2>/dev/null | head -1)"
    [ -n "$G" ] || { echo "plain $NAME: kopt bench made no golden data"; tail -20 "$OUT/bench_$NAME.log"; }
    step "sweep $NAME" 240 python3 scripts/device/plain_sweep_triton.py --kernel "$W/annotated.py" \
      --derivation "$W/derived.json" --golden "$G" --out "$W/sweep" >"$OUT/sweep_$NAME.log" 2>&1
    TABLE="$W/sweep/measurements.csv"
  fi
  tail -5 "$OUT/sweep_$NAME.log"
  report "$NAME" "${RUN:-none}" "$TABLE" "$W/case_tables.txt" "$W/annotated.${KF##*.}" | tee -a "$OUT/plain_report.txt"
  [ -n "${RUN:-}" ] && cp "$RUN/summary.md" "$OUT/summary_$NAME.md" 2>/dev/null
  cp "$TABLE" "$OUT/sweep_$NAME.csv" 2>/dev/null
  summ "plain/$NAME/opt"
done
echo "=== report"
cat "$OUT/plain_report.txt"
finish_check
