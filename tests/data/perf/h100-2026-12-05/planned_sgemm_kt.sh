#!/usr/bin/env bash
# Planned (issue 36), not run yet (sessions 27, 28: no device time left for it): sgemm_tunable 4096^3 by whole wall, which no call has measured since
# 12-03 (cold: first candidate 66.0 s, cut at 140 s). 1. `check.sh time-to-result sgemm` on the fresh machine (kopt's
# default optimize, every line stamped; golden data now written beside the next seed's work, 47f5fb7); 2. the search
# seeds 2-5 of the same command over a fresh KOPT_CACHE_DIR each (the machine warm), each under 100 s; 3. Kernel
# Tuner's bayes_opt live on the same space (`check.sh kt-live bayes_opt:1`; carry .whl: `pip download --no-deps
# kernel_tuner scipy scikit-learn ...` as the device README says). Whole wall from each command's start, compared
# with the sweep's best in h200-2026-12-01/ (within 3%).
# Carry: .carry/build/kopt, .carry/build/COMMIT, .whl, this script as .carry/call.sh.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
mkdir -p "$OUT/keep"
TTR_SGEMM_LIMIT_S=150 timeout 170 bash scripts/device/check.sh time-to-result sgemm 2>&1 | grep -E "^phases|^history|rc=|===|Whole wall" | cut -c1-500
ST="examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096"
for s in 2 3 4 5; do
  [ $(( $(date +%s) - T0 )) -lt 420 ] || { echo "seed $s: not started"; continue; }
  # shellcheck disable=SC2086
  KOPT_CACHE_DIR=$PWD/runs/cache_s$s timeout -s INT 100 .carry/build/kopt optimize $ST --search-seed "$s" --out-dir "runs/sg_s$s" \
    >"$OUT/keep/sgemm_seed$s.log" 2>&1
  echo "seed $s rc=$? $(grep -h 'Whole wall' "$OUT/keep/sgemm_seed$s.log" | tail -1)"
  d=$(ls -d runs/sg_s$s/kopt_runs/*_* 2>/dev/null | head -1); [ -n "$d" ] && cp "$d/state.json" "$OUT/keep/sgemm_seed${s}_state.json"
done
[ -d .whl ] && timeout 120 bash scripts/device/check.sh kt-live bayes_opt:1 2>&1 | tail -8
tar czf "$OUT/s28_call2.tgz" -C "$OUT" keep && rm -rf "$OUT/keep"
echo "=== end [$(( $(date +%s) - T0 )) s]"
