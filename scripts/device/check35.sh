#!/usr/bin/env bash
# Device check 35 (2026-12-02, eighth session, nvidia-h200): issue 16's transpose 8192 x 8192 live seeds again with the
# champion's safety gates on the final champion (--champion-gates final, the default since ee28853) and the
# golden-data cache, against check 31's sweep of the same session (best 0.131775 ms; its wall 55 s, so a budget of
# 25%: 14 s). Each run is cut once its budget is spent and its final champion verified (seed_runs.sh).
# Run there: bash scripts/device/check35.sh   (carry [".carry"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/seed_runs.sh"
start_check
cat .carry/build/COMMIT
seed_runs transpose "${CHECK35_BUDGET:-14}" "${CHECK35_BEST:-0.131775}" "${CHECK35_SEEDS:-1 2 3 4 5}" -- examples/transpose/kernel.cu \
  --ref examples/transpose/ref.py --rows=8192 --cols=8192
finish_check
