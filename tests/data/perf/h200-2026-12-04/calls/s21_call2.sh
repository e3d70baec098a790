#!/usr/bin/env bash
# Call 2 (session 21): cutlass_layernorm swept at 16384 x 2048 (the warm start's second corpus table; call 1 lacked the
# CUTLASS headers), then issue 35's benchmark on the corpus kernels not yet run: cutlass_rmsnorm,
# flashinfer_fused_add_rmsnorm (search budget 40 s, as call 1's flashinfer_rmsnorm), then liger_rms_norm (Triton).
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s]"; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
left() { echo $(( 565 - ($(date +%s) - T0) )); }
echo "=== 1. cutlass_layernorm sweep at 16384 x 2048 $(el)"
CB_STEPS="bench sweep" CB_DIMS_cutlass_layernorm="--M=16384 --N=2048" CB_DEADLINE_S=150 CB_MIN_KERNEL_S=60 timeout 160 \
  bash scripts/device/check.sh corpus-bench cutlass_layernorm 2>&1 | grep -vE "^\s*$" | grep -E "^corpus|===|rc=" | tail -10
mv $OUT/corpus_bench.tgz $OUT/s21_call2_newdims_corpus_bench.tgz 2>/dev/null
echo "=== 2. corpus-bench, search budget 40 s $(el)"
l=$(left)
CB_TIME_BUDGET_S=40 CB_DEADLINE_S=$((l - 10)) CB_MIN_KERNEL_S=120 CB_OPT_LIMIT_S=100 timeout $l bash scripts/device/check.sh corpus-bench \
  cutlass_rmsnorm flashinfer_fused_add_rmsnorm liger_rms_norm 2>&1 | grep -vE "^\s*$" | grep -E "^corpus|===|rc=|Kernels run|Median" | tail -30
mv $OUT/corpus_bench.tgz $OUT/s21_call2_corpus_bench.tgz 2>/dev/null
echo "=== end $(el)"
