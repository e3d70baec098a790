#!/usr/bin/env bash
# Planned, not run (session 23 spent its device time; session 24 was lent none): issue 35's Triton corpus kernels, which no call has benchmarked
# but liger_rms_norm (zero candidates in a 100 s cap, s21): the optimize's progress timestamped (where a Triton
# kernel's gates go), then corpus-bench on up to four of the eleven Triton kernels, as many as the deadline lets start (at the reduced dims of
# scripts/device/corpus_bench.sh; the sweep at kopt's three cases; everything packed into ONE file in $OUT, since the
# device tool brings back about eight files).
# Carry: .carry/build/kopt, .carry/build/COMMIT, this script as .carry/call.sh, examples/corpus/_fetched.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
export KOPT_DATA_DIR=$PWD/data
mkdir -p "$OUT/keep"
echo "=== 1. optimize liger_softmax 4096 x 4096, timestamped [$(( $(date +%s) - T0 )) s]"
timeout -s INT 150 .carry/build/kopt optimize examples/corpus/liger_softmax/kernel.py --ref examples/corpus/liger_softmax/ref.py \
  --n_rows=4096 --n_cols=4096 --time-budget 40 --out-dir runs/ts 2>&1 \
  | while IFS= read -r l; do echo "[$(( $(date +%s) - T0 ))] $l"; done >"$OUT/keep/liger_softmax_optimize.log"
grep -E "gate|gates passed|stopped|champion" "$OUT/keep/liger_softmax_optimize.log" | head -20
# Where a Triton race's 3 s go (s23: 3.0 s a race, 3.3 s at the other cases, 0.28 and 0.38 s for CUDA): each candidate's
# run.json holds the Triton child's phases_ms (interpreter start, imports, golden load, sealing, kernel import, device
# init, first call with the JIT, verify, timing).
find runs/ts -name run.json | head -60 | tar czf "$OUT/keep/liger_softmax_candidate_runs.tgz" -T - 2>/dev/null
python3 - runs/ts <<'PY' | tee "$OUT/keep/liger_softmax_phases.txt"
import glob, json, statistics, sys
per = {}
for f in glob.glob(sys.argv[1] + "/**/run.json", recursive=True):
    try: ph = json.load(open(f)).get("phases_ms") or {}
    except Exception: continue
    for k, v in ph.items(): per.setdefault(k, []).append(v)
for k, v in sorted(per.items(), key=lambda kv: -statistics.median(kv[1])):
    print(f"{k:24s} median {statistics.median(v):9.1f} ms  max {max(v):9.1f} ms  n={len(v)}")
PY
echo "=== 2. corpus-bench [$(( $(date +%s) - T0 ))s]"
CB_TIME_BUDGET_S=40 CB_MIN_KERNEL_S=150 CB_DEADLINE_S=$((560 - ($(date +%s) - T0))) CB_WALL_S=$((570 - ($(date +%s) - T0))) \
  bash scripts/device/check.sh corpus-bench liger_rms_norm fla_softmax liger_rope liger_layer_norm 2>&1 \
  | grep -E "^corpus|===|rc=|Kernels run|Median" | tail -30
mv "$OUT"/corpus_bench.tgz "$OUT"/corpus_table.* "$OUT/keep/" 2>/dev/null
tar czf "$OUT/s25_call2.tgz" -C "$OUT" keep && rm -rf "$OUT/keep" "$OUT"/runs_json_*.tgz
echo "=== end [$(( $(date +%s) - T0 )) s]"
