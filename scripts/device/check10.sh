#!/usr/bin/env bash
# Device check 10 (2026-11-30, nvidia-h200-x2), after the budget fix, the Triton fork server and the transpose space.
#   GPU 0: the Python harness's tests (the torch comparison backend on cpu and cuda, the Triton GPU tests with the
#          fork server); the Triton per-candidate overhead, check mode on 3 seeds of the softmax at 8192 x 4096,
#          warm Triton cache, direct and through the fork server (3 runs each, wall and phases); half the suite.
#   GPU 1: optimize on the transpose (defaults, --max-time-s 1); the other half of the suite.
# Logs: gpu0.txt, gpu1.txt; summaries and roofline JSON in runs_json.tgz.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_check
export CUTLASS_PATH=$PWD/.carry/cutlass
[ -f .carry/cutlass.tgz ] && tar xzf .carry/cutlass.tgz -C .carry
bash scripts/gpu_suite.sh list > runs/suite_list.txt
suite_half() {  # suite_half 0|1: every other test of the list, one after the other
  local n=0
  while read -r t e; do
    if [ $((n % 2)) = "$1" ]; then step "suite $t $e" 150 env KOPT_GPU_SUITE_DIR=/tmp/suite$1 bash scripts/gpu_suite.sh "$t" "$e" </dev/null >/tmp/suite_$1_$n.log 2>&1; tail -3 /tmp/suite_$1_$n.log; fi
    n=$((n + 1))
  done < runs/suite_list.txt
}
stream0() {
  export CUDA_VISIBLE_DEVICES=0
  step pytest 170 bash -c "cd python && python3 -m pytest -q -s -rs tests 2>&1 | grep -E 'passed|failed|FAILED|Error|check-mode wall|SKIPPED' | head -40"
  triton_overhead 8192
  suite_half 0
}
stream1() {
  export CUDA_VISIBLE_DEVICES=1
  step transpose 250 $K optimize examples/transpose/kernel.cu --ref examples/transpose/ref.py --rows=8192 --cols=8192 --max-time-s 1 --out runs/tr; summ tr
  suite_half 1
}
two_streams 580 suite_half triton_overhead
finish_check
