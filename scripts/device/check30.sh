#!/usr/bin/env bash
# Device check 30 (prepared 2026-12-01, for the next session; not run yet), about 9.5 minutes: issue 16's five live
# seeds of sgemm_tunable 4096^3 on this build (kopt's default flags, a 70 s budget: 25% of the exhaustive sweep's
# 274 s is 68.5 s), each cut when its held-out shapes start (scripts/device/seed_runs.sh), each run's directory
# archived as it ends. Within 3% means <= 1.03 x 3.0185 ms (the 2026-11-30 sweep). Then peers.py kopt-runs over them.
# Prepare here: cmake --build build && bash scripts/device/carry_build.sh
# Run there: bash scripts/device/check30.sh   (carry [".carry"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/seed_runs.sh"
start_check
cat .carry/build/COMMIT
seed_runs sgemm "${CHECK30_BUDGET:-70}" 3.0185 "${CHECK30_SEEDS:-1 2 3 4 5}" -- examples/sgemm_tunable/kernel.cu \
  --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096
python3 scripts/perf/peers.py kopt-runs runs/sgemm_seed* --table tests/data/perf/h200-2026-11-30/sgemm_tunable_4096_measurements.csv \
  --out "$OUT/kopt_live.json" 2>&1 | tail -7
finish_check
