#!/usr/bin/env bash
# Session 34, call 1 (issue 36): the landed build (e5dba88) on this session's machine, and Kernel Tuner beside it.
#  1. optimize vector_add 2^24 over fresh caches (the doctor's too), ncu and compute-sanitizer behind wrappers logging
#     each call; the run directory's logs and JSON kept (worker.log, golden_stream.log: where the gates' seconds go);
#     then warm;
#  2. sgemm_tunable 4096^3 seeds 1-5, fresh caches each, cut at CUT_S;
#  3. Kernel Tuner bayes_opt seeds 1-3 on the same space (scripts/perf/kt_sgemm.py; carry .whl), each step's wall.
set -u
export OUT=${OUT:-$PWD/check_out} KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1
T0=$(date +%s); TOTAL_S=${TOTAL_S:-540} CUT_S=${CUT_S:-47}
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
mkdir -p "$OUT/keep" runs /tmp/w
. scripts/device/lib.sh
K=$PWD/.carry/build/kopt
NCU=$(command -v ncu); CS=$(command -v compute-sanitizer)
pack() { tar czf "$OUT/s34_call1.tgz" -C "$OUT" keep; }
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
  [ "${2:-}" = full ] && tar czf "$OUT/keep/$1_rundir.tgz" --exclude='*.so' --exclude='*.bin' --exclude='*.npy' --exclude='*.ncu-rep' --exclude='*.cubin' -C "$d" . 2>/dev/null
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
  ( env "${envs[@]}" timeout -s INT "$limit" $K optimize "$@" --out-dir "runs/$name" </dev/null 2>&1 | stamp >"$OUT/keep/$name.log" )
  keep_run "$name" "${FULL:-}"; pack
}
VA="examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=16777216"
ST="examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096"
rm -rf ~/.cache/kopt/doctor
FULL=full opt va_cold 100 KOPT_CACHE_DIR=$PWD/runs/cache_va -- $VA
opt va_warm 60 KOPT_CACHE_DIR=$PWD/runs/cache_va -- $VA
for s in 1 2 3 4 5; do opt "sg_s$s" "$CUT_S" "KOPT_CACHE_DIR=$PWD/runs/cache_s$s" -- $ST --search-seed "$s"; done
# Kernel Tuner: its whole wall to within 3% = the step's wall - its tuning wall + the seconds into tuning of the first
# configuration within 3% of the sweep's best (kt_sgemm.py's costs; peers.py reads them).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
python3 -c 'import kernel_tuner, scipy, sklearn; print("kernel_tuner", kernel_tuner.__version__, "scipy", scipy.__version__, "sklearn", sklearn.__version__)'
mkdir -p runs/kt
for seed in 1 2 3; do
  [ "$(left)" -gt 70 ] || break
  t0=$(date +%s.%N)
  timeout 75 python3 scripts/perf/kt_sgemm.py --strategy bayes_opt --seed $seed --max-fevals 35 \
    --cache runs/kt/kt_bayes_opt_s${seed}_cache.json --out runs/kt/kt_bayes_opt_s$seed.json 2>&1 | tail -2
  echo "kt bayes_opt seed $seed step wall $(python3 -c "import time;print(round(time.time()-$t0,2))") s"
  cp runs/kt/kt_bayes_opt_s$seed.json "$OUT/keep/" 2>/dev/null; pack
done
pack; echo "=== end [$(( $(date +%s) - T0 )) s]"
