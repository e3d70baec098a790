#!/usr/bin/env bash
# Device check 22 (2026-12-01, fourth session, nvidia-h200), about 9 minutes: issue 15's reduction_define (16 M) and
# triton_literal with kopt's default flags, each optimize capped at OPT_LIMIT_S by SIGINT (what it measured is
# kept), and their sweeps; then the tile run of gates_check.sh if time is left (CHECK22_S, default 540 s in all).
# Prepare here: cmake --build build && bash scripts/device/carry_build.sh
# Run there: bash scripts/device/check22.sh   (carry [".carry"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
END=$(( $(date +%s) + ${CHECK22_S:-540} ))
left() { echo $(( END - $(date +%s) )); }
cat .carry/build/COMMIT
export OPT_LIMIT_S=${OPT_LIMIT_S:-160} PLAIN_CASE_SWEEPS="${PLAIN_CASE_SWEEPS:-none}"
plain_in "$(( $(left) - ${CHECK22_TILE_S:-90} ))" ${CHECK22_PLAIN:-reduction_define triton_literal}
L=$(left); [ "$L" -gt 60 ] && GATES_RUNS=tile timeout "$L" bash scripts/device/gates_check.sh
ls -la "$OUT"
