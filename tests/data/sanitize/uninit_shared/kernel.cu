// Reads uninitialised shared memory: every element gets the sum of its 256-wide tile, reduced in shared
// memory; the last tile's slots past n are never written (no zero fill), so when n is not a multiple of 256
// the reduction adds whatever an earlier block left there. Correct only at multiples of the tile.
#include <cuda_runtime.h>

#define TILE 256

__global__ void tile_sum(const float* __restrict__ x, float* __restrict__ y, int n) {
  __shared__ float s[TILE];
  const int t = threadIdx.x;
  const int i = blockIdx.x * TILE + t;
  if (i < n) s[t] = x[i];  // missing: else s[t] = 0.0f;
  __syncthreads();
  for (int stride = TILE / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (i < n) y[i] = s[0];
}

extern "C" void solve(const float* x, float* y, int n) {
  tile_sum<<<(n + TILE - 1) / TILE, TILE>>>(x, y, n);
}
