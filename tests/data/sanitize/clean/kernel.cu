// Clean: each element plus its right neighbour within a 256-wide tile (wrapping inside the tile), staged in
// shared memory with the barrier and the bounds checks. Every compute-sanitizer tool should report 0 errors.
#include <cuda_runtime.h>

#define TILE 256

__global__ void neighbour_sum(const float* __restrict__ x, float* __restrict__ y, int n) {
  __shared__ float s[TILE];
  const int t = threadIdx.x;
  const int i = blockIdx.x * TILE + t;
  s[t] = i < n ? x[i] : 0.0f;  // the tail of the last tile is zero-filled
  __syncthreads();
  if (i < n) y[i] = s[t] + s[(t + 1) % TILE];
}

extern "C" void solve(const float* x, float* y, int n) {
  neighbour_sum<<<(n + TILE - 1) / TILE, TILE>>>(x, y, n);
}
