#!/usr/bin/env bash
# Device check 13 (2026-12-01, nvidia-h200): the new timing side by side with Nsight Compute and nvbench (issue 17,
# scripts/device/timing_check.sh, which also runs the runner's GPU tests, the measuring worker's included), then a
# first optimize of sgemm_tunable 4096^3 with the new loop (the worker, races, budget; `--time-budget 120`) for its
# per-candidate costs and phases.
# Prepare here: cmake --build build && bash scripts/device/carry_build.sh && bash scripts/device/carry_timing.sh
# Run there: bash scripts/device/check13.sh   (carry [".carry/build", ".carry/timing", ".carry/wheels"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_check
cat .carry/build/COMMIT
timeout 330 bash scripts/device/timing_check.sh
mv "$OUT/runs_json.tgz" "$OUT/timing_runs_json.tgz" 2>/dev/null
SG="examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096"
step "optimize sgemm_tunable 4096 (budget 120 s)" 240 $K optimize $SG --time-budget 120 --out runs/sg1 </dev/null \
  >"$OUT/optimize_sgemm.log" 2>&1
tail -60 "$OUT/optimize_sgemm.log"
summ sg1
D=$(ls -d runs/sg1/kopt_runs/run_* 2>/dev/null | head -1)
[ -n "$D" ] && tar czf "$OUT/sg1_run.tgz" --exclude='*.so' --exclude='*.ncu-rep' --exclude='golden' --exclude='*.safetensors' -C "$(dirname "$D")" "$(basename "$D")"
finish_check
