// Out-of-bounds global write: y = 2 x with the load guarded but the store not, so the last block writes past
// the end of y when n is not a multiple of 256. memcheck reports an invalid __global__ write.
#include <cuda_runtime.h>

#define TILE 256

__global__ void twice(const float* __restrict__ x, float* __restrict__ y, int n) {
  const int i = blockIdx.x * TILE + threadIdx.x;
  const float v = i < n ? x[i] : 0.0f;
  y[i] = 2.0f * v;  // missing: if (i < n)
}

extern "C" void solve(const float* x, float* y, int n) {
  twice<<<(n + TILE - 1) / TILE, TILE>>>(x, y, n);
}
