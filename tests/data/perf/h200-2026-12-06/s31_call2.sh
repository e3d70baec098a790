#!/usr/bin/env bash
# Session 31, call 2 (issue 35): corpus-bench of the five Triton kernels no call has run yet (liger_dyt, fla_logsumexp,
# liger_rope, fla_logcumsumexp, fla_chunk_local_cumsum; num_warps and block spaces, a 20 s search budget each), in
# that order while CB_DEADLINE_S allows. Carry: .carry/build (kopt, COMMIT), examples/corpus/_fetched; this script as
# .carry/call2.sh.
set -u
export OUT=${OUT:-$PWD/check_out} KOPT_DATA_DIR=$PWD/data
T0=$(date +%s)
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
mkdir -p "$OUT/keep"
CB_CASES=off CB_TIME_BUDGET_S=20 CB_MIN_KERNEL_S=110 CB_DEADLINE_S=${CB_DEADLINE_S:-540} \
  bash scripts/device/check.sh corpus-bench liger_dyt fla_logsumexp liger_rope fla_logcumsumexp fla_chunk_local_cumsum 2>&1 \
  | grep -E "^corpus|===|rc=|Kernels run|Median|kernel +median|champion|golden data|contract" | cut -c1-300 | tail -60
mv "$OUT"/corpus_bench.tgz "$OUT"/corpus_table.* "$OUT/keep/" 2>/dev/null
find runs/cb -path '*/opt/*' \( -name run.json -o -name cases.json \) | head -300 | tar czf "$OUT/keep/candidate_runs.tgz" -T - 2>/dev/null
tar czf "$OUT/s31_call2.tgz" -C "$OUT" keep && rm -rf "$OUT/keep"
echo "=== end [$(( $(date +%s) - T0 )) s]"
