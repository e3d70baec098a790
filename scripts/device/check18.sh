#!/usr/bin/env bash
# Device check 18 (2026-12-01, third session, nvidia-h200): whether the clean L2 flush closes the gap to Nsight
# Compute at 13-27 us (timing_check.sh with TIMING_QUICK=1, issue 17), then issue 15's plain kernels sgemm_tiled and
# elementwise_templated with kopt's default flags (each optimize capped at OPT_LIMIT_S by SIGINT) and their sweeps.
# Prepare here: cmake --build build && bash scripts/device/carry_build.sh && bash scripts/device/carry_timing.sh
# Run there: bash scripts/device/check18.sh   (carry [".carry"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cat .carry/build/COMMIT
TIMING_QUICK=1 timeout 150 bash scripts/device/timing_check.sh
mv "$OUT/runs_json.tgz" "$OUT/timing_runs_json.tgz" 2>/dev/null
export OPT_LIMIT_S=${OPT_LIMIT_S:-150}
plain_in "${CHECK18_PLAIN_LIMIT_S:-420}" ${CHECK18_PLAIN:-sgemm_tiled elementwise_templated}
ls -la "$OUT"
