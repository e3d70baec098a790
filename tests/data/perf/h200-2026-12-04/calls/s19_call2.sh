#!/usr/bin/env bash
# Call 2 (session 19): time to result on vector_add, cold then warm, with the baseline's profile when needed
# (--baseline-profile when-needed, the new default) and, for the same-session comparison, gate; then the evidence GPU
# tests (the answer-key reader fixture reads headers first).
set -u
export OUT=${OUT:-$PWD/check_out}
K=$PWD/.carry/build/kopt
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s]"; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
echo "=== 1. time to result $(el)"
TTR_OPT_LIMIT_S=130 timeout 280 bash scripts/device/check.sh time-to-result optimize 2>&1 | grep -vE "^ +[0-9.]+ +\| |^ +[0-9.]+ *$" | grep -E "===|phases|history|Whole wall|gate|iteration|profil|verifying|held-out" | tail -60
echo "=== 2. the same, warm, --baseline-profile gate $(el)"
VA="examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=16777216"
s=$(date +%s.%N); timeout 100 $K optimize $VA --baseline-profile gate --out-dir runs/ttr_gate > $OUT/ttr_gate.log 2>&1; echo "rc=$? $(python3 -c "import time;print(round(time.time()-$s,1))") s"
grep -E "Whole wall|gate 4|profiling" $OUT/ttr_gate.log | head
echo "=== 3. GPU tests $(el)"
timeout 200 .carry/build/kopt_tests --gtest_filter='EvidenceGpu.*' >$OUT/gpu_tests_full.log 2>&1
echo "rc=$?"; grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED) |^\[==========\]|Failure|Expected|Which is|actual|answer-key\]" $OUT/gpu_tests_full.log | tail -40
echo "=== end $(el)"
