#!/usr/bin/env bash
# Session 31, call 3: fla_logsumexp's derived space measured again (corpus-bench's bench and sweep: every num_warps
# point failed in call 2, "multiple values for keyword argument 'num_warps'", until the launch helper kept the
# kernel's @triton.heuristics above its autotuner), then the hostile vadd kernels through kopt bench (y = a + b at 1M):
# each verdict. Carry: .carry/build (kopt, the probe, COMMIT), examples/corpus/_fetched; this script as .carry/call3.sh.
set -u
export OUT=${OUT:-$PWD/check_out} KOPT_DATA_DIR=$PWD/data
T0=$(date +%s)
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
mkdir -p "$OUT/keep"
CB_STEPS="bench sweep" CB_CASES=off CB_DEADLINE_S=200 CB_MIN_KERNEL_S=60 bash scripts/device/check.sh corpus-bench fla_logsumexp 2>&1 \
  | grep -E "^corpus|===|rc=|kernel +median|champion|golden data|contract" | cut -c1-300 | tail -20
cp "$OUT"/corpus_bench/fla_logsumexp/measurements.csv "$OUT/keep/fla_logsumexp_measurements.csv" 2>/dev/null
cat "$OUT/keep/fla_logsumexp_measurements.csv" 2>/dev/null
mv "$OUT"/corpus_bench.tgz "$OUT/keep/" 2>/dev/null
echo "corpus [$(( $(date +%s) - T0 )) s]"
for k in vadd_ok vadd_slow vadd_slow_memo_pointer vadd_slow_memo_fingerprint vadd_slow_memo_hash vadd_late_thread \
         vadd_resident_thread vadd_l2_persist vadd_two_kernels vadd_side_stream vadd_answer_key; do
  [ $(( $(date +%s) - T0 )) -lt 230 ] || break
  timeout 60 .carry/build/kopt bench tests/data/kernels/$k.cu --ref examples/vector_add/ref.py --n=1048576 \
    --no-reference-timing --measure-budget-s 1 --json "$OUT/keep/h_$k.json" --out-dir runs/h_$k >/dev/null 2>&1
  echo "hostile $k rc=$? $(python3 -c "import json,sys;j=json.load(open(sys.argv[1]));print(j['outcome'].get('status'), ','.join(j.get('flags', [])), (j.get('rejected') or {}).get('rule', ''))" "$OUT/keep/h_$k.json" 2>/dev/null)"
done
tar czf "$OUT/s31_call3.tgz" -C "$OUT" keep && rm -rf "$OUT/keep"
echo "=== end [$(( $(date +%s) - T0 )) s]"
