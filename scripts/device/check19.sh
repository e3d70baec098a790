#!/usr/bin/env bash
# Device check 19 (2026-12-01, third session, nvidia-h200): the shared-memory fill's GPU test (issue 18), then
# issue 15's plain kernels sgemm_tiled and reduction_define with kopt's default flags (the one-step start of the
# search, near_peak only after an iteration, the clean L2 flush), each optimize capped at OPT_LIMIT_S by SIGINT,
# their sweeps (sgemm_tiled's at every case of its workload matrix).
# Prepare here: cmake --build build && bash scripts/device/carry_build.sh
# Run there: bash scripts/device/check19.sh   (carry [".carry"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_check
cat .carry/build/COMMIT
step "gpu test: the shared-memory fill" 90 .carry/build/kopt_tests \
  --gtest_filter='RunnerGpu.TheSharedMemoryFillExposesAReadOfSharedMemoryNobodyWrote' 2>&1 | grep -E "runner|OK|FAILED|Failure|Expected|Which|nan" | head -20
export OPT_LIMIT_S=${OPT_LIMIT_S:-150}
plain_in "${CHECK19_PLAIN_LIMIT_S:-500}" ${CHECK19_PLAIN:-sgemm_tiled reduction_define}
ls -la "$OUT"
