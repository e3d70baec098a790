#!/usr/bin/env bash
# Session 27, call 1 (planned for session 26 as planned_s26_call1.sh; run on an H100 at 19fcd91, 2026-12-05 15:08 UTC): session 25's call 2 (s25_call2.sh beside this file: corpus-bench on the
# Triton kernels liger_rms_norm, liger_softmax, fla_softmax, liger_layer_norm, then each candidate's phases_ms) again
# after 48dfeb8, where the fork server preloads a Triton kernel's installed imports (docs/TRITON.md), to measure what
# that saves (s25: a child 7.7 s, 5.2 of it importing the kernel; 2 candidates a kernel in a 160 s cap; the sweep 0 of
# 35 in 150 s), and after the session of 2026-12-05 afternoon, where BLOCK_SIZE of liger_rms_norm, liger_softmax and
# liger_layer_norm says covers=n_cols (values below n_cols leave kopt's space and the sweep: the sweep's wrong points,
# 14 of 35 for liger_rms_norm in s25, are no longer run). Then the fork servers' logs: "preloaded N installed
# module(s) ... in S s", or why one did not serve.
# Carry: .carry/build/kopt, .carry/build/COMMIT, this script as .carry/call.sh, examples/corpus/_fetched.
set -u
export OUT=${OUT:-$PWD/check_out}
mkdir -p "$OUT"
bash tests/data/perf/h100-2026-12-05/s25_call2.sh
[ -f "$OUT/s25_call2.tgz" ] && mv "$OUT/s25_call2.tgz" "$OUT/s26_call1.tgz"
for f in "${TMPDIR:-/tmp}"/kopt-forkserver-*/*.log; do echo "== $f"; tail -5 "$f"; done >"$OUT/forkserver_logs.txt" 2>&1
grep -h "preloaded\|not serving" "$OUT/forkserver_logs.txt" | head
