#!/usr/bin/env bash
# Session 33, call 4 (warm machine): the GPU tests of the timer's probe (pinned looks) and the evidence rules.
export OUT=${OUT:-$PWD/check_out}
cat .carry/build/COMMIT
timeout 170 .carry/build/kopt_tests --gtest_filter='TimingMethod*:RunnerGpu.*:EvidenceGpu.*:Blocker*' >"$OUT/gpu_tests_full.log" 2>&1
echo "rc=$?"
grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED) |^\[==========\]|Failure" "$OUT/gpu_tests_full.log" | tail -70
