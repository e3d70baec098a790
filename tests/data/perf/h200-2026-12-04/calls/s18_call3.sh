#!/usr/bin/env bash
# Call 3 (session 18): the ephemeral seed and the judge's cache on the H200; the bench worker after the fix; call_ms
# with and without fresh inputs; hostile verdicts with the worker on and off.
set -u
export OUT=${OUT:-$PWD/check_out}
K=$PWD/.carry/build/kopt
VA="examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=16777216"
ST="examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096"
mkdir -p runs/json
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s]"; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
# 1. GPU tests
echo "=== 1. GPU tests $(el)"
timeout 200 .carry/build/kopt_tests --gtest_filter='EvidenceGpu.*:Judge*:GoldenStream.*:PrepareEphemeral.*:OptimizeGates.*Ephemeral*:MemoryFile.*:SharedBuffer.*:RunnerGpu.TheSealed*:RunnerGpu.ChecksRun*:RunnerGpu.TheWorker*:RunnerGpu.CorrectKernel*' >$OUT/gpu_tests_full.log 2>&1
echo "rc=$?"; grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED) |^\[==========\]|Failure|Expected|Which is|actual" $OUT/gpu_tests_full.log | tail -60
# 2. bench with the warm worker after the judge's cache fix
echo "=== 2. bench worker $(el)"
b() { local tag=$1; shift; local s=$(date +%s.%N); timeout 150 "$K" bench "$@" --out-dir runs/$tag >runs/$tag.log 2>&1; echo "=== $tag rc=$? $(python3 -c "import time;print(round(time.time()-$s,2))") s"; }
b bwv0 $VA
for i in 2 3 4 5; do b bwv$i $VA -DITEMS=$i; done
b bws0 $ST
i=0; for d in "-DBM=128" "-DBN=128 -DTM=8" "-DBM=128 -DBN=128 -DTN=8" "-DTM=4"; do i=$((i+1)); b bws$i $ST $d; done
python3 - <<'PY'
import json, glob
for d in sorted(glob.glob("runs/bw*/kopt_runs/bench_*/bench.json")):
    j = json.load(open(d))
    keep = ("wall_s", "phase_seconds", "measure_phases_ms", "measure_request_ms", "measure_worker_ms", "measure_wall_ms", "ephemeral_seed")
    w = j.get("warm_worker", {})
    print(d.split("/")[1], json.dumps({k: j.get(k) for k in keep}), "worker", w.get("used"), w.get("reused"), w.get("measuring_process_reused"))
PY
mkdir -p runs/bwjson; for d in runs/bw*/kopt_runs/bench_*; do cp $d/bench.json runs/bwjson/$(echo $d | cut -d/ -f2).json 2>/dev/null; done
# 3. the ephemeral seed: bench (fresh golden cache), honest and the answer-key reader with the seal off; optimize
echo "=== 3. ephemeral seed $(el)"
ek() { local tag=$1; shift; local gc; gc=$(mktemp -d); env "$@" KOPT_GOLDEN_CACHE=$gc timeout 120 "$K" bench $EKARGS --json runs/json/eph_$tag.json --out-dir runs/eph_$tag >runs/eph_$tag.log 2>&1; echo "=== eph $tag rc=$?"; grep -E "ephemeral|=>|answer" runs/eph_$tag.log | head -6; }
EKARGS="examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=1048576 --no-reference-timing --measure-budget-s 1" ek honest KOPT_X=1
EKARGS="tests/data/kernels/vadd_answer_key.cu --ref examples/vector_add/ref.py --n=1048576 --no-reference-timing --measure-budget-s 1" ek reader_sealoff KOPT_SEAL=off
EKARGS="tests/data/kernels/vadd_answer_key.cu --ref examples/vector_add/ref.py --n=1048576 --no-reference-timing --measure-budget-s 1" ek reader_sealed KOPT_X=1
s=$(date +%s); KOPT_SEAL=off timeout 200 "$K" optimize tests/data/hostile/answer_key/kernel.cu --ref examples/vector_add/ref.py --n=1048576 --out-dir runs/opt_ak --iterations 2 >runs/opt_ak.log 2>&1
echo "=== optimize answer_key seal off rc=$? $(( $(date +%s) - s )) s"; grep -iE "ephemeral|champion|CHEAT" runs/opt_ak.log | tail -25
d=$(ls -d runs/opt_ak/kopt_runs/run_* 2>/dev/null | head -1); [ -n "$d" ] && { mkdir -p runs/json/opt_ak; cp $d/state.json $d/summary.md $d/summary.json runs/json/opt_ak/; python3 -c "
import json; s=json.load(open('$d/state.json')); print('ephemeral records', json.dumps(s.get('gate_records',{}).get('ephemeral_seed'))[:1500]); print('champion', json.dumps(s.get('champion'))[:400])"; }
# 4. call_ms with and without fresh inputs
echo "=== 4. call-ms $(el)"
TK=scripts/device/timing_kernels
cb() { local tag=$1; shift; env "$@" timeout 60 "$K" bench $TK/axpb/kernel.cu --ref $TK/axpb/ref.py --n=1048576 --seeds 1 --no-reference-timing --measure-budget-s 2 --no-worker --json runs/json/call_$tag.json --out-dir runs/call >/dev/null 2>&1; python3 -c "import json,sys; o=json.load(open(sys.argv[1]))['outcome']; ti=o['details'].get('timing_info',{}); print('call_ms %-16s gpu_ms %.5f call_ms %.5f clock %s' % (sys.argv[2], o['timing']['median_ms'], o['call']['median_ms'], ti.get('gpu_clock')))" runs/json/call_$tag.json $tag; }
for r in 1 2; do cb clock$r KOPT_X=1; cb events$r KOPT_CUPTI=0; cb clock_nofresh$r KOPT_FRESH_INPUTS=0; cb events_nofresh$r KOPT_FRESH_INPUTS=0 KOPT_CUPTI=0; done
# 5. hostile verdicts, worker on and off
echo "=== 5. hostile $(el)"
for k in vadd_ok vadd_slow vadd_slow_memo_pointer vadd_slow_memo_fingerprint vadd_slow_memo_hash vadd_late_thread vadd_resident_thread vadd_l2_persist vadd_two_kernels vadd_side_stream vadd_answer_key; do
  for w in on off; do
    KOPT_BENCH_WORKER=$w timeout 60 "$K" bench tests/data/kernels/$k.cu --ref examples/vector_add/ref.py --n=1048576 --no-reference-timing --measure-budget-s 1 --json runs/json/bw_${k}_$w.json --out-dir runs/bw_$k >/dev/null 2>&1
  done
  python3 -c "
import json,sys
def v(w):
  try: j=json.load(open(f'runs/json/bw_{sys.argv[1]}_{w}.json'))
  except Exception as e: return ('unreadable',)
  return (j['outcome'].get('status'), ','.join(j.get('flags',[])), (j.get('rejected') or {}).get('rule',''))
a,b=v('on'),v('off'); print('hostile %-28s on %s off %s %s' % (sys.argv[1], a, b, 'SAME' if a==b else 'DIFFERENT'))" $k
done
echo "=== done $(el)"
tar czf $OUT/call3_json.tgz runs/json runs/bwjson 2>/dev/null
