#!/usr/bin/env bash
# Device check 8 (prepared 2026-11-30 for the next session; an nvidia-h200-x2): what issue 10 still needs.
#   GPU 0: optimize on sgemm_tunable 4096^3 with the fixed generator (defaults, --max-time-s 1); optimize on the
#          reduction (after the ncu fix) and the transpose, each run to its end.
#   GPU 1: the GPU suite, every test, one after the other (about 575 s on one GPU in check6: it may be cut; the
#          per-test lines in gpu1.txt survive, the final table does not).
# Logs: gpu0.txt, gpu1.txt; summaries and roofline JSON in runs_json.tgz. Waits on explicit PIDs (a bare `wait`
# also waits for a `tee` process substitution: check6 hung on that).
set -u
export KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1 KOPT_BIN=$PWD/.carry/build/kopt CUTLASS_PATH=$PWD/.carry/cutlass
K=$KOPT_BIN
date -u; nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
[ -f .carry/cutlass.tgz ] && tar xzf .carry/cutlass.tgz -C .carry
mkdir -p runs
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
stream0() {
  export CUDA_VISIBLE_DEVICES=0
  step sgemm 270 $K optimize examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096 --max-time-s 1 --out runs/sg; summ sg
  step reduction 140 $K optimize examples/reduction/kernel.cu --ref examples/reduction/ref.py --n=67108864 --iterations 2 --max-time-s 1 --out runs/rd; summ rd
  step transpose 150 $K optimize examples/transpose/kernel.cu --ref examples/transpose/ref.py --rows=8192 --cols=8192 --iterations 2 --max-time-s 1 --out runs/tr; summ tr
}
stream1() {
  export CUDA_VISIBLE_DEVICES=1
  KOPT_GPU_SUITE_DIR=/tmp/suite bash scripts/gpu_suite.sh all
}
timeout 575 bash -c "$(declare -f step summ stream0); K=$K; stream0" >$OUT/gpu0.txt 2>&1 &
p0=$!
timeout 575 bash -c "$(declare -f stream1); stream1" >$OUT/gpu1.txt 2>&1 &
p1=$!
wait $p0 $p1
date -u
(cd runs && tar czf $OUT/runs_json.tgz json 2>/dev/null)
ls -la $OUT
