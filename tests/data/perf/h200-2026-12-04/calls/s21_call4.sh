#!/usr/bin/env bash
# Call 4 (session 21): issue 35's cutlass_layernorm with a 40 s search budget (1.034 at 15 s, s19 call 5), as calls 1
# and 2 ran flashinfer_rmsnorm, cutlass_rmsnorm and flashinfer_fused_add_rmsnorm.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
CB_TIME_BUDGET_S=40 CB_DEADLINE_S=200 CB_MIN_KERNEL_S=100 CB_OPT_LIMIT_S=95 CB_WALL_S=205 timeout 210 bash scripts/device/check.sh corpus-bench cutlass_layernorm 2>&1 \
  | grep -vE "^\s*$" | grep -E "^corpus|===|rc=|Kernels run|Median" | tail -20
mv $OUT/corpus_bench.tgz $OUT/s21_call4_corpus_bench.tgz 2>/dev/null
echo "=== end [$(( $(date +%s) - T0 )) s]"
