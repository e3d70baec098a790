// Nothing to derive: the block size comes from the caller.
#include <cuda_runtime.h>

__global__ void copy(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}

extern "C" void solve(const float* x, float* y, int n, int threads) {
  copy<<<(n + threads - 1) / threads, threads>>>(x, y, n);
}
