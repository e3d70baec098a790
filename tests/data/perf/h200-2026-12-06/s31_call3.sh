#!/usr/bin/env bash
# Session 31, call 3: the GPU tests the ceilings-first change touches (the probe on the GPU, the lab's early work and
# harness, the runner's GPU checks), then corpus-bench liger_rope (issue 35) while CB_DEADLINE_S allows.
# Carry: .carry/build (kopt, kopt_tests, the probe, COMMIT), examples/corpus/_fetched; this script as .carry/call3.sh.
set -u
export OUT=${OUT:-$PWD/check_out} KOPT_DATA_DIR=$PWD/data
T0=$(date +%s)
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
mkdir -p "$OUT/keep"
timeout 170 .carry/build/kopt_tests --gtest_filter='CeilingsGpu.*:CeilingsProbe*:SystemLab.*:GoldenStore.*:RunnerGpu.*' 2>&1 \
  | tee "$OUT/keep/gpu_tests.log" | grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED) |^\[==========\]|Failure|probe:" | tail -60
echo "gpu tests [$(( $(date +%s) - T0 )) s]"
CB_CASES=off CB_TIME_BUDGET_S=20 CB_MIN_KERNEL_S=110 CB_DEADLINE_S=${CB_DEADLINE_S:-250} \
  bash scripts/device/check.sh corpus-bench liger_rope 2>&1 \
  | grep -E "^corpus|===|rc=|Kernels run|Median|kernel +median|champion|golden data|contract" | cut -c1-300 | tail -30
mv "$OUT"/corpus_bench.tgz "$OUT"/corpus_table.* "$OUT/keep/" 2>/dev/null
tar czf "$OUT/s31_call3.tgz" -C "$OUT" keep && rm -rf "$OUT/keep"
echo "=== end [$(( $(date +%s) - T0 )) s]"
