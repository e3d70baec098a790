#!/usr/bin/env bash
# Device check 25 (2026-12-01, fifth session, nvidia-h200), about 9 minutes: issue 15's elementwise_templated and
# reduction_define again with kopt's default flags on this build (the search ranks by the weighted objective,
# 05fceb9; both are CUDA, so both race at every case), each optimize capped by SIGINT, with their sweeps at every
# case of the workload matrix; then triton_literal if time is left (CHECK25_S, default 570 s in all).
# Prepare here: cmake --build build && bash scripts/device/carry_build.sh
# Run there: bash scripts/device/check25.sh   (carry [".carry"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
END=$(( $(date +%s) + ${CHECK25_S:-570} ))
left() { echo $(( END - $(date +%s) )); }
cat .carry/build/COMMIT
export PLAIN_CASE_SWEEPS="elementwise_templated reduction_define"
OPT_LIMIT_S=${CHECK25_EW_S:-165} plain_in 280 elementwise_templated
mv "$OUT/plain.tgz" "$OUT/plain_elementwise.tgz"
OPT_LIMIT_S=${CHECK25_RED_S:-165} plain_in "$(( $(left) < 280 ? $(left) : 280 ))" reduction_define
L=$(left); [ "$L" -gt 250 ] && { mv "$OUT/plain.tgz" "$OUT/plain_reduction.tgz"; OPT_LIMIT_S=$(( L - 60 )) plain_in "$L" triton_literal; }
ls -la "$OUT"
