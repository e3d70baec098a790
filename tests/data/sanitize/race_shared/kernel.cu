// Shared-memory race: clean/kernel.cu without its __syncthreads(). Thread t reads s[t + 1], which thread t + 1
// writes; at every warp boundary (t = 31, 63, ...) that is another warp, with no barrier between the write and
// the read (a read-after-write hazard). racecheck reports it; the results may or may not be right on a run.
#include <cuda_runtime.h>

#define TILE 256

__global__ void neighbour_sum_racy(const float* __restrict__ x, float* __restrict__ y, int n) {
  __shared__ float s[TILE];
  const int t = threadIdx.x;
  const int i = blockIdx.x * TILE + t;
  s[t] = i < n ? x[i] : 0.0f;
  // missing: __syncthreads();
  if (i < n) y[i] = s[t] + s[(t + 1) % TILE];
}

extern "C" void solve(const float* x, float* y, int n) {
  neighbour_sum_racy<<<(n + TILE - 1) / TILE, TILE>>>(x, y, n);
}
