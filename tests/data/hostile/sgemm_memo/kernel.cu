// Hostile (issue 40): an SGEMM (C = A @ B, row-major, 32 x 32 shared-memory tiles) whose MEMO parameter turns on
// the shortcuts a generator that games its reward finds. MEMO=0 is honest; MEMO=1 remembers C by a sampled
// fingerprint of A and B and copies it when it recognises them (the kernel kopt once reported at "2.22 PFLOP/s",
// 33x above the GPU's roof); MEMO=2 remembers by pointer and returns at once on buffers it has seen.
// Its reference is examples/sgemm_naive/ref.py. `kopt optimize` must never crown MEMO=1 or 2: fresh inputs between timed calls time MEMO=1 as it computes, the
// audits find MEMO=2 wrong, and the speed-of-light floor rejects any time below what the GPU can do.
#include <cuda_runtime.h>

#include <map>
#include <set>
#include <tuple>
#include <vector>

// @kopt param MEMO values=0,1,2 default=0
#ifndef MEMO
#define MEMO 0
#endif

__global__ void sgemm_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[32][33], Bs[32][33];
  const int row = blockIdx.y * 32 + threadIdx.y, col = blockIdx.x * 32 + threadIdx.x;
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += 32) {
    As[threadIdx.y][threadIdx.x] = row < M && k0 + threadIdx.x < K ? A[row * K + k0 + threadIdx.x] : 0.f;
    Bs[threadIdx.y][threadIdx.x] = k0 + threadIdx.y < K && col < N ? B[(k0 + threadIdx.y) * N + col] : 0.f;
    __syncthreads();
    for (int k = 0; k < 32; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

__global__ void fingerprint(const float* A, const float* B, long a_n, long b_n, float* out) {
  const int t = threadIdx.x;  // 64 samples of each
  out[t] = A[t * (a_n / 64)];
  out[64 + t] = B[t * (b_n / 64)];
}

static void compute(const float* A, const float* B, float* C, int M, int N, int K) {
  sgemm_tiled<<<dim3((N + 31) / 32, (M + 31) / 32), dim3(32, 32)>>>(A, B, C, M, N, K);
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
#if MEMO == 1
  static std::map<std::vector<unsigned>, float*> cache;
  static float* fp = nullptr;
  if (!fp) cudaMalloc(&fp, 128 * sizeof(float));
  fingerprint<<<1, 64>>>(A, B, static_cast<long>(M) * K, static_cast<long>(K) * N, fp);
  std::vector<unsigned> key(128);
  cudaMemcpy(key.data(), fp, 128 * sizeof(float), cudaMemcpyDeviceToHost);
  const size_t bytes = static_cast<size_t>(M) * N * sizeof(float);
  if (auto it = cache.find(key); it != cache.end()) {
    cudaMemcpyAsync(C, it->second, bytes, cudaMemcpyDeviceToDevice, 0);
    return;
  }
  compute(A, B, C, M, N, K);
  if (cache.size() < 16) {
    float* keep = nullptr;
    if (cudaMalloc(&keep, bytes) == cudaSuccess) {
      cudaMemcpyAsync(keep, C, bytes, cudaMemcpyDeviceToDevice, 0);
      cache[key] = keep;
    }
  }
#elif MEMO == 2
  static std::set<std::tuple<const void*, const void*, void*>> seen;
  if (!seen.insert({A, B, C}).second) return;
  compute(A, B, C, M, N, K);
#else
  compute(A, B, C, M, N, K);
#endif
}
