#!/usr/bin/env bash
# Session 35, call 2 (issue 36): the landed build (3701b90, kopt_old) and this session's (kopt: the counters probe
# beside gate 2, the held-out shapes' 3 % CI target, the compute-bound profile guess) side by side on one machine:
# optimize vector_add 2^24 with every cache cold (the doctor's too), old, new, old, new; new warm; Kernel Tuner
# bayes_opt seeds 1-5 (scripts/perf/kt_sgemm.py; carry .whl); sgemm_tunable 4096^3 seeds 1-5 (new) cut at CUT_S;
# kopt bench second candidates; the hostile vadd kernels' verdicts.
set -u
export OUT=${OUT:-$PWD/check_out} KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1
T0=$(date +%s); TOTAL_S=${TOTAL_S:-565} CUT_S=${CUT_S:-47}
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT .carry/build/COMMIT_OLD
mkdir -p "$OUT/keep" runs /tmp/w
. scripts/device/lib.sh
K=$PWD/.carry/build/kopt
NCU=$(command -v ncu); CS=$(command -v compute-sanitizer)
pack() { tar czf "$OUT/call_b.tgz" -C "$OUT" keep; }
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

KO=$PWD/.carry/build/kopt_old
for i in 1 2; do
  rm -rf ~/.cache/kopt/doctor
  KB=$KO FULL=full opt va_old$i 100 KOPT_CACHE_DIR=$PWD/runs/cache_vo$i -- $VA
  rm -rf ~/.cache/kopt/doctor
  FULL=full opt va_new$i 100 KOPT_CACHE_DIR=$PWD/runs/cache_vn$i -- $VA
done
opt va_warm 60 KOPT_CACHE_DIR=$PWD/runs/cache_vn2 -- $VA
# Kernel Tuner: its whole wall to within 3% = the step's wall - its tuning wall + the seconds into tuning of the first
# configuration within 3% of the sweep's best (kt_sgemm.py's costs; peers.py reads them).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
mkdir -p runs/kt
for seed in 1 2 3 4 5; do
  [ "$(left)" -gt 330 ] || break
  t0=$(date +%s.%N)
  timeout 40 python3 scripts/perf/kt_sgemm.py --strategy bayes_opt --seed $seed --max-fevals 30 \
    --cache runs/kt/kt_bayes_opt_s${seed}_cache.json --out runs/kt/kt_bayes_opt_s$seed.json 2>&1 | tail -1
  echo "kt bayes_opt seed $seed step wall $(python3 -c "import time;print(round(time.time()-$t0,2))") s"
  cp runs/kt/kt_bayes_opt_s$seed.json "$OUT/keep/" 2>/dev/null; pack
done
for s in 1 2 3 4 5; do opt "sg_s$s" "$CUT_S" "KOPT_CACHE_DIR=$PWD/runs/cache_s$s" -- $ST --search-seed "$s"; done
bench() {  # bench TAG CACHE FLAGS ARGS...
  local tag=$1 cache=$2 flags=$3; shift 3
  [ "$(left)" -gt 30 ] || return
  local t0; t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  KOPT_CACHE_DIR=$cache timeout 60 $K bench "$@" $flags --no-reference-timing --json "$OUT/keep/bench_$tag.json" --out-dir runs/bench_one >/dev/null 2>&1
  echo "bench $tag rc=$? wall $(python3 -c "import time;print(round(time.time()-$t0,2))") s $(python3 -c "import json,sys;j=json.load(open(sys.argv[1]));print(j['outcome'].get('status'), round(j.get('gpu_ms') or 0, 4), 'ms')" "$OUT/keep/bench_$tag.json" 2>/dev/null)"
}
bench va1 "$PWD/runs/cache_va" "" $VA
for i in 2 3 4; do bench va$i "$PWD/runs/cache_va" "-DITEMS=$i" $VA; done
bench sg1 "$PWD/runs/cache_s1" "" $ST
bench sg2 "$PWD/runs/cache_s1" "-DBM=128 -DBN=128 -DTM=8 -DTN=8" $ST
bench sg3 "$PWD/runs/cache_s1" "-DBM=64 -DBN=128 -DTM=8 -DTN=8" $ST
bench sg4 "$PWD/runs/cache_s1" "-DBM=128 -DBN=64 -DTM=8 -DTN=8" $ST
pack
for k in vadd_ok vadd_slow vadd_slow_memo_pointer vadd_slow_memo_fingerprint vadd_slow_memo_hash vadd_late_thread \
         vadd_resident_thread vadd_l2_persist vadd_two_kernels vadd_side_stream vadd_side_stream_small vadd_answer_key; do
  [ "$(left)" -gt 8 ] || break
  timeout 60 $K bench tests/data/kernels/$k.cu --ref examples/vector_add/ref.py --n=1048576 \
    --no-reference-timing --measure-budget-s 1 --json "$OUT/keep/h_$k.json" --out-dir runs/h_$k >/dev/null 2>&1
  echo "hostile $k rc=$? $(python3 -c "
import json,sys;j=json.load(open(sys.argv[1]));o=j['outcome'];ti=(o.get('details') or {}).get('timing_info') or {}
libs=(o.get('details') or {}).get('libs') or []
ti=ti or (libs[-1].get('timing_info') if libs else {}) or {}
print(o.get('status'), ','.join(j.get('flags', [])), (j.get('rejected') or {}).get('rule', ''), 'gpu_ms', j.get('gpu_ms'), 'method', ti.get('timing_method'), ti.get('fallback_reason'))" "$OUT/keep/h_$k.json" 2>/dev/null)"
done
pack; echo "=== end [$(( $(date +%s) - T0 )) s]"
