#!/usr/bin/env bash
# Call 1 (session 21): the warm start's tables (issue 39): sgemm_tunable's 496-point space swept at 2048^3 (the
# stored 4096^3 sweep is the other shape), flashinfer_rmsnorm at 4096 x 8192 and cutlass_layernorm at 16384 x 2048
# (their 8192 x 4096 sweeps are stored); then issue 35's flashinfer_rmsnorm with a 40 s search budget.
set -u
export OUT=${OUT:-$PWD/check_out}
K=$PWD/.carry/build/kopt
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s]"; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
left() { echo $(( 560 - ($(date +%s) - T0) )); }
echo "=== 1. corpus sweeps at new dims $(el)"
CB_STEPS="bench sweep" CB_DIMS_flashinfer_rmsnorm="--batch_size=4096 --d=8192" CB_DIMS_cutlass_layernorm="--M=16384 --N=2048" \
  CB_DEADLINE_S=300 CB_MIN_KERNEL_S=60 timeout 300 bash scripts/device/check.sh corpus-bench flashinfer_rmsnorm cutlass_layernorm 2>&1 \
  | grep -vE "^\s*$" | grep -E "^corpus|===|rc=" | tail -20
mv $OUT/corpus_bench.tgz $OUT/s21_call1_newdims_corpus_bench.tgz 2>/dev/null
echo "=== 2. sgemm_tunable sweep 2048^3 $(el)"
l=$(left); [ $l -gt 240 ] && l=240
KOPT_BIN=$K timeout $l bash scripts/perf/search_efficiency.sh --size 2048 --jobs 16 --runs 5 --out runs/se2048 > $OUT/s21_call1_se2048.log 2>&1
echo "rc=$?"; tail -5 $OUT/s21_call1_se2048.log
cp runs/se2048/measurements.csv $OUT/s21_call1_sgemm_tunable_2048_measurements.csv 2>/dev/null
cp runs/se2048/report.txt $OUT/s21_call1_sgemm_tunable_2048_report.txt 2>/dev/null
echo "=== 3. corpus-bench flashinfer_rmsnorm, search budget 40 s $(el)"
l=$(left)
if [ $l -gt 150 ]; then
  CB_TIME_BUDGET_S=40 CB_DEADLINE_S=$((l - 10)) CB_MIN_KERNEL_S=100 CB_OPT_LIMIT_S=100 timeout $l bash scripts/device/check.sh corpus-bench flashinfer_rmsnorm 2>&1 \
    | grep -vE "^\s*$" | grep -E "^corpus|===|rc=" | tail -20
  mv $OUT/corpus_bench.tgz $OUT/s21_call1_rmsnorm40_corpus_bench.tgz 2>/dev/null
  cat $OUT/corpus_table.md 2>/dev/null | head -8
fi
echo "=== end $(el)"
