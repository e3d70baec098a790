// A third-party-style tiled SGEMM (2-D block tiling: each thread computes a TM x TN tile of C from registers),
// written as people write it, with no @kopt lines: the tile sizes are named constants in the launcher and
// static_asserts tie them together. `kopt annotate` derives the search space from those constants
// (examples/plain/README.md). Row-major C = A @ B, fp32; any M, N, K (edges are bounds-checked).
#include <cuda_runtime.h>

#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

template <const int BM, const int BN, const int BK, const int TM, const int TN>
__global__ void sgemm2DBlocktiling(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                                   float* __restrict__ C) {
  constexpr int kThreads = (BM * BN) / (TM * TN);
  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];

  const int cRow = blockIdx.y;
  const int cCol = blockIdx.x;
  const int threadCol = threadIdx.x % (BN / TN);
  const int threadRow = threadIdx.x / (BN / TN);

  float acc[TM * TN] = {0.0f};
  float regM[TM];
  float regN[TN];

  for (int bk = 0; bk < K; bk += BK) {
    // Every thread loads a strided share of both tiles (zeros past the edges).
    for (int i = threadIdx.x; i < BM * BK; i += kThreads) {
      const int r = i / BK, c = i % BK;
      const int gr = cRow * BM + r, gc = bk + c;
      As[r * BK + c] = (gr < M && gc < K) ? A[static_cast<long long>(gr) * K + gc] : 0.0f;
    }
    for (int i = threadIdx.x; i < BK * BN; i += kThreads) {
      const int r = i / BN, c = i % BN;
      const int gr = bk + r, gc = cCol * BN + c;
      Bs[r * BN + c] = (gr < K && gc < N) ? B[static_cast<long long>(gr) * N + gc] : 0.0f;
    }
    __syncthreads();
    for (int dot = 0; dot < BK; ++dot) {
      for (int i = 0; i < TM; ++i) regM[i] = As[(threadRow * TM + i) * BK + dot];
      for (int j = 0; j < TN; ++j) regN[j] = Bs[dot * BN + threadCol * TN + j];
      for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) acc[i * TN + j] += regM[i] * regN[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < TM; ++i) {
    const int r = cRow * BM + threadRow * TM + i;
    if (r >= M) continue;
    for (int j = 0; j < TN; ++j) {
      const int c = cCol * BN + threadCol * TN + j;
      if (c < N) C[static_cast<long long>(r) * N + c] = acc[i * TN + j];
    }
  }
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
  const uint BK = 8;
  const uint TM = 8;
  const uint TN = 8;
  const uint BM = 128;
  const uint BN = 128;
  const uint NUM_THREADS = (BM * BN) / (TM * TN);
  static_assert(BM % TM == 0 && BN % TN == 0, "the thread tile must divide the block tile");
  static_assert((BM * BK) % NUM_THREADS == 0, "each thread loads the same number of A elements");
  static_assert((BN * BK) % NUM_THREADS == 0, "each thread loads the same number of B elements");
  dim3 gridDim(CEIL_DIV(N, BN), CEIL_DIV(M, BM));
  dim3 blockDim(NUM_THREADS);
  sgemm2DBlocktiling<BM, BN, BK, TM, TN><<<gridDim, blockDim>>>(M, N, K, A, B, C);
}
