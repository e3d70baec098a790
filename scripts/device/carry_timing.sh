#!/usr/bin/env bash
# Prepares what scripts/device/timing_check.sh carries to the GPU machine (nothing is compiled or downloaded
# there): .carry/timing/*.so, the kernels of the side-by-side built here with kopt's own nvcc flags (-shared
# -Xcompiler -fPIC -O3 -lineinfo -arch=sm_90), for Nsight Compute and nvbench to call through ctypes; and
# .carry/wheels/, the cuda-bench wheel (nvbench's Python package) and its cuda-bindings dependency for the
# GPU machine's Python (Ubuntu 24.04: CPython 3.12; --python-version overrides).
# Usage: bash scripts/device/carry_timing.sh [--python-version 3.12]   then carry [".carry/timing", ".carry/wheels", "build"]
set -eu
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
PYV=3.12
[ "${1:-}" = --python-version ] && PYV=$2
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
TK=scripts/device/timing_kernels
OUT=.carry/timing
mkdir -p "$OUT" .carry/wheels
FLAGS=(-shared -Xcompiler -fPIC -O3 -lineinfo -arch=sm_90)
# The sgemm_tunable champion of docs/PERFORMANCE.md (the space's true best at 4096^3 on the H200, 3.0185 ms).
SGEMM_BEST=(-DBM=128 -DBN=128 -DBK=8 -DTM=8 -DTN=8 -DSTAGES=2 -DKOPT_VECTORIZED_ACCESS=1 -DKOPT_CP_ASYNC_PIPELINE=0 -DKOPT_SMEM_PADDING=0)
build() { local name=$1 src=$2; shift 2; echo "nvcc $name"; "$NVCC" "${FLAGS[@]}" "$@" -o "$OUT/$name.so" "$src"; }
build axpb "$TK/axpb/kernel.cu" &
build two_kernels "$TK/two_kernels/kernel.cu" &
wait
build axpb_side_stream "$TK/axpb_side_stream/kernel.cu" &
build axpb_syncs "$TK/axpb_syncs/kernel.cu" &
wait
build softmax examples/softmax/kernel.cu &
build sgemm_best examples/sgemm_tunable/kernel.cu "${SGEMM_BEST[@]}" &
wait
# The wheels: binary only, for the GPU machine's interpreter. cuda-bench picks its extension (cu12 or cu13) by
# the installed cuda-bindings' major version: 13 matches the H200's driver 580 (CUDA 13.0).
python3 -m pip download --only-binary=:all: --python-version "$PYV" --platform manylinux_2_28_x86_64 \
  --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d .carry/wheels "cuda-bench==0.3.0" "cuda-bindings>=13.0,<14"
ls -la "$OUT" .carry/wheels
du -sh .carry/timing .carry/wheels
