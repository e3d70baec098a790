// Vector add: c = a + b. Memory-bound (12 bytes moved per FLOP): the negative control, where kopt should
// find little and say it is near the DRAM roofline.
#include <cuda_runtime.h>

__global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" void solve(const float* a, const float* b, float* c, int n) {
  const int threads = 256;
  vector_add<<<(n + threads - 1) / threads, threads>>>(a, b, c, n);
}
