#!/usr/bin/env bash
# Planned, not run (session 24 was lent no device): issue 36's figures for the defaults session 24 built and tested
# on the CPU only: no baseline profile after the search (--baseline-profile after keeps it), gate 2's check at the
# user's case beside the cases' golden data, the sanitizer's verdicts
# and the held-out shapes' runs kept across runs (docs/GATES.md "Evidence kept across runs"). The whole-wall suite
# on vector_add 2^24, cold then warm (the same machine's caches and database), then the warm run again with
# KOPT_EVIDENCE_CACHE=off (what the evidence cache saves, on the same machine), each stderr timestamped; everything
# packed into ONE file in $OUT. Expected (from s22's phases): cold about 86 s (103.6 less the 15.5 s profile and the
# baseline's 2.4 s check, now beside the cases' 8.3 s of golden data; first candidate about 34.5 s), warm about 12 s
# (23.1 less 6.7 s of sanitizer and 4.2 s of held-out shapes); the same champion and decisions.
# Carry: .carry/build/kopt, .carry/build/COMMIT, this script as .carry/call.sh.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
mkdir -p "$OUT/keep"
echo "=== 1. time-to-result optimize (cold, then warm) [$(( $(date +%s) - T0 )) s]"
timeout 420 bash scripts/device/check.sh time-to-result optimize 2>&1 | tail -40
echo "=== 2. the warm run with KOPT_EVIDENCE_CACHE=off [$(( $(date +%s) - T0 )) s]"
KOPT_EVIDENCE_CACHE=off timeout -s INT 120 .carry/build/kopt optimize examples/vector_add/kernel.cu \
  --ref examples/vector_add/ref.py --n=16777216 --out-dir runs/ttr_evidence_off 2>&1 \
  | while IFS= read -r l; do echo "[$(( $(date +%s) - T0 ))] $l"; done >"$OUT/keep/warm_evidence_off.log"
grep -E "gate 1/4|gates passed|sanitizer|held-out|Whole wall" "$OUT/keep/warm_evidence_off.log" | head -20
mv "$OUT"/*.log "$OUT"/*.tgz "$OUT/keep/" 2>/dev/null
tar czf "$OUT/s25_call1.tgz" -C "$OUT" keep && rm -rf "$OUT/keep"
echo "=== end [$(( $(date +%s) - T0 )) s]"
