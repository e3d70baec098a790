#!/usr/bin/env bash
# Device check 23 (2026-12-01, fourth session, nvidia-h200), about 9 minutes: issue 15's triton_literal (near_peak now
# needs two iterations without gain) and sgemm_tiled with kopt's default flags, each optimize capped at its limit by
# SIGINT, and their sweeps at the full case; then the quick timing table (issue 17, TIMING_QUICK=1) if time is left
# (CHECK23_S, default 560 s in all).
# Prepare here: cmake --build build && bash scripts/device/carry_build.sh
# Run there: bash scripts/device/check23.sh   (carry [".carry"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
END=$(( $(date +%s) + ${CHECK23_S:-560} ))
left() { echo $(( END - $(date +%s) )); }
cat .carry/build/COMMIT
export PLAIN_CASE_SWEEPS="${PLAIN_CASE_SWEEPS:-none}"
OPT_LIMIT_S=${CHECK23_TRITON_S:-200} plain_in 260 triton_literal
mv "$OUT/plain.tgz" "$OUT/plain_triton.tgz"
OPT_LIMIT_S=${CHECK23_SGEMM_S:-170} plain_in "$(( $(left) < 260 ? $(left) : 260 ))" sgemm_tiled
L=$(left); [ "$L" -gt 90 ] && TIMING_QUICK=1 timeout "$L" bash scripts/device/timing_check.sh
ls -la "$OUT"
