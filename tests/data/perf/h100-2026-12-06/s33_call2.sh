#!/usr/bin/env bash
# Session 33, call 2 (issue 36): the landed candidates for the whole wall, one build (.carry/build/kopt):
#  the profile's raw page read from the run's own output and the expected axes' pass 2 with pass 1; the probe's looks
#  at the outputs into pinned memory the worker keeps; near peak confirmed by one iteration at the roof.
#  1. optimize vector_add 2^24 over fresh caches (the doctor's too), then warm;
#  2. sgemm_tunable 4096^3 seeds 1-5, fresh caches each, cut at CUT_S;
#  3. kopt bench second candidates (one --out-dir);
#  4. the hostile vadd kernels (their verdicts and timing methods: the probe changed).
set -u
export OUT=${OUT:-$PWD/check_out} KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1
T0=$(date +%s); TOTAL_S=${TOTAL_S:-520} CUT_S=${CUT_S:-47}
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
mkdir -p "$OUT/keep" runs
. scripts/device/lib.sh
K=$PWD/.carry/build/kopt
pack() { tar czf "$OUT/s33_call2.tgz" -C "$OUT" keep; }
left() { echo $(( TOTAL_S - ($(date +%s) - T0) )); }
keep_run() {
  local d; d=$(ls -d runs/$1/kopt_runs/*_* 2>/dev/null | head -1); [ -n "$d" ] || return
  cp "$d/state.json" "$OUT/keep/$1_state.json"; cp "$d/summary.md" "$OUT/keep/$1_summary.md" 2>/dev/null
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
  ( env "${envs[@]}" timeout -s INT "$limit" $K optimize "$@" --out-dir "runs/$name" </dev/null 2>&1 | stamp >"$OUT/keep/$name.log" )
  keep_run "$name"; pack
}
VA="examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=16777216"
ST="examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096"
rm -rf ~/.cache/kopt/doctor
opt va_cold 100 KOPT_CACHE_DIR=$PWD/runs/cache_va -- $VA
opt va_warm 60 KOPT_CACHE_DIR=$PWD/runs/cache_va -- $VA
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
pack
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
pack; echo "=== end [$(( $(date +%s) - T0 )) s]"
