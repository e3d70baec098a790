#!/usr/bin/env bash
# Device check 29 (2026-12-01, sixth session, nvidia-h200), about 5 minutes: seeds 4 and 5 of check28's live runs
# (sgemm_tunable 4096^3, kopt's default flags, a 70 s budget; the same build), each run to its end, with its run
# directory (logs, selection.json with the sanitizer's per-tool walls) brought back after each seed.
# Run there: bash scripts/device/check29.sh   (carry [".carry"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/seed_runs.sh"
start_check
cat .carry/build/COMMIT
SEED_RUNS_CUT=0 seed_runs sgemm "${CHECK29_BUDGET:-70}" 3.0185 "${CHECK29_SEEDS:-4 5}" -- examples/sgemm_tunable/kernel.cu \
  --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096
grep -h "sanitizer\|determinism\|vs \|iteration" runs/sgemm_seed4.log | head -40
finish_check
