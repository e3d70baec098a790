#!/usr/bin/env bash
# Device check 36 (prepared 2026-12-02, ninth session; not yet run): issue 16's live seeds with the picks' design
# (docs/SEARCH.md: when an iteration picks declared methods, the first design holds them on and spreads over the
# parameters), on the stored sweep tables of the eighth session (transpose 8192 x 8192, best 0.131775 ms; reduction
# n = 2^26, best 0.062815 ms; both sweeps' walls 55 s and 53 s, so a budget of 14 s, 25%) or of 2026-11-30 (sgemm_tunable
# 4096^3, best 3.018464 ms, sweep 274 s, budget 70 s as in the seventh session). CHECK36_KERNEL = transpose, reduction
# or sgemm; five seeds by default (about 5-6 device minutes for transpose or reduction, the golden-data cache from the
# second seed on; about 12 for sgemm: run CHECK36_SEEDS="1 2 3" and "4 5" as two calls). Each run is cut once its
# budget is spent and its final champion verified (seed_runs.sh). What to compare with: docs/PERFORMANCE.md §6,
# eighth session (transpose 4 of 5, median 11.0 s; reduction 5 of 5, median 7.2 s) and the replay's expectation
# (within 3% by the end of the first iteration, about 6 s after the gates, in nearly every seed).
# Run there: CHECK36_KERNEL=transpose bash scripts/device/check36.sh   (carry [".carry"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/seed_runs.sh"
start_check
cat .carry/build/COMMIT
NAME=${CHECK36_KERNEL:-transpose}
SEEDS=${CHECK36_SEEDS:-1 2 3 4 5}
case "$NAME" in
  transpose) seed_runs transpose "${CHECK36_BUDGET:-14}" 0.131775 "$SEEDS" -- examples/transpose/kernel.cu \
               --ref examples/transpose/ref.py --rows=8192 --cols=8192 ;;
  reduction) seed_runs reduction "${CHECK36_BUDGET:-14}" 0.062815 "$SEEDS" -- examples/reduction/kernel.cu \
               --ref examples/reduction/ref.py --n=67108864 ;;
  sgemm) seed_runs sgemm "${CHECK36_BUDGET:-70}" 3.018464 "$SEEDS" -- examples/sgemm_tunable/kernel.cu \
           --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096 ;;
  *) echo "CHECK36_KERNEL: transpose, reduction or sgemm"; exit 2 ;;
esac
finish_check
