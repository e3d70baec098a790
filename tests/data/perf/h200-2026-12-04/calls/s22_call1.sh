#!/usr/bin/env bash
# Call 1 (session 22, run at 02:02 UTC once the device was lent again), at a6d8b41: time to result cold then warm (the near-peak stop at the measured roof, kept proposals: the warm run's reuse
# line should say 0 new; the end of the run asking for the ephemeral seed first), then the default GPU tests, then
# issue 35's cutlass_layernorm at a 40 s search budget (session 21's call 4 was lost).
# Carry: .carry/build/kopt, .carry/build/kopt_tests, .carry/build/COMMIT, this script as .carry/call.sh,
# .carry/cutlass.tgz, examples/corpus/_fetched/cutlass (bash scripts/device/carry_build.sh; scripts/carry_cutlass.sh).
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s]"; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
echo "=== 1. time to result $(el)"
TTR_OPT_LIMIT_S=140 timeout 300 bash scripts/device/check.sh time-to-result optimize 2>&1 | grep -E "Whole wall|rc=|history|reuse|phases" | cut -c1-400
cp -r runs/json $OUT/ttr_json 2>/dev/null
grep -hE "the proposals of|near_peak|stopped:" $OUT/ttr_opt_warm.log $OUT/ttr_opt_cold.log | cut -c1-260 | head -12
echo "=== 2. GPU tests $(el)"
timeout 150 bash scripts/device/check.sh gpu-tests 2>&1 | tail -8
echo "=== end $(el)"
