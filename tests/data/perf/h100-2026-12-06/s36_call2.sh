#!/usr/bin/env bash
# Session 36, call 1 (issue 36): c4b4ec1 on the H200 (if lent). Where a cold start's
# seconds go (Python's imports, the contract check, each Python process's start and end by a .pth hook); optimize
# vector_add 2^24 over fresh caches twice and warm; sgemm_tunable 4096^3 seeds 1-5 cut at CUT_S; kopt bench second
# candidates; the hostile vadd kernels' verdicts; DoctorGpu.
set -u
export OUT=${OUT:-$PWD/check_out} KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1
T0=$(date +%s); TOTAL_S=${TOTAL_S:-565} CUT_S=${CUT_S:-47}
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
mkdir -p "$OUT/keep" runs /tmp/w
. scripts/device/lib.sh
K=$PWD/.carry/build/kopt
NCU=$(command -v ncu); CS=$(command -v compute-sanitizer)
pack() { tar czf "$OUT/call_h.tgz" -C "$OUT" keep; }
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
# Every Python process's start, imports' end (the first request read) and end, by a .pth hook (no wrapper: the harness's
# pipes and signals stay kopt's).
SP=$(python3 -c "import site;print(site.getsitepackages()[0])")
cat >"$SP/kopt_pylog.py" <<'PYH'
import os, sys, time, atexit
_f = os.environ.get("KOPT_PYLOG")
if _f:
    _t0 = time.time()
    def _w(tag):
        try:
            with open(_f, "a") as fh:
                fh.write("%.3f %s pid=%d %s\n" % (time.time() - float(os.environ.get("KOPT_PYLOG_T0", "0")), tag, os.getpid(), " ".join(sys.argv[:4])[:200]))
        except Exception:
            pass
    _w("start")
    atexit.register(lambda: _w("end %.3f" % (time.time() - _t0)))
PYH
echo "import kopt_pylog" >"$SP/kopt_pylog.pth"
export KOPT_PYLOG=$OUT/keep/python.log KOPT_PYLOG_T0=$T0
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
  echo "--- $name at $(( $(date +%s) - T0 )) s" | tee -a "$OUT/keep/python.log" >>"$OUT/keep/tools.log"
  ( env "${envs[@]}" timeout -s INT "$limit" $K optimize "$@" --out-dir "runs/$name" </dev/null 2>&1 | stamp >"$OUT/keep/$name.log" )
  keep_run "$name" "${FULL:-}"; pack
}
VA="examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=16777216"
ST="examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096"

# Where a cold start's seconds go: Python's imports, the contract check alone, nvidia-smi.
{
for m in "pass" "import torch" "import torch; torch.cuda.init()" "import triton"; do
  t0=$(date +%s.%N); python3 -c "$m"; echo "py '$m' $(python3 -c "import time;print(round(time.time()-$t0,3))") s"; done
t0=$(date +%s.%N); nvidia-smi -L >/dev/null; echo "nvidia-smi -L $(python3 -c "import time;print(round(time.time()-$t0,3))") s"
t0=$(date +%s.%N); KOPT_GOLDEN_CACHE=off $K check examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=16777216 >/dev/null 2>&1; echo "kopt check vadd rc=$? $(python3 -c "import time;print(round(time.time()-$t0,3))") s"
} >"$OUT/keep/startup.txt" 2>&1
rm -rf ~/.cache/kopt/doctor
FULL=full opt va_cold 100 KOPT_CACHE_DIR=$PWD/runs/cache_va -- $VA
rm -rf ~/.cache/kopt/doctor
FULL=full opt va_cold2 100 KOPT_CACHE_DIR=$PWD/runs/cache_va2 -- $VA
opt va_warm 60 KOPT_CACHE_DIR=$PWD/runs/cache_va -- $VA
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
[ "$(left)" -gt 40 ] && timeout $(( $(left) - 10 )) .carry/build/kopt_tests --gtest_filter='DoctorGpu.*:LoopGpu.*' >"$OUT/keep/gpu_tests.log" 2>&1; echo "gpu tests rc=$?"; grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED) |Failure" "$OUT/keep/gpu_tests.log" | tail -20
pack; echo "=== end [$(( $(date +%s) - T0 )) s]"
