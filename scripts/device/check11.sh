#!/usr/bin/env bash
# Device check 11 (2026-11-30, nvidia-h200-x2): the fixes after check 10.
#   GPU 0: the torch comparison backend and the Triton GPU tests; the Triton per-candidate overhead through the
#          fork server (phases now timed from the fork) at 8192 x 4096 and at 2048 x 4096, warm Triton cache.
#   GPU 1: optimize on the transpose to its end (methods with a measured saving now stay on).
set -u
export KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1 KOPT_BIN=$PWD/.carry/build/kopt
K=$KOPT_BIN
date -u; nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
mkdir -p runs/json
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
overhead() {  # overhead ROWS: golden for the softmax at ROWS x 4096, then check mode 3x direct and 4x via the server
  local TS="examples/triton_softmax/kernel.py --ref examples/triton_softmax/ref.py --n_rows=$1 --n_cols=4096"
  step triton_golden_$1 90 $K bench $TS --max-time-s 0.3 --no-reference-timing --out runs/ov$1
  local G; G=$(ls -d runs/ov$1/kopt_runs/bench_*/golden | head -1)
  local CFG='{"BLOCK_SIZE":4096,"KOPT_PERSISTENT_KERNEL":0,"num_stages":2,"num_warps":8}'
  export KOPT_TRITON_FORK_SERVER_DIR=/tmp/kopt-fs-check11
  for m in kopt_harness kopt_harness kopt_harness kopt_harness.fork_client kopt_harness.fork_client kopt_harness.fork_client kopt_harness.fork_client; do
    local t0=$(date +%s.%N)
    env PYTHONPATH=$PWD/python python3 -m $m triton-run --kernel examples/triton_softmax/kernel.py --golden $G --out runs/r.json --mode check --config "$CFG" >/dev/null 2>runs/err.txt
    local rc=$?
    echo "overhead $1 $m rc=$rc wall_s=$(python3 -c "import time;print(round(time.time()-$t0,3))") $(python3 -c "import json;d=json.load(open('runs/r.json'));print(d['status'], json.dumps(d.get('phases_ms')))")"
  done
  tail -2 runs/err.txt
}
stream0() {
  export CUDA_VISIBLE_DEVICES=0
  step pytest 150 bash -c "cd python && python3 -m pytest -q -s -rs tests/test_triton_compare.py tests/test_triton_gpu.py tests/test_fork_server.py 2>&1 | grep -E 'passed|failed|FAILED|Error|assert|check-mode wall' | head -40"
  overhead 8192
  overhead 2048
}
stream1() {
  export CUDA_VISIBLE_DEVICES=1
  step transpose 430 $K optimize examples/transpose/kernel.cu --ref examples/transpose/ref.py --rows=8192 --cols=8192 --max-time-s 1 --out runs/tr; summ tr
}
timeout 470 bash -c "$(declare -f step summ overhead stream0); K=$K; stream0" >$OUT/gpu0.txt 2>&1 &
p0=$!
timeout 470 bash -c "$(declare -f step summ stream1); K=$K; stream1" >$OUT/gpu1.txt 2>&1 &
p1=$!
wait $p0 $p1
date -u
(cd runs && tar czf $OUT/runs_json.tgz json 2>/dev/null)
ls -la $OUT
