// Two kernels in one profiled "call", with work outside the profiler range that must not appear.
#include <cuda_profiler_api.h>
#include <cstdio>
__global__ void setup_fill(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = 0.5f * i; }
__global__ void scale_kernel(const float* x, float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2.f * x[i]; }
__global__ void stencil_kernel(const float* y, float* z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1) z[i] = 0.25f * y[i - 1] + 0.5f * y[i] + 0.25f * y[i + 1];
}
int main() {
  int n = 1 << 24; float *x, *y, *z;
  cudaMalloc(&x, n * 4); cudaMalloc(&y, n * 4); cudaMalloc(&z, n * 4);
  setup_fill<<<(n + 255) / 256, 256>>>(x, n);
  cudaDeviceSynchronize();
  cudaProfilerStart();
  scale_kernel<<<(n + 255) / 256, 256>>>(x, y, n);
  stencil_kernel<<<(n + 255) / 256, 256>>>(y, z, n);
  cudaDeviceSynchronize();
  cudaProfilerStop();
  setup_fill<<<(n + 255) / 256, 256>>>(z, n);
  cudaDeviceSynchronize();
  std::printf("twok done: %s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
