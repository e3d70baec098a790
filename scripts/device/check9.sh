#!/usr/bin/env bash
# Device check 9 (2026-11-30, nvidia-h200-x2), issue 10's remaining figures.
#   GPU 0: the transpose's new space, point by point (kopt bench of 12 configurations, the reference timed once);
#          the Triton child's phases (kopt bench of the Triton softmax twice: a cold and a warm Triton cache);
#          optimize on the reduction (after the ncu fix) to its end.
#   GPU 1: optimize on sgemm_tunable 4096^3 with the fixed generator (defaults, --max-time-s 1); optimize on the
#          transpose with its new space.
# Logs: gpu0.txt, gpu1.txt; summaries, roofline and phase JSON in runs_json.tgz.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_check
phases() {  # every runner result under runs/$1 with phases_ms: its mode, first_call and phases
  find runs/$1 -name '*.json' | while read -r f; do python3 - "$f" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception:
    sys.exit(0)
if isinstance(d, dict) and "phases_ms" in d:
    print(sys.argv[1], d.get("mode"), d.get("status"), json.dumps(d["phases_ms"]))
PY
  done; mkdir -p runs/json/$1; find runs/$1 -name '*.json' -exec grep -l phases_ms {} + | while read -r f; do cp "$f" runs/json/$1/$(basename $(dirname "$f"))_$(basename "$f"); done
}
stream0() {
  export CUDA_VISIBLE_DEVICES=0
  TR="examples/transpose/kernel.cu --ref examples/transpose/ref.py --rows=8192 --cols=8192"
  V="-DKOPT_SMEM_PADDING=1 -DKOPT_VECTORIZED_ACCESS=1 -DKOPT_VECTORIZED_STORES=1 -DKOPT_GROUPED_LAUNCH_ORDERING=1"
  for d in "--rows=1000 --cols=1030" "--rows=1030 --cols=1001" "--rows=333 --cols=4096" "--rows=1 --cols=77"; do
    step tr_edges 40 $K bench examples/transpose/kernel.cu --ref examples/transpose/ref.py $d $V -DTILE=64 -DBLOCK_ROWS=4 --max-time-s 0.1 --no-reference-timing --out runs/te
  done
  step tr_default 60 $K bench $TR --seeds 1 --max-time-s 0.5 --out runs/tb0
  i=1
  for cfg in "-DKOPT_SMEM_PADDING=1" \
             "-DKOPT_SMEM_PADDING=1 -DKOPT_GROUPED_LAUNCH_ORDERING=1" \
             "-DKOPT_SMEM_PADDING=1 -DKOPT_VECTORIZED_STORES=1" \
             "-DKOPT_SMEM_PADDING=1 -DKOPT_VECTORIZED_ACCESS=1" \
             "-DKOPT_SMEM_PADDING=1 -DKOPT_VECTORIZED_ACCESS=1 -DKOPT_VECTORIZED_STORES=1" \
             "-DKOPT_SMEM_PADDING=1 -DKOPT_VECTORIZED_ACCESS=1 -DKOPT_VECTORIZED_STORES=1 -DKOPT_GROUPED_LAUNCH_ORDERING=1" \
             "-DTILE=64 -DBLOCK_ROWS=8 -DKOPT_SMEM_PADDING=1" \
             "-DTILE=64 -DBLOCK_ROWS=8 -DKOPT_SMEM_PADDING=1 -DKOPT_VECTORIZED_ACCESS=1 -DKOPT_VECTORIZED_STORES=1" \
             "-DTILE=64 -DBLOCK_ROWS=16 -DKOPT_SMEM_PADDING=1 -DKOPT_VECTORIZED_ACCESS=1 -DKOPT_VECTORIZED_STORES=1 -DKOPT_GROUPED_LAUNCH_ORDERING=1" \
             "-DTILE=32 -DBLOCK_ROWS=32 -DKOPT_SMEM_PADDING=1 -DKOPT_GROUPED_LAUNCH_ORDERING=1" \
             "-DTILE=32 -DBLOCK_ROWS=16 -DKOPT_SMEM_PADDING=1 -DKOPT_VECTORIZED_STORES=1 -DKOPT_GROUPED_LAUNCH_ORDERING=1"; do
    step tr_$i 40 $K bench $TR $cfg --seeds 1 --max-time-s 0.5 --no-reference-timing --out runs/tb$i
    i=$((i+1))
  done
  TS="examples/triton_softmax/kernel.py --ref examples/triton_softmax/ref.py --n_rows=8192 --n_cols=4096"
  rm -rf ~/.triton/cache
  step triton_cold 90 $K bench $TS --max-time-s 0.5 --no-reference-timing --out runs/ts1; phases ts1
  step triton_warm 90 $K bench $TS --max-time-s 0.5 --no-reference-timing --out runs/ts2; phases ts2
  step reduction 170 $K optimize examples/reduction/kernel.cu --ref examples/reduction/ref.py --n=67108864 --iterations 2 --max-time-s 1 --out runs/rd; summ rd
}
stream1() {
  export CUDA_VISIBLE_DEVICES=1
  step sgemm 280 $K optimize examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096 --max-time-s 1 --out runs/sg; summ sg
  step transpose 250 $K optimize examples/transpose/kernel.cu --ref examples/transpose/ref.py --rows=8192 --cols=8192 --max-time-s 1 --out runs/tr; summ tr
}
two_streams 570 phases
finish_check
