// A prepared variant that claims a method without a guard: kopt records it as not ablatable.
#include <cuda_runtime.h>

__global__ void saxpy_kernel(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * __ldg(&x[i]) + y[i];
}

extern "C" void solve(int n, float a, const float* x, float* y) {
  saxpy_kernel<<<(n + 255) / 256, 256>>>(n, a, x, y);
}
