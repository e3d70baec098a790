#!/usr/bin/env bash
# Device check 21 (2026-12-01, fourth session, nvidia-h200), about 9 minutes: the runner's GPU tests on this build
# (ClockedSamples, the fill, the golden store), issue 18's default-matrix and shapes-file runs to their summaries
# (gates_check.sh va tr), then issue 15's elementwise_templated with kopt's defaults and its sweeps, then the tile
# run if time is left. Each later step gets what is left of CHECK21_S (default 560 s).
# Prepare here: cmake --build build && bash scripts/device/carry_build.sh
# Run there: bash scripts/device/check21.sh   (carry [".carry"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
END=$(( $(date +%s) + ${CHECK21_S:-560} ))
left() { echo $(( END - $(date +%s) )); }
cat .carry/build/COMMIT
step "runner GPU tests" 150 .carry/build/kopt_tests \
  --gtest_filter="${CHECK21_TESTS:-RunnerGpu.*:Cupti*:Blocker*:TimingMethod*:Watchdog*:GoldenStore.*}" 2>&1 | \
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]|OK \]|Failure" | tail -60
GATES_RUNS="${CHECK21_GATES:-va tr}" timeout $(( $(left) - ${CHECK21_PLAIN_S:-250} )) bash scripts/device/gates_check.sh
export OPT_LIMIT_S=${OPT_LIMIT_S:-170} PLAIN_CASE_SWEEPS="${PLAIN_CASE_SWEEPS:-elementwise_templated}"
L=$(left); [ "$L" -gt 60 ] && plain_in "$(( L - 5 ))" ${CHECK21_PLAIN:-elementwise_templated}
L=$(left); [ "$L" -gt 80 ] && GATES_RUNS=tile timeout "$L" bash scripts/device/gates_check.sh
ls -la "$OUT"
