// A 2-D block-tiling SGEMM launched the way the published SGEMM tutorials launch it (issue 35): the block tile
// sizes are named constants declared once in each branch of an `if (M >= 128 && N >= 128) {...} else {...}` pair,
// the thread tile TM x TN is per-thread work (accumulators in registers). Each branch's BM/BN is its own parameter.
#include <cuda_runtime.h>
#define CEIL_DIV(M, N) (((M) + (N)-1) / (N))

template <const int BM, const int BN, const int BK, const int TM, const int TN>
__global__ void __launch_bounds__((BM * BN) / (TM * TN), 1)
    sgemm2DBlocktiling(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
  const unsigned cRow = blockIdx.y;
  const unsigned cCol = blockIdx.x;
  const unsigned totalResultsBlocktile = BM * BN;
  const unsigned numThreadsBlocktile = totalResultsBlocktile / (TM * TN);
  const int threadCol = threadIdx.x % (BN / TN);
  const int threadRow = threadIdx.x / (BN / TN);
  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];
  A += cRow * BM * K;
  B += cCol * BN;
  C += cRow * BM * N + cCol * BN;
  const unsigned innerRowA = threadIdx.x / BK;
  const unsigned innerColA = threadIdx.x % BK;
  const unsigned strideA = numThreadsBlocktile / BK;
  const unsigned innerRowB = threadIdx.x / BN;
  const unsigned innerColB = threadIdx.x % BN;
  const unsigned strideB = numThreadsBlocktile / BN;
  float threadResults[TM * TN] = {0.0};
  float regM[TM] = {0.0};
  float regN[TN] = {0.0};
  for (unsigned bkIdx = 0; bkIdx < (unsigned)K; bkIdx += BK) {
    for (unsigned loadOffset = 0; loadOffset < BM; loadOffset += strideA)
      As[(innerRowA + loadOffset) * BK + innerColA] = A[(innerRowA + loadOffset) * K + innerColA];
    for (unsigned loadOffset = 0; loadOffset < BK; loadOffset += strideB)
      Bs[(innerRowB + loadOffset) * BN + innerColB] = B[(innerRowB + loadOffset) * N + innerColB];
    __syncthreads();
    A += BK;
    B += BK * N;
    for (unsigned dotIdx = 0; dotIdx < BK; ++dotIdx) {
      for (unsigned i = 0; i < TM; ++i) regM[i] = As[(threadRow * TM + i) * BK + dotIdx];
      for (unsigned i = 0; i < TN; ++i) regN[i] = Bs[dotIdx * BN + threadCol * TN + i];
      for (unsigned resIdxM = 0; resIdxM < TM; ++resIdxM)
        for (unsigned resIdxN = 0; resIdxN < TN; ++resIdxN)
          threadResults[resIdxM * TN + resIdxN] += regM[resIdxM] * regN[resIdxN];
    }
    __syncthreads();
  }
  for (unsigned resIdxM = 0; resIdxM < TM; ++resIdxM)
    for (unsigned resIdxN = 0; resIdxN < TN; ++resIdxN)
      C[(threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN] =
          alpha * threadResults[resIdxM * TN + resIdxN] +
          beta * C[(threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN];
}

extern "C" void solve(const float *A, const float *B, float *C, int M, int N, int K) {
  const unsigned BK = 8;
  const unsigned TM = 8;
  const unsigned TN = 8;
  if (M >= 128 && N >= 128) {
    const unsigned BM = 128;
    const unsigned BN = 128;
    dim3 gridDim(CEIL_DIV(N, BN), CEIL_DIV(M, BM));
    dim3 blockDim((BM * BN) / (TM * TN));
    sgemm2DBlocktiling<BM, BN, BK, TM, TN><<<gridDim, blockDim>>>(M, N, K, 1.0f, A, B, 0.0f, C);
  } else {
    // a smaller block tile for small matrices
    const unsigned BM = 64;
    const unsigned BN = 64;
    dim3 gridDim(CEIL_DIV(N, BN), CEIL_DIV(M, BM));
    dim3 blockDim((BM * BN) / (TM * TN));
    sgemm2DBlocktiling<BM, BN, BK, TM, TN><<<gridDim, blockDim>>>(M, N, K, 1.0f, A, B, 0.0f, C);
  }
}
