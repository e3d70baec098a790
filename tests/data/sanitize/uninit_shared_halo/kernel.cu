// Reads shared memory nobody wrote, and is right anyway whenever that memory holds a finite number: a 3-point
// smoothing y[i] = 0.25 x[i-1] + 0.5 x[i] + 0.25 x[i+1] (the missing neighbours of the array's two ends count
// as 0) through a shared tile with a one-element halo each side. The halo is loaded only where its weight is
// not zero, but the arithmetic still multiplies the unloaded slot by that zero weight: 0 x (whatever an earlier
// kernel left) is 0 for every finite value, NaN for a NaN or an infinity. compute-sanitizer's tools all pass it
// (initcheck tracks global memory only); the sanitizer gate's shared-memory fill (0xFF bytes, a NaN) does not.
#include <cuda_runtime.h>

#define TILE 256

__global__ void smooth3(const float* __restrict__ x, float* __restrict__ y, int n) {
  __shared__ float s[TILE + 2];
  const int t = threadIdx.x;
  const int i = blockIdx.x * TILE + t;
  if (i < n) s[t + 1] = x[i];
  const float wl = (i > 0 && i < n) ? 0.25f : 0.0f;      // the left neighbour's weight
  const float wr = (i + 1 < n) ? 0.25f : 0.0f;           // the right neighbour's weight
  if (t == 0 && i > 0) s[0] = x[i - 1];                   // the halo, only where its weight is not 0
  if (t == TILE - 1 && i + 1 < n) s[TILE + 1] = x[i + 1];  // (the last element's right neighbour, and the
  // left one of element 0, are never loaded: their slots hold what an earlier kernel left)
  __syncthreads();
  if (i < n) y[i] = wl * s[t] + 0.5f * s[t + 1] + wr * s[t + 2];
}

extern "C" void solve(const float* x, float* y, int n) {
  smooth3<<<(n + TILE - 1) / TILE, TILE>>>(x, y, n);
}
