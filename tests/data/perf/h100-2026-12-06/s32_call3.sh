#!/usr/bin/env bash
# Session 32, call 3: (1) kopt bench, second candidates against the same golden data, one --out-dir (as a user or an
# agent keeps it: call 1 gave each call its own folder, which the warm worker's seal does not reach, so each began a
# fresh measuring process); (2) issue 35: fla_logcumsumexp's optimize after 3ebc197 (the default matrix's case its
# kernel refuses is dropped; its sweep ran in call 2) and fla_chunk_local_cumsum (optimize and sweep); (3) vector_add's
# optimize over fresh caches, then warm, if time is left.
# Carry: .carry/build (kopt, the probe, COMMIT), examples/corpus/_fetched.
set -u
export OUT=${OUT:-$PWD/check_out} KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1
T0=$(date +%s)
TOTAL_S=${TOTAL_S:-540}
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
mkdir -p "$OUT/keep" runs
. scripts/device/lib.sh  # stamp
K=.carry/build/kopt
VA="examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=16777216"
ST="examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096"
pack() { tar czf "$OUT/s32_call3.tgz" -C "$OUT" keep; }
left() { echo $(( TOTAL_S - ($(date +%s) - T0) )); }
bench() {  # bench TAG DIR FLAGS ARGS...
  local tag=$1 dir=$2 flags=$3; shift 3
  local t; t=$(date +%s.%N)
  # shellcheck disable=SC2086
  KOPT_CACHE_DIR=$PWD/runs/cache_b timeout 60 $K bench "$@" $flags --no-reference-timing --json "$OUT/keep/bench_$tag.json" \
    --out-dir "$dir" </dev/null >/dev/null 2>&1
  echo "bench $tag ($flags) rc=$? $(python3 -c "import time;print(round(time.time()-$t,2))") s: $(python3 -c "import json,sys;j=json.load(open(sys.argv[1]));w=j.get('warm_worker',{});print(j['outcome']['status'], j['outcome'].get('timing',{}).get('median_ms'), 'worker used', w.get('used'), 'process kept', w.get('measuring_process_reused'), {k: round(v, 2) for k, v in j.get('phase_seconds', {}).items() if v >= 0.01})" "$OUT/keep/bench_$tag.json" 2>/dev/null)"
}
bench va1 runs/bench_va "" $VA
for i in 2 3 4; do bench va$i runs/bench_va "-DITEMS=$i" $VA; done
bench sg1 runs/bench_sg "" $ST
bench sg2 runs/bench_sg "-DBM=128 -DBN=128 -DTM=8 -DTN=8" $ST
bench sg3 runs/bench_sg "-DBM=64 -DBN=128 -DTM=8 -DTN=8" $ST
bench sg4 runs/bench_sg "-DBM=128 -DBN=64 -DTM=8 -DTN=8" $ST
pack
CB_STEPS=optimize CB_CASES=off CB_TIME_BUDGET_S=20 CB_MIN_KERNEL_S=100 CB_DEADLINE_S=$(( $(left) - 230 )) \
  bash scripts/device/check.sh corpus-bench fla_logcumsumexp 2>&1 \
  | grep -E "^corpus|===|rc=|champion|golden data|contract|gates passed|dropped" | cut -c1-400 | tail -20
mv "$OUT"/corpus_bench.tgz "$OUT/keep/corpus_bench_a.tgz" 2>/dev/null; pack
CB_STEPS="optimize sweep" CB_CASES=off CB_TIME_BUDGET_S=20 CB_MIN_KERNEL_S=100 CB_DEADLINE_S=$(( $(left) - 10 )) \
  bash scripts/device/check.sh corpus-bench fla_chunk_local_cumsum 2>&1 \
  | grep -E "^corpus|===|rc=|champion|golden data|contract|gates passed|dropped|Kernels run" | cut -c1-400 | tail -20
mv "$OUT"/corpus_bench.tgz "$OUT/keep/corpus_bench_b.tgz" 2>/dev/null; mv "$OUT"/corpus_table.* "$OUT/keep/" 2>/dev/null; pack
if [ "$(left)" -gt 70 ]; then
  ( KOPT_CACHE_DIR=$PWD/runs/cache_va timeout -s INT $(( $(left) - 10 )) $K optimize $VA --out-dir runs/va </dev/null 2>&1 | stamp >"$OUT/keep/va_cold.log" )
  grep -h "gates passed\|Whole wall" "$OUT/keep/va_cold.log" | cut -c1-220
fi
pack && rm -rf "$OUT/keep"
echo "=== end [$(( $(date +%s) - T0 )) s]"
