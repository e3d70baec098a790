#!/usr/bin/env bash
# Session 36, call 2: issue 36's "no result moves" (the timing table of PERFORMANCE.md §5 at this build: kopt beside
# Nsight Compute and nvbench, no GPU tests), then issue 35's fla_chunk_local_cumsum sweep (chunks of 1).
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
mkdir -p "$OUT"
timeout 300 bash scripts/device/check.sh timing no-tests >"$OUT/timing.log" 2>&1; echo "timing rc=$? at $(( $(date +%s) - T0 )) s"
tail -30 "$OUT/timing.log"
left=$(( ${TOTAL_S:-560} - ($(date +%s) - T0) ))
echo "fla sweep with $left s left"
CB_DEADLINE_S=$(( left - 10 )) CB_MIN_KERNEL_S=60 CB_STEPS="bench sweep" CB_CASES=off CB_TRITON_CHUNK=1 CB_SWEEP_LIMIT_S=$(( left - 60 )) \
  timeout $(( left - 5 )) bash scripts/device/check.sh corpus-bench fla_chunk_local_cumsum >"$OUT/fla.log" 2>&1; echo "fla rc=$?"
tail -25 "$OUT/fla.log"
echo "=== end [$(( $(date +%s) - T0 )) s]"
