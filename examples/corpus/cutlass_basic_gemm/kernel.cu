// kopt corpus wrapper (issue 35): CUTLASS's example 00_basic_gemm, `CutlassSgemmNN()`: a cutlass::gemm::device::Gemm
// with every template parameter at its default (SIMT float, the default threadblock/warp shapes of its arch tag),
// called as the example calls it. The function is CUTLASS's (nvidia-cutlass==4.2.0.0, BSD-3-Clause, NVIDIA),
// unpacked by scripts/corpus/fetch.py into examples/corpus/_fetched/ (never committed); only solve() is kopt's.
// Column-major A (M x K, lda = M), B (K x N, ldb = K), C (M x N, ldc = M); alpha = 1, beta = 0 (the example's
// main() uses alpha 1, beta 0). Any M, N, K.
#include <cstdio>

#include "cutlass/cutlass.h"
#include "../_fetched/nvidia-cutlass-4.2.0.0/examples/00_basic_gemm/basic_gemm.cu"

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
  cudaError_t e = CutlassSgemmNN(M, N, K, 1.0f, A, M, B, K, 0.0f, C, M);
  if (e != cudaSuccess) std::fprintf(stderr, "CutlassSgemmNN: %s\n", cudaGetErrorString(e));
}
