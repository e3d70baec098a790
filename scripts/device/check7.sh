#!/usr/bin/env bash
# Device check 7 (an nvidia-h200-x2): two streams, one per GPU (CUDA_VISIBLE_DEVICES).
#   GPU 0: optimize on the Triton softmax with --near-peak 0.99 (so the loop runs past the gates); the search
#          efficiency measurement (scripts/perf/search_efficiency.sh, all 496 sgemm_tunable points at 4096^3);
#          optimize on the transpose example.
#   GPU 1: the vector add negative control (its float4 point as the baseline: near peak at the gates); optimize
#          on the softmax and reduction examples; bench of the naive SGEMM at 4096^3.
# Every optimize uses the defaults except --iterations 2 and --max-time-s 1. Logs: gpu0.txt, gpu1.txt.
set -u
export KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1 KOPT_BIN=$PWD/.carry/build/kopt
K=$KOPT_BIN
date -u; nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
mkdir -p runs
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
stream0() {
  export CUDA_VISIBLE_DEVICES=0
  step triton_loop 110 $K optimize examples/triton_softmax/kernel.py --ref examples/triton_softmax/ref.py --n_rows=4096 --n_cols=4096 --iterations 1 --branches 3 --max-time-s 0.5 --near-peak 0.99 --out runs/trl; summ trl
  step search_efficiency 300 bash scripts/perf/search_efficiency.sh --size 4096 --jobs 16 --out runs/se
  cat runs/se/report.txt 2>/dev/null
  step transpose 150 $K optimize examples/transpose/kernel.cu --ref examples/transpose/ref.py --rows=8192 --cols=8192 --iterations 2 --max-time-s 1 --out runs/tr; summ tr
}
stream1() {
  export CUDA_VISIBLE_DEVICES=1
  VA="examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=67108864"
  step vadd_negative_control 110 $K optimize $VA -DKOPT_VECTORIZED_ACCESS=1 -DITEMS=4 --max-time-s 1 --out runs/vn; summ vn
  step softmax 160 $K optimize examples/softmax/kernel.cu --ref examples/softmax/ref.py --rows=16384 --cols=4096 --iterations 2 --max-time-s 1 --out runs/sm; summ sm
  step reduction 160 $K optimize examples/reduction/kernel.cu --ref examples/reduction/ref.py --n=67108864 --iterations 2 --max-time-s 1 --out runs/rd; summ rd
  step sgemm_naive 80 $K bench examples/sgemm_naive/kernel.cu --ref examples/sgemm_naive/ref.py --M=4096 --N=4096 --K=4096 --max-time-s 1 --out runs/sn
}
timeout 575 bash -c "$(declare -f step summ stream0); K=$K; stream0" >$OUT/gpu0.txt 2>&1 &
p0=$!
timeout 575 bash -c "$(declare -f step summ stream1); K=$K; stream1" >$OUT/gpu1.txt 2>&1 &
p1=$!
wait $p0 $p1
date -u
(cd runs && tar czf $OUT/se.tgz se/report.txt se/measurements.csv se/failures.txt se/replay_*.json se/configs.txt 2>/dev/null)
(cd runs && tar czf $OUT/runs_json.tgz json 2>/dev/null)
ls -la $OUT
