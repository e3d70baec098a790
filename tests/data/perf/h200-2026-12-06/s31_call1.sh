#!/usr/bin/env bash
# Session 31, call 1 (issue 36): the ceilings measured first, beside the harness's imports, with the probe prebuilt
# beside kopt (.carry/build/kopt_ceilings_probe_sm_90), by whole wall; the order before measured in the same call.
#  1. optimize vector_add 2^24 on the fresh machine (everything cold), then again (warm), default flags;
#  2. sgemm_tunable 4096^3, kopt's default optimize, search seeds 1-5, each over a fresh KOPT_CACHE_DIR, cut at CUT_S;
#  3. seeds 1-2 again with KOPT_PREBUILT_PROBE=off over fresh caches: the probe is then built (nvcc), so the ceilings
#     come where they came before (after the cases' golden data): the baseline of 2, in the same call;
#  4. Kernel Tuner 1.5.0 bayes_opt seed 1 on the same space (check.sh kt-live);
#  5. kopt bench vector_add: first, again, then second candidates -DITEMS=2,3,4.
# Every stderr line stamped with seconds from the command's start; each step skipped when TOTAL_S would be passed.
# Carry: .carry/build (kopt, the probe, COMMIT), .whl, this script as .carry/call1.sh.
set -u
export OUT=${OUT:-$PWD/check_out} KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1
T0=$(date +%s)
TOTAL_S=${TOTAL_S:-570} CUT_S=${CUT_S:-48}
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT; ls .carry/build
mkdir -p "$OUT/keep" runs
. scripts/device/lib.sh  # stamp
K=.carry/build/kopt
VA="examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=16777216"
ST="examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096"
pack() { tar czf "$OUT/s31_call1.tgz" -C "$OUT" keep; }  # after every step: a cut call still brings back what ended
left() { echo $(( TOTAL_S - ($(date +%s) - T0) )); }
state_line() {  # state_line NAME RUNS_DIR: state.json (wall, phases, ceilings' warnings) kept, one line said
  local d; d=$(ls -d "$2"/kopt_runs/*_* 2>/dev/null | head -1); [ -n "$d" ] || return
  cp "$d/state.json" "$OUT/keep/$1_state.json"; cp "$d/ceilings.json" "$OUT/keep/$1_ceilings.json" 2>/dev/null
  cp "$d/summary.md" "$OUT/keep/$1_summary.md" 2>/dev/null; cp "$d/golden_stream.log" "$OUT/keep/$1_golden_stream.log" 2>/dev/null
  python3 - "$OUT/keep/$1_state.json" "$OUT/keep/$1_ceilings.json" "$1" <<'PY' 2>/dev/null
import json, sys
s = json.load(open(sys.argv[1])); w = s.get("wall") or {}; best = 3.018464  # the H200 sweep's best (h200-2026-11-30)
line = f"{sys.argv[3]}: wall " + str({k: round(v, 1) for k, v in w.items() if v is not None})
line += " phases " + str({k: round(v, 1) for k, v in (s.get("phase_seconds") or {}).items()})
if "sg" in sys.argv[3]:
    hit = [h for h in s["history"] if h.get("median_ms") and h.get("status", "ok") == "ok" and h["median_ms"] <= best * 1.03]
    first = min((h.get("search_s", 0) for h in hit), default=None)
    line += f" evaluations {len(s['history']) - 1}; first within 3% of the sweep's best at search_s {first}"
    if first is not None and w.get("gates_s") is not None: line += f" -> whole {w['gates_s'] + first:.1f} s"
try:
    c = json.load(open(sys.argv[2])); line += " | ceilings warnings: " + "; ".join(c.get("warnings", []))[:300]
except Exception: pass
print(line)
PY
}
opt() {  # opt NAME LIMIT ENV... -- ARGS: one optimize, stamped log kept
  local name=$1 limit=$2; shift 2; local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  [ "$(left)" -gt $((limit + 5)) ] || { echo "$name: not started ($(left) s left)"; return; }
  # shellcheck disable=SC2086
  ( env "${envs[@]}" timeout -s INT "$limit" $K optimize "$@" --out-dir "runs/$name" </dev/null 2>&1 | stamp >"$OUT/keep/$name.log" )
  echo "[$(( $(date +%s) - T0 )) s] $(grep -h 'gates passed\|Whole wall' "$OUT/keep/$name.log" | tr -s ' ' | cut -c1-160 | tr '\n' ' ')"
  state_line "$name" "runs/$name"; pack
}
# 1. vector_add: the fresh machine's first run (Python, torch, nvcc, ncu cold; no caches), then warm.
opt va_cold 120 KOPT_CACHE_DIR=$PWD/runs/cache_va -- $VA
opt va_warm 60 KOPT_CACHE_DIR=$PWD/runs/cache_va -- $VA
# 2. sgemm seeds 1-5, fresh caches each (the machine warm).
for s in 1 2 3 4 5; do opt "sg_s$s" "$CUT_S" "KOPT_CACHE_DIR=$PWD/runs/cache_s$s" -- $ST --search-seed "$s"; done
# 3. the order before (the probe built by nvcc first, so the ceilings are not measured first), seeds 1-2.
for s in 1 2; do opt "sg_old_s$s" "$CUT_S" "KOPT_CACHE_DIR=$PWD/runs/cache_old_s$s" KOPT_PREBUILT_PROBE=off -- $ST --search-seed "$s"; done
# 4. Kernel Tuner bayes_opt seed 1, same space, same session.
if [ "$(left)" -gt 110 ]; then
  KT_LIMIT_S=90 KT_FEVALS=60 timeout 120 bash scripts/device/check.sh kt-live bayes_opt:1 2>&1 | tail -6
  cp runs/kt/*.json "$OUT/keep/" 2>/dev/null; pack
else echo "kt: not started ($(left) s left)"; fi
# 5. bench vector_add over va's caches: a first call (golden data cached by va_cold), again, then second candidates.
for i in 1 2 3 4; do
  [ "$(left)" -gt 25 ] || break
  flags=""; [ "$i" -gt 1 ] && flags="-DITEMS=$i"
  t=$(date +%s.%N)
  # shellcheck disable=SC2086
  KOPT_CACHE_DIR=$PWD/runs/cache_va timeout 60 $K bench $VA $flags --no-reference-timing --json "$OUT/keep/bench_$i.json" \
    --out-dir runs/bench </dev/null >/dev/null 2>&1
  echo "bench $i ($flags) rc=$? $(python3 -c "import time;print(round(time.time()-$t,2))") s: $(python3 -c "import json,sys;j=json.load(open(sys.argv[1]));print(j['outcome']['status'], j['outcome'].get('timing',{}).get('median_ms'), j.get('warm_worker',{}).get('used'))" "$OUT/keep/bench_$i.json" 2>/dev/null)"
done
pack && rm -rf "$OUT/keep"
echo "=== end [$(( $(date +%s) - T0 )) s]"
