// Barrier misuse: __syncthreads() inside a branch that only the even threads of each warp take. Every thread
// reads back only its own shared slot, so the results are right (y = 3 x); synccheck reports the divergent
// barrier, which is undefined behaviour and may hang or corrupt on another architecture or compiler.
#include <cuda_runtime.h>

#define TILE 256

__global__ void half_barrier(const float* __restrict__ x, float* __restrict__ y, int n) {
  __shared__ float s[TILE];
  const int t = threadIdx.x;
  const int i = blockIdx.x * TILE + t;
  s[t] = i < n ? x[i] : 0.0f;
  if (t % 2 == 0) __syncthreads();  // reached by half of every warp
  if (i < n) y[i] = 3.0f * s[t];
}

extern "C" void solve(const float* x, float* y, int n) {
  half_barrier<<<(n + TILE - 1) / TILE, TILE>>>(x, y, n);
}
