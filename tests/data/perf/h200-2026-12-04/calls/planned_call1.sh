#!/usr/bin/env bash
# Planned, not run: what remains of session 22's plan after its call 1 (calls/s22_call1.sh ran the time to result and
# the GPU tests): issue 35's cutlass_layernorm at a 40 s search budget, as calls/s21_call4.sh (lost) would have.
# Carry: .carry/build/kopt, .carry/build/COMMIT, this script as .carry/call.sh, .carry/cutlass.tgz,
# examples/corpus/_fetched/nvidia-cutlass-4.2.0.0 (and .carry/corpus_bench.txz to skip compiling there).
set -u
export OUT=${OUT:-$PWD/check_out}
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
CB_TIME_BUDGET_S=40 CB_DEADLINE_S=480 CB_MIN_KERNEL_S=100 CB_OPT_LIMIT_S=100 timeout 500 bash scripts/device/check.sh corpus-bench cutlass_layernorm 2>&1 \
  | grep -vE "^\s*$" | grep -E "^corpus|===|rc=|Kernels run|Median" | tail -20
