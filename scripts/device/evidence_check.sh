#!/usr/bin/env bash
# Device check: evidence that cannot be gamed (issue 40; docs/GATES.md "Evidence that cannot be gamed"). One H200,
# about 8 minutes. Prepare here: cmake --build build && bash scripts/device/carry_build.sh
# Run there (device tool, carry [".carry/build"]): bash scripts/device/evidence_check.sh
#   1. the runner's GPU tests, the hostile kernels among them (EvidenceGpu.*, RunnerGpu.*)
#   2. kopt bench of the memoising SGEMM (tests/data/hostile/sgemm_memo, MEMO=1) at 4096^3: with fresh inputs (it
#      must be timed as it computes) and with KOPT_FRESH_INPUTS=0 (the speed-of-light floor must reject it), then
#      MEMO=2 (remembers by pointer: wrong on fresh inputs) and the honest MEMO=0
#   3. what fresh inputs cost honest kernels: y = 2x + 1 at 1M and 16M, sgemm_tunable at 4096^3, bench with and
#      without them, interleaved, three times each (gpu_ms, robust CV, wall)
#   4. kopt optimize of sgemm_memo at 4096^3 (its space: MEMO 0, 1, 2): no memoising configuration may be crowned;
#      again with KOPT_FRESH_INPUTS=0, where the speed-of-light floor alone must keep MEMO=1 out
#   5. what fresh inputs cost a race (optimize's per-candidate measurement): vadd_ok against vadd_two_kernels at 1M
#      and 16M, the runner child directly, five times each with and without
#   6. the answer key (docs/GATES.md "The sealed seed"): kopt optimize of tests/data/hostile/answer_key (CHEAT 0, 1):
#      CHEAT=1, which answers from the golden files it finds, must never be crowned (part optimize_answer_key)
#   7. Triton candidates too (part triton_answer_key): python/tests/test_sealed.py and the Triton GPU tests; kopt bench
#      of the Triton softmax (honest: answer key out of reach) and of tests/data/hostile/triton_answer_key with CHEAT=0,
#      CHEAT=1 (wrong_on_sealed_seed) and CHEAT=1 under KOPT_SEAL=off (passes, flagged answer_key_within_reach);
#      kopt optimize of it (CHEAT 0, 1): CHEAT=1 must never be crowned
# EVIDENCE_NO_TESTS=1 leaves out 1; EVIDENCE_ONLY="tests race optimize_nofresh" runs only those parts.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_check
T=$PWD/.carry/build/kopt_tests
S=tests/data/hostile/sgemm_memo
E=runs/evidence
mkdir -p "$E" runs/json/evidence
VA0="examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --no-reference-timing"
VA="$VA0 --measure-budget-s 2"
want() { [ -z "${EVIDENCE_ONLY:-}" ] || [[ " $EVIDENCE_ONLY " == *" $1 "* ]]; }
if [ "${EVIDENCE_NO_TESTS:-0}" != 1 ] && want tests; then
  step "runner GPU tests" 420 "$T" --gtest_filter='EvidenceGpu.*:RunnerGpu.*:SealAway.*:Judge.*' 2>&1 | tail -60 | tee "$OUT/gpu_tests.txt"
fi
bench() {  # NAME ENV... -- ARGS...
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local t0; t0=$(date +%s.%N)
  env "${envs[@]}" timeout 240 "$K" bench "$@" --json "$E/$name.json" --out-dir "$E/$name" > "$E/$name.txt" 2>&1
  local rc=$?
  echo "=== bench $name rc=$rc wall_s=$(python3 -c "import time;print(round(time.time()-$t0,1))")"
  grep -E "kernel  |inputs|floor|FLAGGED|REJECTED|=>|error|Error" "$E/$name.txt" | head -12
}
if want bench; then
# The hostile vadd kernels of the GPU tests through kopt bench (y = a + b at 1M, examples/vector_add's ref.py).
for k in vadd_ok vadd_slow vadd_slow_memo_pointer vadd_slow_memo_fingerprint vadd_slow_memo_hash vadd_late_thread \
         vadd_resident_thread vadd_l2_persist vadd_two_kernels vadd_side_stream vadd_answer_key; do
  bench "h_$k" KOPT_X=1 -- tests/data/kernels/$k.cu --ref examples/vector_add/ref.py --n=1048576 --no-reference-timing --measure-budget-s 1
done
SG="$S/kernel.cu --ref examples/sgemm_naive/ref.py --M=4096 --N=4096 --K=4096 --no-reference-timing --measure-budget-s 2"
bench memo1_fresh KOPT_X=1 -- $SG -D MEMO=1
bench memo1_nofresh KOPT_FRESH_INPUTS=0 -- $SG -D MEMO=1
bench memo2_fresh KOPT_X=1 -- $SG -D MEMO=2
bench memo0_fresh KOPT_X=1 -- $SG -D MEMO=0
ST="examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096 --no-reference-timing --measure-budget-s 2"
for rep in 1 2 3; do
  for f in 1 0; do
    bench vadd1m_f${f}_$rep KOPT_FRESH_INPUTS=$f -- $VA --n=1048576
    bench vadd16m_f${f}_$rep KOPT_FRESH_INPUTS=$f -- $VA --n=16777216
    bench sgemm_f${f}_$rep KOPT_FRESH_INPUTS=$f -- $ST
  done
done
python3 - "$E" <<'PY' | tee "$OUT/fresh_cost.txt"
import json, sys, glob, os, statistics
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/*_f[01]_*.json")):
    j = json.load(open(f)); name = os.path.basename(f)[:-5]; k, fr, _ = name.rsplit("_", 2)
    o = j.get("outcome", {}); t = o.get("timing") or {}
    rows.setdefault((k, fr), []).append((t.get("median_ms"), t.get("robust_cv"), o.get("wall_ms")))
for (k, fr), v in sorted(rows.items()):
    med = [x[0] for x in v if x[0]]; cv = [x[1] for x in v if x[1] is not None]; wall = [x[2] for x in v if x[2]]
    print(f"{k:10} fresh={fr[1]} gpu_ms {[round(x,5) for x in med]} median {statistics.median(med):.5f}  "
          f"robust_cv {[round(100*x,2) for x in cv]}%  child wall_ms {[round(x) for x in wall]}")
PY
fi
if want race; then
  nvcc -shared -Xcompiler -fPIC -O3 -arch=sm_90 -o runs/vadd_ok.so tests/data/kernels/vadd_ok.cu
  nvcc -shared -Xcompiler -fPIC -O3 -arch=sm_90 -o runs/vadd_two.so tests/data/kernels/vadd_two_kernels.cu
  for n in 1048576 16777216; do
    bench race_golden_$n KOPT_X=1 -- $VA0 --n=$n --measure-budget-s 0.2
    G=$(ls -d $E/race_golden_$n/kopt_runs/bench_*/golden | head -1)
    for rep in 1 2 3 4 5; do
      for f in 1 0; do
        t0=$(date +%s.%N)
        KOPT_FRESH_INPUTS=$f "$K" __runner --lib runs/vadd_ok.so --lib runs/vadd_two.so --golden "$G" --out runs/race.json \
          --mode paired --race --rounds 40 --max-time-s 2 >/dev/null 2>&1
        echo "race n=$n fresh=$f rc=$? wall_s=$(python3 -c "import time;print(round(time.time()-$t0,3))") $(python3 -c "
import json; d=json.load(open('runs/race.json')); print(d['status'], d.get('rounds'), json.dumps(d.get('phases_ms')), [round(l['timing']['median_ms'],5) for l in d['libs'] if 'timing' in l])")"
      done
    done
  done 2>&1 | tee "$OUT/race_cost.txt"
fi
if want optimize_nofresh; then
  KOPT_FRESH_INPUTS=0 step "optimize sgemm_memo without fresh inputs" 300 "$K" optimize "$S/kernel.cu" --ref examples/sgemm_naive/ref.py \
    --M=4096 --N=4096 --K=4096 --out-dir runs/opt_nofresh --iterations 1 --workload-matrix off
  d=$(newest_run opt_nofresh)
  [ -n "$d" ] && python3 -c "
import json; s=json.load(open('$d/state.json'))
for m in s.get('history', []): print(m.get('candidate',{}).get('id'), m.get('candidate',{}).get('params'), m.get('status'), m.get('median_ms'))
print('rejected', json.dumps(s.get('gate_records',{}).get('rejected'))[:2000])
print('champion', json.dumps(s.get('champion',{}).get('candidate',{}).get('params')))
" && mkdir -p runs/json/evidence_nofresh && cp "$d/state.json" "$d/summary.md" runs/json/evidence_nofresh/
fi
if want optimize; then
step "optimize sgemm_memo" 420 "$K" optimize "$S/kernel.cu" --ref examples/sgemm_naive/ref.py --M=4096 --N=4096 --K=4096 --out-dir runs/opt_memo --iterations 2
d=$(newest_run opt_memo)
[ -n "$d" ] && { grep -E "MEMO|champion|reject|below|fresh" "$d/summary.md" | head -40; python3 -c "
import json,sys; s=json.load(open('$d/state.json'))
for m in s.get('history', []): print(m.get('candidate',{}).get('id'), m.get('candidate',{}).get('params'), m.get('status'), m.get('median_ms'), (m.get('note') or '')[:200])
print('rejected', json.dumps(s.get('gate_records',{}).get('rejected'))[:1500])
print('champion', json.dumps(s.get('champion',{}).get('candidate',{}).get('params')))
"; cp "$d/state.json" "$d/summary.md" runs/json/evidence/ 2>/dev/null; }
fi
if want optimize_answer_key; then
step "optimize answer_key" 300 "$K" optimize tests/data/hostile/answer_key/kernel.cu --ref examples/vector_add/ref.py --n=1048576 \
  --out-dir runs/opt_answer_key --iterations 2
d=$(newest_run opt_answer_key)
[ -n "$d" ] && { python3 -c "
import json; s=json.load(open('$d/state.json'))
for m in s.get('history', []): print(m.get('candidate',{}).get('id'), m.get('candidate',{}).get('params'), m.get('status'), m.get('median_ms'), (m.get('note') or '')[:240])
print('champion', json.dumps(s.get('champion',{}).get('candidate',{}).get('params')))
"; mkdir -p runs/json/evidence_answer_key; cp "$d/state.json" "$d/summary.md" runs/json/evidence_answer_key/ 2>/dev/null; }
fi
if want triton_answer_key; then
step "pytest sealed + Triton GPU" 300 python3 -m pytest -q python/tests/test_sealed.py python/tests/test_triton_gpu.py 2>&1 | tail -15
keyline() { python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); k=d.get('answer_key',{})
print('  status', d.get('status'), '| message', (d.get('message') or '')[:160], '| out_of_reach', k.get('out_of_reach'), '| landlock', k.get('landlock'), '| reason', k.get('reason'), '| flags', d.get('flags'))" "$1" 2>&1; }
bench triton_softmax_honest KOPT_X=1 -- examples/triton_softmax/kernel.py --ref examples/triton_softmax/ref.py --n_rows=4096 --n_cols=4096 --no-reference-timing --measure-budget-s 1
keyline "$E/triton_softmax_honest.json"
TA="tests/data/hostile/triton_answer_key/kernel.py --ref tests/data/hostile/triton_answer_key/ref.py --n=4194304 --no-reference-timing --measure-budget-s 1"
for v in 0 1; do bench tak_cheat$v KOPT_X=1 -- $TA -D CHEAT=$v; keyline "$E/tak_cheat$v.json"; done
bench tak_cheat1_sealoff KOPT_SEAL=off -- $TA -D CHEAT=1
keyline "$E/tak_cheat1_sealoff.json"
grep -h "answer_key kernel" "$E"/tak_cheat1*/kopt_runs/*/candidates/*/*.txt "$E"/tak_cheat1*/kopt_runs/*/*.log 2>/dev/null | head -4
step "optimize triton_answer_key" 420 "$K" optimize $TA --out-dir runs/opt_triton_answer_key --iterations 2
d=$(newest_run opt_triton_answer_key)
[ -n "$d" ] && { python3 -c "
import json; s=json.load(open('$d/state.json'))
for m in s.get('history', []): print(m.get('candidate',{}).get('id'), m.get('candidate',{}).get('params'), m.get('status'), m.get('median_ms'), (m.get('note') or '')[:240])
print('champion', json.dumps(s.get('champion',{}).get('candidate',{}).get('params')))
"; mkdir -p runs/json/evidence_triton_answer_key; cp "$d/state.json" "$d/summary.md" runs/json/evidence_triton_answer_key/ 2>/dev/null; }
fi
cp "$E"/*.json runs/json/evidence/ 2>/dev/null
finish_check
