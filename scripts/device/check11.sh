#!/usr/bin/env bash
# Device check 11 (2026-11-30, nvidia-h200-x2): the fixes after check 10.
#   GPU 0: the torch comparison backend and the Triton GPU tests; the Triton per-candidate overhead through the
#          fork server (phases now timed from the fork) at 8192 x 4096 and at 2048 x 4096, warm Triton cache.
#   GPU 1: optimize on the transpose to its end (methods with a measured saving now stay on).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_check
stream0() {
  export CUDA_VISIBLE_DEVICES=0
  step pytest 150 bash -c "cd python && python3 -m pytest -q -s -rs tests/test_triton_compare.py tests/test_triton_gpu.py tests/test_fork_server.py 2>&1 | grep -E 'passed|failed|FAILED|Error|assert|check-mode wall' | head -40"
  triton_overhead 8192
  triton_overhead 2048
}
stream1() {
  export CUDA_VISIBLE_DEVICES=1
  step transpose 430 $K optimize examples/transpose/kernel.cu --ref examples/transpose/ref.py --rows=8192 --cols=8192 --max-time-s 1 --out runs/tr; summ tr
}
two_streams 470 triton_overhead
finish_check
