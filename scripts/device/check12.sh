#!/usr/bin/env bash
# Device check 12 (2026-11-30, nvidia-h200-x2): the suite's four optimize tests on the final build (after the
# measured-saving pinning, the fork-server phase clock and the device scripts' lib.sh helpers).
#   GPU 0: optimize vector_add, optimize triton_softmax.   GPU 1: optimize sgemm_tunable, optimize cutlass_gemm.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_check
export CUTLASS_PATH=$PWD/.carry/cutlass
[ -f .carry/cutlass.tgz ] && tar xzf .carry/cutlass.tgz -C .carry
suite() { for e in "$@"; do step "suite optimize $e" 110 env KOPT_GPU_SUITE_DIR=/tmp/suite bash scripts/gpu_suite.sh optimize "$e" </dev/null >/tmp/suite_$e.log 2>&1; tail -2 /tmp/suite_$e.log; done; }
stream0() { export CUDA_VISIBLE_DEVICES=0; suite vector_add triton_softmax; }
stream1() { export CUDA_VISIBLE_DEVICES=1; suite sgemm_tunable cutlass_gemm; }
two_streams 200 suite
finish_check
