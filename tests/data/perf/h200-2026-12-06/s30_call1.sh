#!/usr/bin/env bash
# Session 30, call 1: corpus-bench of four Triton kernels not run yet (7-point num_warps spaces: a 20 s search budget
# covers them). Carry: .carry/build/kopt, .carry/build/COMMIT, examples/corpus/_fetched; this script as .carry/call1.sh.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
export KOPT_DATA_DIR=$PWD/data
mkdir -p "$OUT/keep"
# The Triton child's buffers now come from mapped golden files (a546d88): the suite's bench of a Triton kernel first,
# and nothing else if it fails.
timeout 90 bash scripts/gpu_suite.sh bench triton_softmax >"$OUT/keep/bench_triton_softmax.log" 2>&1
rc=$?; echo "bench triton_softmax rc=$rc [$(( $(date +%s) - T0 )) s]"; tail -5 "$OUT/keep/bench_triton_softmax.log" | cut -c1-300
if [ "$rc" -ne 0 ]; then tar czf "$OUT/s30_call1.tgz" -C "$OUT" keep; exit 1; fi
CB_CASES=off CB_TIME_BUDGET_S=20 CB_MIN_KERNEL_S=110 CB_DEADLINE_S=440 \
  bash scripts/device/check.sh corpus-bench liger_dyt fla_logsumexp liger_rope fla_logcumsumexp 2>&1 \
  | grep -E "^corpus|===|rc=|Kernels run|Median|kernel +median|champion|golden data|contract" | cut -c1-300 | tail -50
mv "$OUT"/corpus_bench.tgz "$OUT"/corpus_table.* "$OUT/keep/" 2>/dev/null
find runs/cb -path '*/opt/*' \( -name run.json -o -name cases.json \) | head -300 | tar czf "$OUT/keep/candidate_runs.tgz" -T - 2>/dev/null
tar czf "$OUT/s30_call1.tgz" -C "$OUT" keep && rm -rf "$OUT/keep"
echo "=== end [$(( $(date +%s) - T0 )) s]"
