// A broken variant: it changed solve's signature (n became a size_t).
#include <cuda_runtime.h>

__global__ void saxpy_kernel(size_t n, float a, const float* x, float* y) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" void solve(size_t n, float a, const float* x, float* y) {
  saxpy_kernel<<<(unsigned)((n + 255) / 256), 256>>>(n, a, x, y);
}
