#!/usr/bin/env bash
# Session 30, one call for both (when the budget holds one): the Triton check of a546d88's mapped golden files, flashinfer_online_softmax
# (its wrapper now names BLOCK_THREADS, 7c47bd4) and one Triton corpus kernel, then sgemm_tunable 4096^3 seeds 1-3 by whole wall and Kernel Tuner's bayes_opt beside them.
# Carry: .carry/build/kopt, COMMIT, examples/corpus/_fetched, .whl; both call scripts and this one under .carry/.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
TOTAL_S=${TOTAL_S:-575}  # the call's own limit: part 1 about half, part 2 the rest
D1=$(( TOTAL_S * 47 / 100 ))
sed -e "s|CB_DEADLINE_S=440|CB_DEADLINE_S=$D1|" -e 's|liger_dyt fla_logsumexp liger_rope fla_logcumsumexp|flashinfer_online_softmax liger_dyt|' \
  .carry/call1.sh >.carry/c1.sh
cp .carry/call2.sh .carry/c2.sh
timeout $(( TOTAL_S * 52 / 100 )) bash .carry/c1.sh
echo "=== part 2 at $(( $(date +%s) - T0 )) s"
LEFT=$(( TOTAL_S - ($(date +%s) - T0) ))
KT_LIMIT_S=80 SEEDS_UNTIL_S=$(( LEFT - 70 )) timeout $LEFT bash .carry/c2.sh
