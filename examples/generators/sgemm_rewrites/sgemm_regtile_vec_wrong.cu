// A first try at rewrite 3 (for the device check's repair loop: its results are wrong, b[i] for b[j]).
// Rewrite 3 of examples/sgemm_naive: rewrite 2's register tiles, with the A and B slices loaded from global
// memory as float4 (16-byte LDG.E.128) where a whole slice is in bounds and 16-byte aligned. Guards:
// KOPT_REGISTER_TILING (off: rewrite 1's 32 x 32 shared-memory tiles) and KOPT_VECTORIZED_ACCESS (off: scalar
// loads). Optional -D params: BK (the slice depth, a multiple of 4; default 8).
#include <cuda_runtime.h>

#ifndef BK
#define BK 8
#endif
#define BM 64
#define BN 64
#define TM 4
#define TN 4
#define TILE 32

#if KOPT_REGISTER_TILING
__global__ void __launch_bounds__(256) sgemm_regtile(const float* A, const float* B, float* C, int M, int N, int K, bool vec) {
  __shared__ float As[BK][BM];  // the A slice, transposed: As[k][m]
  __shared__ __align__(16) float Bs[BK][BN];
  const int tid = threadIdx.x;
  const int tr = tid / (BN / TN), tc = tid % (BN / TN);  // this thread's 4 x 4 block of the tile
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
#if KOPT_VECTORIZED_ACCESS
    if (vec && row0 + BM <= M && col0 + BN <= N && k0 + BK <= K) {
      for (int i = tid; i < BM * BK / 4; i += 256) {
        const int m = i / (BK / 4), k = (i % (BK / 4)) * 4;
        const float4 a = *reinterpret_cast<const float4*>(&A[(row0 + m) * K + k0 + k]);
        As[k][m] = a.x;
        As[k + 1][m] = a.y;
        As[k + 2][m] = a.z;
        As[k + 3][m] = a.w;
      }
      for (int i = tid; i < BK * BN / 4; i += 256) {
        const int k = i / (BN / 4), n = (i % (BN / 4)) * 4;
        *reinterpret_cast<float4*>(&Bs[k][n]) = *reinterpret_cast<const float4*>(&B[(k0 + k) * N + col0 + n]);
      }
    } else
#endif
    {
      for (int i = tid; i < BM * BK; i += 256) {
        const int m = i / BK, k = i % BK, r = row0 + m, kk = k0 + k;
        As[k][m] = (r < M && kk < K) ? A[r * K + kk] : 0.f;
      }
      for (int i = tid; i < BK * BN; i += 256) {
        const int k = i / BN, n = i % BN, kk = k0 + k, c = col0 + n;
        Bs[k][n] = (kk < K && c < N) ? B[kk * N + c] : 0.f;
      }
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[k][tr * TM + i];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[k][tc * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[i];
    }
    __syncthreads();
  }
  for (int i = 0; i < TM; ++i)
    for (int j = 0; j < TN; ++j) {
      const int r = row0 + tr * TM + i, c = col0 + tc * TN + j;
      if (r < M && c < N) C[r * N + c] = acc[i][j];
    }
}
#else
__global__ void sgemm_smem(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.f;
    Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}
#endif

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
#if KOPT_REGISTER_TILING
  dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
  // float4 loads need 16-byte aligned rows: K and N multiples of 4 and aligned base pointers.
  const bool vec = K % 4 == 0 && N % 4 == 0 && reinterpret_cast<size_t>(A) % 16 == 0 && reinterpret_cast<size_t>(B) % 16 == 0;
  sgemm_regtile<<<grid, 256>>>(A, B, C, M, N, K, vec);
#else
  dim3 block(TILE, TILE);
  dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
  sgemm_smem<<<grid, block>>>(A, B, C, M, N, K);
#endif
}
