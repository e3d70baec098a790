// A sum reduction, out[0] = sum(x), whose block size is a #define, as much CUDA code is written: BLOCK_SIZE is
// both the launch's block size and the bound of the shared-memory tree loop, ITEMS_PER_THREAD sizes the grid.
// No @kopt lines: `kopt annotate` derives both (examples/plain/README.md). Any n >= 1 (a grid-stride loop).
#include <cuda_runtime.h>

#define BLOCK_SIZE 256
#define ITEMS_PER_THREAD 8
#define MAX_BLOCKS 8192

__global__ void block_sum(const float* __restrict__ x, float* __restrict__ out, int n) {
  __shared__ float partial[BLOCK_SIZE];
  float acc = 0.0f;
  const long long stride = static_cast<long long>(gridDim.x) * BLOCK_SIZE;
  for (long long i = static_cast<long long>(blockIdx.x) * BLOCK_SIZE + threadIdx.x; i < n; i += stride) acc += x[i];
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (int s = BLOCK_SIZE / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, partial[0]);
}

extern "C" void solve(const float* x, float* out, int n) {
  long long blocks = (static_cast<long long>(n) + BLOCK_SIZE * ITEMS_PER_THREAD - 1) / (BLOCK_SIZE * ITEMS_PER_THREAD);
  if (blocks > MAX_BLOCKS) blocks = MAX_BLOCKS;
  cudaMemsetAsync(out, 0, sizeof(float));
  block_sum<<<static_cast<unsigned>(blocks), BLOCK_SIZE>>>(x, out, n);
}
