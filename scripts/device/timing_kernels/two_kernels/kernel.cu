// Two launches in one solve(): t = 2x + 1, then y = t * t + x. kopt's GPU time spans the first kernel's start
// to the last one's end (both queued behind the blocker); Nsight Compute's gpu__time_duration sums the two.
#include <cuda_runtime.h>

__global__ void first(const float* __restrict__ x, float* __restrict__ t, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) t[i] = 2.0f * x[i] + 1.0f;
}

__global__ void second(const float* __restrict__ x, const float* __restrict__ t, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = t[i] * t[i] + x[i];
}

extern "C" void solve(const float* x, float* t, float* y, int n) {
  const int blocks = (n + 255) / 256;
  first<<<blocks, 256>>>(x, t, n);
  second<<<blocks, 256>>>(x, t, y, n);
}
