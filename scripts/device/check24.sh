#!/usr/bin/env bash
# Device check 24 (2026-12-01, fifth session, nvidia-h200), about 9 minutes: the runner's GPU tests on this build
# (RunMode, the golden store), issue 15's sgemm_tiled with kopt's defaults (the search now ranks by the weighted
# objective, 05fceb9) with its sweeps at every case of the workload matrix, then issue 18's `va` run (candidates
# raced at every case) if time is left. Each later step gets what is left of CHECK24_S (default 570 s).
# Prepare here: cmake --build build && bash scripts/device/carry_build.sh
# Run there: bash scripts/device/check24.sh   (carry [".carry"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
END=$(( $(date +%s) + ${CHECK24_S:-570} ))
left() { echo $(( END - $(date +%s) )); }
cat .carry/build/COMMIT
step "runner GPU tests" 150 .carry/build/kopt_tests \
  --gtest_filter="${CHECK24_TESTS:-RunnerGpu.*:Cupti*:Blocker*:TimingMethod*:Watchdog*:GoldenStore.*}" 2>&1 | \
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]|Failure" | tail -30
export OPT_LIMIT_S=${CHECK24_SGEMM_S:-200} PLAIN_CASE_SWEEPS=sgemm_tiled
L=$(left); plain_in "$(( L < 400 ? L : 400 ))" sgemm_tiled
L=$(left); [ "$L" -gt 100 ] && GATES_RUNS=va timeout "$L" bash scripts/device/gates_check.sh
ls -la "$OUT"
