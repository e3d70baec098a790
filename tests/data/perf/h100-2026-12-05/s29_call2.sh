#!/usr/bin/env bash
# Session 29, call 2: corpus-bench of four Triton kernels not run yet (the other cases in each candidate's timed child,
# the golden-data key of a derived Triton space). Carry: .carry/build/kopt, COMMIT, examples/corpus/_fetched.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
export KOPT_DATA_DIR=$PWD/data
mkdir -p "$OUT/keep"
CB_CASES=off CB_TIME_BUDGET_S=40 CB_MIN_KERNEL_S=150 CB_DEADLINE_S=470 \
  bash scripts/device/check.sh corpus-bench liger_geglu liger_swiglu liger_dyt liger_rope 2>&1 \
  | grep -E "^corpus|===|rc=|Kernels run|Median|kernel +median|champion|golden data|contract" | cut -c1-300 | tail -50
mv "$OUT"/corpus_bench.tgz "$OUT"/corpus_table.* "$OUT/keep/" 2>/dev/null
find runs/cb -path '*/opt/*' \( -name run.json -o -name cases.json \) | head -300 | tar czf "$OUT/keep/candidate_runs.tgz" -T - 2>/dev/null
tar czf "$OUT/s29_call2.tgz" -C "$OUT" keep && rm -rf "$OUT/keep"
echo "=== end [$(( $(date +%s) - T0 )) s]"
