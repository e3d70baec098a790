#!/usr/bin/env bash
# Session 35, call 3: f8b5f1c without Kernel Tuner's PYTHONPATH (call 2's sgemm starts grew 6.6 -> 9.8 s after it):
# sgemm_tunable 4096^3 seeds SG_SEEDS (run: 3 4 5) cut at CUT_S (issue 36); then, time left, (issue 35) fla_chunk_local_cumsum's bench and sweep
# (35 points, single-point chunks: 28 are wrong, BT other than 64), cut at CB_SWEEP_LIMIT_S.
set -u
export OUT=${OUT:-$PWD/check_out} KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1
T0=$(date +%s); TOTAL_S=${TOTAL_S:-140} CUT_S=${CUT_S:-40}
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT .carry/build/COMMIT_OLD
mkdir -p "$OUT/keep" runs /tmp/w
. scripts/device/lib.sh
K=$PWD/.carry/build/kopt
NCU=$(command -v ncu); CS=$(command -v compute-sanitizer)
pack() { tar czf "$OUT/call_c.tgz" -C "$OUT" keep; }
left() { echo $(( TOTAL_S - ($(date +%s) - T0) )); }
for t in ncu:$NCU cs:$CS; do n=${t%%:*} real=${t#*:}
cat >/tmp/w/$n <<W
#!/usr/bin/env bash
t0=\$(date +%s.%N); "$real" "\$@"; rc=\$?
echo "\$(python3 -c "import time;print('%.3f %.3f'%(\$t0-$T0, time.time()-\$t0))") rc=\$rc $n \$*" | cut -c1-300 >>$OUT/keep/tools.log
exit \$rc
W
chmod +x /tmp/w/$n; done
export KOPT_NCU=/tmp/w/ncu KOPT_COMPUTE_SANITIZER=/tmp/w/cs
keep_run() {
  local d; d=$(ls -d runs/$1/kopt_runs/*_* 2>/dev/null | head -1); [ -n "$d" ] || return
  cp "$d/state.json" "$OUT/keep/$1_state.json"
  # The run's small JSON and logs only (never its golden data: s34 call 1 spent 240 s packing it).
  [ "${2:-}" = full ] && (cd "$d" && find . \( -path './golden*' -o -path './build' \) -prune -o -type f \( -name '*.json' -o -name '*.log' -o -name '*.txt' \) -size -256k -print \
    | tar czf "$OUT/keep/$1_rundir.tgz" -T - 2>/dev/null)
  python3 - "$d/state.json" "$1" <<'PY' 2>/dev/null
import json, sys
s = json.load(open(sys.argv[1])); w = s.get("wall") or {}; best = 3.018464
line = f"{sys.argv[2]}: wall " + str({k: round(v, 1) for k, v in w.items() if v is not None})
line += " phases " + str({k: round(v, 1) for k, v in (s.get("phase_seconds") or {}).items()})
line += f" stop {s.get('stop_reason')} iterations {s.get('iterations_done')}"
if "sg" in sys.argv[2]:
    hit = [h for h in s["history"] if h.get("median_ms") and h.get("status", "ok") == "ok" and h["median_ms"] <= best * 1.03]
    first = min((h.get("search_s", 0) for h in hit), default=None)
    line += f" evaluations {len(s['history']) - 1}; first within 3% at search_s {first}"
    if first is not None and w.get("gates_s") is not None: line += f" -> whole {w['gates_s'] + first:.1f} s"
print(line)
PY
}
opt() {  # opt NAME LIMIT ENV... -- ARGS
  local name=$1 limit=$2; shift 2; local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  [ "$(left)" -gt $((limit + 5)) ] || { echo "$name: not started ($(left) s left)"; return; }
  echo "--- $name at $(( $(date +%s) - T0 )) s" >>"$OUT/keep/tools.log"
  ( env "${envs[@]}" timeout -s INT "$limit" ${KB:-$K} optimize "$@" --out-dir "runs/$name" </dev/null 2>&1 | stamp >"$OUT/keep/$name.log" )
  keep_run "$name" "${FULL:-}"; pack
}
VA="examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=16777216"
ST="examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096"

for s in ${SG_SEEDS:-1 2 3 4 5}; do opt "sg_s$s" "$CUT_S" "KOPT_CACHE_DIR=$PWD/runs/cache_s$s" -- $ST --search-seed "$s"; done
pack
[ "$(left)" -gt 120 ] && OUT=$OUT/keep CB_STEPS="bench sweep" CB_CASES=off CB_TRITON_CHUNK=1 CB_SWEEP_LIMIT_S=$(( $(left) - 45 )) \
  CB_DEADLINE_S=$(( $(left) - 5 )) CB_MIN_KERNEL_S=60 bash scripts/device/check.sh corpus-bench fla_chunk_local_cumsum 2>&1 | tail -15
pack; echo "=== end [$(( $(date +%s) - T0 )) s]"
