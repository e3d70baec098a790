#!/usr/bin/env bash
# Session 33, call 3, on call 2's machine while warm: (1) optimize vector_add 2^24 over fresh kopt caches on the warm
# machine (call 1's conditions: 39.0 s before the probe's pinned memory and the at-roof stop); (2) issue 35:
# fla_logsumexp's optimize under the Triton cap (session 32's call cut it at 68 s after 65 s of gates).
set -u
export OUT=${OUT:-$PWD/check_out} KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
. scripts/device/lib.sh
K=$PWD/.carry/build/kopt; mkdir -p "$OUT/keep" runs
VA="examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=16777216"
rm -rf ~/.cache/kopt/doctor runs/cache_va3 runs/va_cold3
( KOPT_CACHE_DIR=$PWD/runs/cache_va3 timeout -s INT 80 $K optimize $VA --out-dir runs/va_cold3 </dev/null 2>&1 | stamp >"$OUT/keep/va_cold3.log" )
d=$(ls -d runs/va_cold3/kopt_runs/*_* | head -1); cp $d/state.json "$OUT/keep/va_cold3_state.json"
python3 -c "
import json;s=json.load(open('$d/state.json'));print('va_cold3', {k:round(v,1) for k,v in s['wall'].items() if v is not None}, {k:round(v,1) for k,v in s['phase_seconds'].items()}, s['stop_reason'], s['iterations_done'])"
tar czf "$OUT/s33_call3.tgz" -C "$OUT" keep
OUT=$OUT/a CB_STEPS="optimize" CB_DEADLINE_S=215 CB_MIN_KERNEL_S=150 CB_WALL_S=240 bash scripts/device/check.sh corpus-bench fla_logsumexp 2>&1 | tail -14
ls $OUT/a
