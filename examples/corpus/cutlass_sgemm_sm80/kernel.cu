// kopt corpus wrapper (issue 35): CUTLASS's CuTe tutorial SGEMM `sgemm_sm80.cu`, launched as the project launches it.
// The kernel and its launcher gemm() are CUTLASS's (nvidia-cutlass==4.2.0.0, BSD-3-Clause, NVIDIA), unpacked by
// scripts/corpus/fetch.py into examples/corpus/_fetched/ (never committed); only this solve() is kopt's.
// C = A * B^T (float, the generic template: cp.async loads, 3 stages) in the tutorial's "NT" form (transA='N',
// transB='T', its main()'s default): column-major A (M x K, ldA = M), B (N x K, ldB = N), C (M x N, ldC = M);
// alpha = 1, beta = 0 as in its main(). The tile sizes are fixed inside gemm_nt(); M and N must be multiples of 128
// and K of 8 (the tutorial does not predicate).
#include <cute/tensor.hpp>

#include "../_fetched/nvidia-cutlass-4.2.0.0/examples/cute/tutorial/sgemm_sm80.cu"

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
  gemm('N', 'T', M, N, K, 1.0f, A, M, B, N, 0.0f, C, M);
}
