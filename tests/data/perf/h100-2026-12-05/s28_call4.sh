#!/usr/bin/env bash
# Session 28, call 4 (issue 35), run on an H100 at 6a29e9a, cut by its timeout 540 before it packed (corpus-bench's own tgz came back): fla_softmax and liger_geglu, the kernels call 3 left; the Triton corpus with the fork server's preload serving (session
# 27, 8b00a1f: OMP_NUM_THREADS=1 in a preload server; a candidate 8.6 s over three cases against 29 s) and the Triton
# sweep's evened-out timing (a chunk that fell back timed one point a run; the finalists together): corpus-bench on
# liger_rms_norm (its sweep again: s27 call 1 read its project point 0.065 ms against kopt bench's 0.049), then
# liger_layer_norm, fla_softmax, liger_geglu as the deadline lets; optimize.log now stamps each line (where the Triton
# gates' 79 s on a fresh machine go). Then the fork servers' logs ("preloaded N installed module(s) ... in S s", or
# why one did not serve) and the candidates' phases.
# Carry: .carry/build/kopt, .carry/build/COMMIT, this script as .carry/call.sh, examples/corpus/_fetched.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
export KOPT_DATA_DIR=$PWD/data
mkdir -p "$OUT/keep"
CB_CASES=off CB_TIME_BUDGET_S=40 CB_MIN_KERNEL_S=150 CB_DEADLINE_S=480 \
  bash scripts/device/check.sh corpus-bench fla_softmax liger_geglu 2>&1 \
  | grep -E "^corpus|===|rc=|Kernels run|Median|kernel +median|champion" | cut -c1-400 | tail -40
mv "$OUT"/corpus_bench.tgz "$OUT"/corpus_table.* "$OUT/keep/" 2>/dev/null
for f in "${TMPDIR:-/tmp}"/kopt-forkserver-*/*.log; do echo "== $f"; tail -5 "$f"; done >"$OUT/keep/forkserver_logs.txt" 2>&1
grep -h "preloaded\|not serving" "$OUT/keep/forkserver_logs.txt" | cut -c1-300 | head
find runs/cb -path '*/opt/*' -name run.json | head -300 | tar czf "$OUT/keep/candidate_runs.tgz" -T - 2>/dev/null
tar czf "$OUT/s28_call4.tgz" -C "$OUT" keep && rm -rf "$OUT/keep"
echo "=== end [$(( $(date +%s) - T0 )) s]"
