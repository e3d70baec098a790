// #pragma unroll with literal factors (one with parentheses), one without a factor (left alone) and one in a
// comment (never rewritten): #pragma unroll 2
#include <cuda_runtime.h>

__global__ void poly(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i], acc = 0.0f;
#pragma unroll 4
  for (int k = 0; k < 16; ++k) acc = acc * v + 1.0f;
  #pragma unroll (8)
  for (int k = 0; k < 32; ++k) acc += 0.5f * k;
#pragma unroll
  for (int k = 0; k < 4; ++k) acc -= 0.25f;
  /* #pragma unroll 16 */
  y[i] = acc;
}

extern "C" void solve(const float* x, float* y, int n) {
  const int threads = n > 1 << 20 ? 512 : 256;
  poly<<<(n + threads - 1) / threads, threads>>>(x, y, n);
}
