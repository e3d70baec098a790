// Rewrite 1 of examples/sgemm_naive: 32 x 32 tiles of A and B staged in shared memory, so each element loaded
// from DRAM is reused 32 times from the SM. Guarded by KOPT_SHARED_MEMORY_TILING (off: the naive kernel).
#include <cuda_runtime.h>

#ifndef TILE
#define TILE 32
#endif

#if KOPT_SHARED_MEMORY_TILING
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
#else
__global__ void sgemm_naive(const float* A, const float* B, float* C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    float acc = 0.f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}
#endif

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
#if KOPT_SHARED_MEMORY_TILING
  dim3 block(TILE, TILE);
  dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
  sgemm_smem<<<grid, block>>>(A, B, C, M, N, K);
#else
  dim3 block(16, 16);
  dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  sgemm_naive<<<grid, block>>>(A, B, C, M, N, K);
#endif
}
