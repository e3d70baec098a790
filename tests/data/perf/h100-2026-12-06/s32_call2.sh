#!/usr/bin/env bash
# Session 32, call 2 (issue 35): the corpus kernels not run yet (liger_rope, fla_logcumsumexp, fla_chunk_local_cumsum:
# kopt's default optimize and the sweep of its derived space; the project's choice is the sweep's default point) and
# fla_logsumexp's optimize (its sweep and bench ran in session 31, call 3), with the golden data of session 32.
# Carry: .carry/build (kopt, the probe, COMMIT), examples/corpus/_fetched, this script as .carry/call2.sh.
set -u
export OUT=${OUT:-$PWD/check_out} KOPT_DATA_DIR=$PWD/data
T0=$(date +%s)
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
mkdir -p "$OUT/keep"
CB_STEPS="optimize sweep" CB_CASES=off CB_TIME_BUDGET_S=20 CB_MIN_KERNEL_S=100 CB_DEADLINE_S=${CB_DEADLINE_S:-430} \
  bash scripts/device/check.sh corpus-bench liger_rope fla_logcumsumexp fla_chunk_local_cumsum 2>&1 \
  | grep -E "^corpus|===|rc=|Kernels run|Median|kernel +median|champion|golden data|contract|gates passed" | cut -c1-300 | tail -60
mv "$OUT"/corpus_bench.tgz "$OUT/keep/corpus_bench_a.tgz" 2>/dev/null; mv "$OUT"/corpus_table.* "$OUT/keep/" 2>/dev/null
left=$(( 540 - ($(date +%s) - T0) ))
if [ "$left" -gt 110 ]; then
  CB_STEPS=optimize CB_CASES=off CB_TIME_BUDGET_S=20 CB_MIN_KERNEL_S=100 CB_DEADLINE_S=$((left - 5)) \
    bash scripts/device/check.sh corpus-bench fla_logsumexp 2>&1 \
    | grep -E "^corpus|===|rc=|champion|golden data|contract|gates passed" | cut -c1-300 | tail -20
  mv "$OUT"/corpus_bench.tgz "$OUT/keep/corpus_bench_b.tgz" 2>/dev/null
else echo "fla_logsumexp: not started ($left s left)"; fi
tar czf "$OUT/s32_call2.tgz" -C "$OUT" keep && rm -rf "$OUT/keep"
echo "=== end [$(( $(date +%s) - T0 )) s]"
