#!/usr/bin/env bash
# Device check 20 (2026-12-01, third session, nvidia-h200): issue 15's plain kernels elementwise_templated,
# triton_literal and reduction_define (at 16 M elements) with kopt's default flags, each optimize capped at
# OPT_LIMIT_S by SIGINT (what it measured is kept), and their sweeps; then issue 18's shared-memory fill on a kernel
# that reads shared memory nobody wrote (gates_check.sh's halo run).
# Prepare here: cmake --build build && bash scripts/device/carry_build.sh
# Run there: bash scripts/device/check20.sh   (carry [".carry"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cat .carry/build/COMMIT
export OPT_LIMIT_S=${OPT_LIMIT_S:-120} PLAIN_CASE_SWEEPS="${PLAIN_CASE_SWEEPS:-elementwise_templated}"
plain_in "${CHECK20_PLAIN_LIMIT_S:-480}" ${CHECK20_PLAIN:-elementwise_templated triton_literal reduction_define}
GATES_RUNS="${CHECK20_GATES:-halo}" timeout 90 bash scripts/device/gates_check.sh
ls -la "$OUT"
