// kopt corpus wrapper (issue 35): CUTLASS's CuTe tutorial `sgemm_sm80.cu`, its half-precision TN GEMM (tensor cores:
// SM80_16x8x16 mma, ldmatrix, cp.async, 3 stages), launched as the project launches it.
// The kernel and its launcher gemm() are CUTLASS's (nvidia-cutlass==4.2.0.0, BSD-3-Clause, NVIDIA), unpacked by
// scripts/corpus/fetch.py into examples/corpus/_fetched/ (never committed); only this solve() is kopt's.
// "TN" (transA='T', transB='N'; the tutorial's half path implements only this one): A is M x K with K contiguous
// (ldA = K), B is N x K with K contiguous (ldB = K), C is column-major M x N (ldC = M); alpha = 1, beta = 0, all
// fp16 (fp16 accumulation, as the tutorial). The 128 x 128 x 64 tile is fixed inside gemm_tn(): M and N must be
// multiples of 128 and K of 64.
#include <cuda_fp16.h>
#include <cute/tensor.hpp>

#include "../_fetched/nvidia-cutlass-4.2.0.0/examples/cute/tutorial/sgemm_sm80.cu"

extern "C" void solve(const __half* A, const __half* B, __half* C, int M, int N, int K) {
  using cute::half_t;
  gemm('T', 'N', M, N, K, half_t(1.0f), reinterpret_cast<const half_t*>(A), K, reinterpret_cast<const half_t*>(B), K,
       half_t(0.0f), reinterpret_cast<half_t*>(C), M);
}
