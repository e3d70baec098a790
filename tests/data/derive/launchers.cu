// Launchers as the corpus kernels write them (issue 35): a block size the launcher computes at run time (CUTLASS's
// rmsnorm: `const int block_size = std::min(1024, (N / 8 + 31) / 32 * 32)`; FlashInfer's activations:
// `dim3 block(std::min<uint32_t>(d / vec_size, 1024U))`; FlashInfer's norms: `num_warps` from `block_size`),
// a launcher helper taking its block size as a template argument or a function argument, and a grid-stride loop.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>

__global__ void row_scale(const float* x, float* y, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) y[blockIdx.x * n + i] = 2.0f * x[blockIdx.x * n + i];
}

__global__ void row_shift(const float* x, float* y, int n) {
  for (int i = threadIdx.y * blockDim.x + threadIdx.x; i < n; i += blockDim.x * blockDim.y)
    y[blockIdx.x * n + i] = x[blockIdx.x * n + i] + 1.0f;
}

template <int ITEMS_PER_THREAD>
__global__ void add_items(const float* x, float* y, int n) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * ITEMS_PER_THREAD;
#pragma unroll
  for (int k = 0; k < ITEMS_PER_THREAD; ++k)
    if (base + k < n) y[base + k] = x[base + k] + 3.0f;
}

__global__ void saxpy_stride(const float* x, float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = 2.0f * x[i] + y[i];
}

template <int BLOCK>
void launch_add(const float* x, float* y, int n) {
  const int per_block = BLOCK * 4;
  add_items<4><<<(n + per_block - 1) / per_block, BLOCK>>>(x, y, n);
}

void launch_saxpy(const float* x, float* y, int n, int threads) {
  saxpy_stride<<<1024, threads>>>(x, y, n);
}

extern "C" void solve(const float* x, float* y, float* z, float* w, int rows, int n) {
  const int block_size = std::min(1024, (n / 8 + 31) / 32 * 32);
  row_scale<<<rows, block_size>>>(x, y, n);
  const uint32_t vec_size = 16 / sizeof(float);
  dim3 block(std::min<uint32_t>(n / vec_size, 1024U));
  row_scale<<<rows, block>>>(y, z, n);
  const uint32_t bs = std::min<uint32_t>(1024, n / 4);
  const uint32_t num_warps = (bs + 31) / 32;
  dim3 nthrs(32, num_warps);
  row_shift<<<rows, nthrs>>>(z, w, n);
  launch_add<256>(x, y, rows * n);
  launch_saxpy(x, y, rows * n, 128);
}
