#!/usr/bin/env bash
# Device check 10 (2026-11-30, nvidia-h200-x2), after the budget fix, the Triton fork server and the transpose space.
#   GPU 0: the Python harness's tests (the torch comparison backend on cpu and cuda, the Triton GPU tests with the
#          fork server); the Triton per-candidate overhead, check mode on 3 seeds of the softmax at 8192 x 4096,
#          warm Triton cache, direct and through the fork server (3 runs each, wall and phases); half the suite.
#   GPU 1: optimize on the transpose (defaults, --max-time-s 1); the other half of the suite.
# Logs: gpu0.txt, gpu1.txt; summaries and roofline JSON in runs_json.tgz.
set -u
export KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1 KOPT_BIN=$PWD/.carry/build/kopt CUTLASS_PATH=$PWD/.carry/cutlass
K=$KOPT_BIN
date -u; nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
[ -f .carry/cutlass.tgz ] && tar xzf .carry/cutlass.tgz -C .carry
mkdir -p runs/json
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bash scripts/gpu_suite.sh list > runs/suite_list.txt
suite_half() {  # suite_half 0|1: every other test of the list, one after the other
  local n=0
  while read -r t e; do
    if [ $((n % 2)) = "$1" ]; then step "suite $t $e" 150 env KOPT_GPU_SUITE_DIR=/tmp/suite$1 bash scripts/gpu_suite.sh "$t" "$e" </dev/null >/tmp/suite_$1_$n.log 2>&1; tail -3 /tmp/suite_$1_$n.log; fi
    n=$((n + 1))
  done < runs/suite_list.txt
}
overhead() {
  local TS="examples/triton_softmax/kernel.py --ref examples/triton_softmax/ref.py --n_rows=8192 --n_cols=4096"
  step triton_golden 90 $K bench $TS --max-time-s 0.3 --no-reference-timing --out runs/ov
  local G; G=$(ls -d runs/ov/kopt_runs/bench_*/golden | head -1)
  local CFG='{"BLOCK_SIZE":4096,"KOPT_PERSISTENT_KERNEL":0,"num_stages":2,"num_warps":8}'
  export KOPT_TRITON_FORK_SERVER_DIR=/tmp/kopt-fs-check10
  for m in kopt_harness kopt_harness kopt_harness kopt_harness.fork_client kopt_harness.fork_client kopt_harness.fork_client kopt_harness.fork_client; do
    local t0=$(date +%s.%N)
    env PYTHONPATH=$PWD/python python3 -m $m triton-run --kernel examples/triton_softmax/kernel.py --golden $G --out runs/ov/r.json --mode check --config "$CFG" >/dev/null 2>runs/ov/err.txt
    local rc=$?
    echo "overhead $m rc=$rc wall_s=$(python3 -c "import time;print(round(time.time()-$t0,3))") $(python3 -c "import json;d=json.load(open('runs/ov/r.json'));print(d['status'], json.dumps(d.get('phases_ms')))")"
  done
  tail -3 runs/ov/err.txt
}
stream0() {
  export CUDA_VISIBLE_DEVICES=0
  step pytest 170 bash -c "cd python && python3 -m pytest -q -s -rs tests 2>&1 | grep -E 'passed|failed|FAILED|Error|check-mode wall|SKIPPED' | head -40"
  overhead
  suite_half 0
}
stream1() {
  export CUDA_VISIBLE_DEVICES=1
  step transpose 250 $K optimize examples/transpose/kernel.cu --ref examples/transpose/ref.py --rows=8192 --cols=8192 --max-time-s 1 --out runs/tr; summ tr
  suite_half 1
}
timeout 580 bash -c "$(declare -f step summ suite_half overhead stream0); K=$K; stream0" >$OUT/gpu0.txt 2>&1 &
p0=$!
timeout 580 bash -c "$(declare -f step summ suite_half stream1); K=$K; stream1" >$OUT/gpu1.txt 2>&1 &
p1=$!
wait $p0 $p1
date -u
(cd runs && tar czf $OUT/runs_json.tgz json 2>/dev/null)
ls -la $OUT
