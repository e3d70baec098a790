#!/usr/bin/env bash
# Call 1 (session 19): time to result on vector_add (cold then warm) at 51713bb; then the GPU tests of the runner
# and the evidence rules (7188fcf: call samples' fresh inputs inside the kernel clock's pause).
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s]"; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
echo "=== 1. time to result $(el)"
TTR_OPT_LIMIT_S=140 timeout 300 bash scripts/device/check.sh time-to-result optimize 2>&1 | grep -vE "^ +[0-9.]+ +\| |^ +[0-9.]+ *$" | tail -60
cp runs/json -r $OUT/ttr_json 2>/dev/null
echo "=== 2. GPU tests $(el)"
timeout 220 .carry/build/kopt_tests --gtest_filter='RunnerGpu.*:EvidenceGpu.*' >$OUT/gpu_tests_full.log 2>&1
echo "rc=$?"; grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED) |^\[==========\]|Failure|Expected|Which is|actual" $OUT/gpu_tests_full.log | tail -80
echo "=== end $(el)"
